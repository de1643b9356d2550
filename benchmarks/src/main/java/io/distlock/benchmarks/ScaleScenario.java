package io.distlock.benchmarks;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import io.distlock.benchmarks.LockBenchmarks.Result;
import io.distlock.embedded.RedisServerProcess;

/**
 * Scenario 14, scale: how each library's cost and waiting grow with the instances contending for
 * one key (1, 4, 16 and 64 instances of 4 threads by default), and with 10,000 virtual threads
 * waiting on 10 keys over 4 instances (Java 21+). Every run keeps scenario 2's Redis counter per
 * key, so a lost update fails the run.
 *
 * <p>What a user would want flat is Redis CPU per acquisition: a lock whose server cost grows with
 * its waiters gets slower exactly when it is needed most. Lock-plus-wait p99 must grow, since every
 * waiter waits for the ones before it; a fair queue makes it grow with the queue's length and no
 * faster, which the {@code growth} line sets side by side.
 *
 * <p>Properties (passed through the benchmark module's pom): {@code bench.scale.instances}
 * (default {@code 1,4,16,64}; the pom's default, for CI's smoke run, is {@code 1,4}),
 * {@code bench.scale.threads} per instance (4) and {@code bench.scale.virtual} virtual threads (10000;
 * 0 for none).
 */
final class ScaleScenario {

	private static final int VIRTUAL_INSTANCES = 4;

	private static final int VIRTUAL_KEYS = 10;

	private ScaleScenario() {
	}

	/** The results by instances (platform threads), and of the virtual-thread run if there was one. */
	record Results(int threadsPerInstance, Map<Integer, Map<String, Result>> byInstances, int virtualThreads,
			Map<String, Result> virtual) {
	}

	static Results run(List<Contender> contenders, RedisServerProcess redis, Duration warmup, Duration duration)
			throws Exception {
		int threadsPerInstance = Integer.getInteger("bench.scale.threads", 4);
		Map<Integer, Map<String, Result>> byInstances = new TreeMap<>();
		for (String listed : System.getProperty("bench.scale.instances", "1,4,16,64").split(",")) {
			int instances = Integer.parseInt(listed.trim());
			for (Contender contender : contenders) {
				Result result = LockBenchmarks.contended(contender, redis, warmup, duration, instances,
						instances * threadsPerInstance, 1, new CostMeter(redis));
				byInstances.computeIfAbsent(instances, count -> new LinkedHashMap<>()).put(contender.name(), result);
				redis.command("FLUSHALL");
			}
		}
		int virtualThreads = Integer.getInteger("bench.scale.virtual", 10_000);
		Map<String, Result> virtual = new LinkedHashMap<>();
		if (virtualThreads > 0 && VirtualThreads.available()) {
			for (Contender contender : contenders) {
				virtual.put(contender.name(), LockBenchmarks.onVirtualThreads(() -> LockBenchmarks.contended(contender, redis,
						warmup, duration, VIRTUAL_INSTANCES, virtualThreads, VIRTUAL_KEYS, new CostMeter(redis))));
				redis.command("FLUSHALL");
			}
		}
		return new Results(threadsPerInstance, byInstances, virtualThreads, virtual);
	}

	/** The table, {@code RESULT} and {@code RATIO} lines, and the charts. */
	static void report(List<String> report, Results results) {
		report.add("Scenario 14, scale: one key, " + results.threadsPerInstance()
				+ " threads per instance (and virtual threads on " + VIRTUAL_KEYS + " keys); GET+SET of a Redis counter inside");
		report.add(String.format(Locale.ROOT, "%-14s %10s %8s %5s %10s %14s %10s %10s %8s", "library", "instances",
				"threads", "keys", "acq/s", "lock+wait p99", "redis us", "commands", "min/max"));
		results.byInstances()
			.forEach((instances, byLibrary) -> byLibrary.forEach((name, result) -> report.add(row(name, instances,
					Integer.toString(instances * results.threadsPerInstance()), 1, result))));
		results.virtual()
			.forEach((name, result) -> report
				.add(row(name, VIRTUAL_INSTANCES, results.virtualThreads() + "v", VIRTUAL_KEYS, result)));
		results.byInstances()
			.forEach((instances, byLibrary) -> byLibrary.forEach((name, result) -> report.add(resultLine(name, instances,
					Integer.toString(instances * results.threadsPerInstance()), 1, result))));
		results.virtual()
			.forEach((name, result) -> report.add(resultLine(name, VIRTUAL_INSTANCES,
					results.virtualThreads() + "-virtual", VIRTUAL_KEYS, result)));
		results.byInstances().forEach((instances, byLibrary) -> ratios(report, "instances=" + instances, byLibrary));
		if (!results.virtual().isEmpty()) {
			ratios(report, "virtual=" + results.virtualThreads(), results.virtual());
		}
		growth(report, results);
		Charts.scale(results.byInstances(), results.threadsPerInstance());
	}

	private static String row(String name, int instances, String threads, int keys, Result result) {
		return String.format(Locale.ROOT, "%-14s %10d %8s %5d %10.0f %11d us %10.1f %10.1f %8.2f", name, instances, threads,
				keys, result.opsPerSecond(), LockBenchmarks.micros(result.pair(), 99), result.costs().redisCpuMicros(),
				result.costs().commands(), result.fairness());
	}

	private static String resultLine(String name, int instances, String threads, int keys, Result result) {
		return String.format(Locale.ROOT,
				"RESULT scenario=scale lib=%s instances=%d threads=%s keys=%d acqPerSec=%.0f lockWaitP50us=%d lockWaitP99us=%d "
						+ "handoffP99us=%d redisCpuUs=%.1f commands=%.1f fairness=%.2f",
				name, instances, threads, keys, result.opsPerSecond(), LockBenchmarks.micros(result.pair(), 50),
				LockBenchmarks.micros(result.pair(), 99), LockBenchmarks.micros(result.handoff(), 99),
				result.costs().redisCpuMicros(), result.costs().commands(), result.fairness());
	}

	/** distlock against each peer at one size: throughput, lock-plus-wait p99 and Redis CPU per acquisition. */
	private static void ratios(List<String> report, String size, Map<String, Result> byLibrary) {
		Result ours = byLibrary.get("distlock");
		if (ours == null) {
			return;
		}
		byLibrary.forEach((name, peer) -> {
			if (!name.equals("distlock")) {
				report.add(String.format(Locale.ROOT,
						"RATIO scenario=scale %s distlock/%s throughput=%.2f lockWaitP99=%.2f redisCpu=%.2f", size, name,
						ours.opsPerSecond() / Math.max(1e-9, peer.opsPerSecond()),
						(double) LockBenchmarks.micros(ours.pair(), 99) / Math.max(1, LockBenchmarks.micros(peer.pair(), 99)),
						ours.costs().redisCpuMicros() / Math.max(1e-9, peer.costs().redisCpuMicros())));
			}
		});
	}

	/**
	 * Per library, from the fewest instances to the most: how Redis CPU per acquisition and
	 * lock-plus-wait p99 grew, beside how the number of waiting threads (the queue's length) grew.
	 */
	private static void growth(List<String> report, Results results) {
		if (results.byInstances().size() < 2) {
			return;
		}
		int fewest = ((TreeMap<Integer, Map<String, Result>>) results.byInstances()).firstKey();
		int most = ((TreeMap<Integer, Map<String, Result>>) results.byInstances()).lastKey();
		Map<String, Result> first = results.byInstances().get(fewest);
		Map<String, Result> last = results.byInstances().get(most);
		first.forEach((name, from) -> {
			Result to = last.get(name);
			if (to == null) {
				return;
			}
			report.add(String.format(Locale.ROOT,
					"RATIO scenario=scale growth lib=%s instances=%d/%d queue=%.1f redisCpu=%.2f lockWaitP99=%.2f throughput=%.2f",
					name, most, fewest, (double) most / fewest,
					to.costs().redisCpuMicros() / Math.max(1e-9, from.costs().redisCpuMicros()),
					(double) LockBenchmarks.micros(to.pair(), 99) / Math.max(1, LockBenchmarks.micros(from.pair(), 99)),
					to.opsPerSecond() / Math.max(1e-9, from.opsPerSecond())));
		});
	}

}
