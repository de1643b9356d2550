package io.distlock.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

import io.lettuce.core.cluster.SlotHash;
import org.HdrHistogram.Histogram;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;

import io.distlock.embedded.RedisClusterProcess;
import io.distlock.embedded.RedisServerProcess;

/**
 * Scenario 13 (issue 31): scenario 2's contention on a Redis Cluster of N masters (no replicas),
 * distlock against Spring Integration's {@code RedisLockRegistry}, on one key and on 8 keys spread
 * over the masters. Beside scenario 2's figures it reports what the cluster bus carried: a classic
 * {@code PUBLISH} on a cluster is forwarded to every other node whether or not anyone there
 * listens, which is the cost the issue measured, so the messages per acquisition are counted from
 * every master's {@code CLUSTER INFO}.
 *
 * <p>Workload: 4 clients, each with 2 threads on every key, i.e. "8 keys (4 × 2 threads each)"
 * read as 8 copies of the 1-key set-up: 8 threads on one key, 64 threads on 8 keys, and each key
 * contended by two threads of every client. Key {@code k}'s lock (for every library) and its
 * counter are on master {@code k mod N}. A non-atomic GET+SET of the key's Redis counter runs inside; a lost update fails the run for distlock and is reported for a
 * peer.
 *
 * <p>With {@code -Dbench.floors=true} a fair lock inside the JVM ({@link Contenders#jvmFloor()}) runs the
 * same critical sections: its hand-off p99 is what this machine's scheduler alone adds under that load.
 */
final class ClusterScenario {

	static final int CLIENTS = 4;

	/** Threads of each client on each key. */
	static final int THREADS_PER_CLIENT = 2;

	private static final int[] KEY_COUNTS = { 1, 8 };

	private ClusterScenario() {
	}

	/**
	 * One library's figures in one cluster and key count.
	 * @param opsPerSecond acquisitions per second, all keys together
	 * @param lockWait {@code lock()} call to its return, per acquisition
	 * @param handoff a holder's release start to another thread's {@code lock()} returning, same key
	 * @param fairness per-thread min/max acquisitions
	 * @param lostUpdates counter increments lost (0 unless the lock let two holders in)
	 * @param busMessages cluster-bus publish messages (classic and shard) sent, per acquisition
	 * @param publishes {@code PUBLISH} and {@code SPUBLISH} commands run, per acquisition
	 * @param redisCpuMicros Redis CPU over all masters, per acquisition
	 */
	record Result(double opsPerSecond, Histogram lockWait, Histogram handoff, double fairness, long lostUpdates,
			double busMessages, double publishes, double redisCpuMicros) {
	}

	/** A library under test and the Redis key its lock of a name lives in (whose slot places it). */
	private record Library(Contender contender, UnaryOperator<String> redisKey) {
	}

	/**
	 * Runs the scenario on a fresh cluster for each master count and appends its table, key placement,
	 * {@code RESULT} and {@code RATIO} lines to {@code report}.
	 * @param masterCounts e.g. 3 and 6
	 * @param libraries which libraries run (by {@link Contender#name()})
	 */
	static void run(List<Integer> masterCounts, Duration warmup, Duration duration, Predicate<String> libraries,
			List<String> report) throws Exception {
		Map<String, Map<String, Result>> results = new LinkedHashMap<>();
		List<String> placements = new ArrayList<>();
		boolean warmedUp = false;
		for (int masters : masterCounts) {
			try (RedisClusterProcess cluster = RedisClusterProcess.start(masters)) {
				List<Library> chosen = libraries(cluster).stream()
					.filter(library -> libraries.test(library.contender().name()))
					.toList();
				List<int[]> ranges = slotRanges(cluster);
				// Key k of every library, and its counter, on master k mod N: the 8 keys spread over the
				// masters for every library alike.
				Map<Integer, List<String>> counters = new LinkedHashMap<>();
				for (int keys : KEY_COUNTS) {
					counters.put(keys, placed(ranges, keys, "bench:counter:" + keys + ":", UnaryOperator.identity()));
				}
				placements.add(placement(cluster, ranges, "counter", counters.get(8), UnaryOperator.identity()));
				for (Library library : chosen) {
					placements.add(placement(cluster, ranges, library.contender().name(),
							placed(ranges, 8, "cluster:8:", library.redisKey()), library.redisKey()));
				}
				// The JIT's warm-up of the shared stack (Lettuce's cluster client, Spring) is paid once, in a
				// discarded pass over every library, not by whichever is measured first.
				for (Library library : warmedUp ? List.<Library>of() : chosen) {
					contended(library, cluster, placed(ranges, 1, "cluster:1:", library.redisKey()), counters.get(1),
							warmup, warmup);
					cluster.flushAll();
				}
				warmedUp = true;
				for (int keys : KEY_COUNTS) {
					for (Library library : chosen) {
						List<String> names = placed(ranges, keys, "cluster:" + keys + ":", library.redisKey());
						Result result = contended(library, cluster, names, counters.get(keys), warmup, duration);
						results.computeIfAbsent(masters + " " + keys, label -> new LinkedHashMap<>())
							.put(library.contender().name(), result);
						cluster.flushAll();
					}
				}
			}
		}
		report(report, results, placements);
	}

	private static List<Library> libraries(RedisClusterProcess cluster) {
		java.util.function.Supplier<LettuceConnectionFactory> connections = () -> connectionFactory(cluster);
		List<Library> libraries = new ArrayList<>();
		libraries.add(new Library(Contenders.distlock(connections), name -> "bench:{" + name + "}"));
		for (RedisLockType type : List.of(RedisLockType.PUB_SUB_LOCK, RedisLockType.SPIN_LOCK)) {
			String registryKey = Contenders.springRegistryKey(type);
			libraries.add(new Library(Contenders.springIntegration(connections, type), name -> registryKey + ":" + name));
		}
		if (Boolean.getBoolean("bench.floors")) {
			// Placed as distlock's keys are: only the counters' placement matters, as the lock is in the JVM.
			libraries.add(new Library(Contenders.jvmFloor(), name -> "bench:{" + name + "}"));
		}
		return libraries;
	}

	/** Lettuce's cluster client as Spring Data Redis builds it from {@code spring.data.redis.cluster.nodes}. */
	static LettuceConnectionFactory connectionFactory(RedisClusterProcess cluster) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisClusterConfiguration(cluster.nodes()));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/**
	 * Names {@code <prefix><k>:<attempt>} for {@code keys} keys whose Redis key ({@code redisKey} of
	 * the name) is on master {@code k mod N}. Found per library: one name for all libraries cannot
	 * always be placed, as CRC16 is linear, so the slots of two keys that differ only in a prefix
	 * are tied to each other.
	 */
	private static List<String> placed(List<int[]> ranges, int keys, String prefix, UnaryOperator<String> redisKey) {
		List<String> names = new ArrayList<>();
		for (int key = 0; key < keys; key++) {
			int master = key % ranges.size();
			for (int attempt = 0;; attempt++) {
				String name = prefix + key + ":" + attempt;
				if (owner(ranges, SlotHash.getSlot(redisKey.apply(name))) == master) {
					names.add(name);
					break;
				}
			}
		}
		return names;
	}

	/** Each master's slots, as {@code [from, to]} pairs, by master index; read from the cluster itself. */
	private static List<int[]> slotRanges(RedisClusterProcess cluster) {
		List<int[]> ranges = new ArrayList<>();
		for (RedisServerProcess master : cluster.masters()) {
			String myself = master.query("CLUSTER", "NODES")
				.lines()
				.filter(line -> line.contains("myself"))
				.findFirst()
				.orElseThrow(() -> new IllegalStateException("CLUSTER NODES of " + master.port() + " names no myself"));
			String[] fields = myself.trim().split(" ");
			List<Integer> bounds = new ArrayList<>();
			for (int i = 8; i < fields.length; i++) {
				String[] range = fields[i].split("-");
				bounds.add(Integer.parseInt(range[0]));
				bounds.add(Integer.parseInt(range[range.length - 1]));
			}
			ranges.add(bounds.stream().mapToInt(Integer::intValue).toArray());
		}
		return ranges;
	}

	private static int owner(List<int[]> ranges, int slot) {
		for (int master = 0; master < ranges.size(); master++) {
			int[] bounds = ranges.get(master);
			for (int i = 0; i + 1 < bounds.length; i += 2) {
				if (slot >= bounds[i] && slot <= bounds[i + 1]) {
					return master;
				}
			}
		}
		throw new IllegalStateException("No master owns slot " + slot);
	}

	private static String placement(RedisClusterProcess cluster, List<int[]> ranges, String library,
			List<String> names, UnaryOperator<String> redisKey) {
		StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%d masters %s, %s's 8 keys (key -> slot@master):",
				ranges.size(), cluster.masters().stream().map(master -> Integer.toString(master.port())).toList(), library));
		for (String name : names) {
			int slot = SlotHash.getSlot(redisKey.apply(name));
			line.append(String.format(Locale.ROOT, " %s->%d@%d", redisKey.apply(name), slot, owner(ranges, slot)));
		}
		return line.toString();
	}

	/**
	 * 2 threads of each of 4 clients on every one of {@code names}, with the GET+SET of the key's
	 * counter inside; measured as scenario 2 measures, per key.
	 */
	private static Result contended(Library library, RedisClusterProcess cluster, List<String> names,
			List<String> counterKeys, Duration warmup, Duration duration) throws Exception {
		Contender contender = library.contender();
		int keys = names.size();
		int perKey = CLIENTS * THREADS_PER_CLIENT;
		ClusterMeter meter = new ClusterMeter(cluster);
		// Threads 8k..8k+7 are key k's: two of each client. Closed side by side: each Lettuce cluster client
		// takes about a tenth of a second to shut down, and the smoke run closes 75 of them.
		Contention.Setup setup = new Contention.Setup(CLIENTS, keys * perKey, names, counterKeys, "cluster:connect",
				thread -> thread / perKey, thread -> thread % CLIENTS, () -> connectionFactory(cluster), null, true);
		Contention.Outcome outcome = Contention.run(contender, setup, warmup, duration, meter);
		long lost = 0;
		for (int key = 0; key < keys; key++) {
			long acquired = outcome.acquisitions()[key];
			lost += Math.max(acquired - outcome.inRedis()[key], acquired - outcome.local()[key]);
		}
		if (lost > 0 && contender.name().equals("distlock")) {
			throw new IllegalStateException("distlock LOST UPDATES on a " + cluster.masters().size() + "-master cluster, "
					+ keys + " keys: " + lost + " increments lost");
		}
		long total = outcome.total();
		double perAcquisition = Math.max(1, total);
		return new Result(total / (duration.toNanos() / 1e9), outcome.lockWait(), outcome.handoff(), outcome.fairness(),
				lost, meter.busMessages() / perAcquisition, meter.publishes() / perAcquisition,
				meter.redisCpuMicros() / perAcquisition);
	}

	private static void report(List<String> report, Map<String, Map<String, Result>> results, List<String> placements) {
		report.add("Scenario 13, cluster: a Redis Cluster of N masters, 4 clients with 2 threads each on every key (8 threads"
				+ " on 1 key, 64 on 8 keys); GET+SET of the key's Redis counter inside; bus msgs = cluster-bus publish"
				+ " messages sent, all masters");
		placements.forEach(report::add);
		report.add(String.format(Locale.ROOT, "%-16s %8s %5s %10s %12s %12s %14s %8s %9s %9s %9s %6s", "library", "masters",
				"keys", "acq/s", "handoff p50", "handoff p99", "lock+wait p99", "min/max", "bus msgs", "PUBLISH", "redis us",
				"lost"));
		results.forEach((label, byLibrary) -> byLibrary.forEach((name, result) -> {
			String[] parts = label.split(" ");
			report.add(String.format(Locale.ROOT, "%-16s %8s %5s %10.0f %9d us %9d us %11d us %8.2f %9.2f %9.2f %9.1f %6d",
					name, parts[0], parts[1], result.opsPerSecond(), micros(result.handoff(), 50), micros(result.handoff(), 99),
					micros(result.lockWait(), 99), result.fairness(), result.busMessages(), result.publishes(),
					result.redisCpuMicros(), result.lostUpdates()));
		}));
		report.add("");
		results.forEach((label, byLibrary) -> byLibrary.forEach((name, result) -> {
			String[] parts = label.split(" ");
			report.add(String.format(Locale.ROOT,
					"RESULT scenario=cluster lib=%s masters=%s keys=%s acqPerSec=%.0f handoffP50us=%d handoffP99us=%d lockWaitP99us=%d fairness=%.2f busMsgsPerAcq=%.2f publishesPerAcq=%.2f redisCpuUs=%.1f lostUpdates=%d",
					name, parts[0], parts[1], result.opsPerSecond(), micros(result.handoff(), 50), micros(result.handoff(), 99),
					micros(result.lockWait(), 99), result.fairness(), result.busMessages(), result.publishes(),
					result.redisCpuMicros(), result.lostUpdates()));
		}));
		results.forEach((label, byLibrary) -> {
			Result ours = byLibrary.get("distlock");
			String[] parts = label.split(" ");
			byLibrary.forEach((name, peer) -> {
				if (ours != null && !name.equals("distlock")) {
					report.add(String.format(Locale.ROOT,
							"RATIO scenario=cluster masters=%s keys=%s distlock/%s throughput=%.2f handoffP99=%.2f busMsgsPerAcq=%s",
							parts[0], parts[1], name, ours.opsPerSecond() / Math.max(1e-9, peer.opsPerSecond()),
							(double) ours.handoff().getValueAtPercentile(99)
									/ Math.max(1, peer.handoff().getValueAtPercentile(99)),
							(peer.busMessages() > 0)
									? String.format(Locale.ROOT, "%.2f", ours.busMessages() / peer.busMessages())
									: "n/a"));
				}
			});
		});
		report.add("");
	}

	private static long micros(Histogram histogram, double percentile) {
		return histogram.getValueAtPercentile(percentile) / 1000;
	}

	/**
	 * Every master's cluster-bus publish messages, {@code PUBLISH}/{@code SPUBLISH} commands and CPU
	 * over the measured window.
	 */
	private static final class ClusterMeter implements LockBenchmarks.Window {

		private final RedisClusterProcess cluster;

		private double[] start;

		private double[] end;

		ClusterMeter(RedisClusterProcess cluster) {
			this.cluster = cluster;
		}

		@Override
		public void start() {
			this.start = snapshot();
		}

		@Override
		public void stop() {
			this.end = snapshot();
		}

		double busMessages() {
			return this.end[0] - this.start[0];
		}

		double publishes() {
			return this.end[1] - this.start[1];
		}

		double redisCpuMicros() {
			return (this.end[2] - this.start[2]) * 1e6;
		}

		private double[] snapshot() {
			double bus = 0;
			double publishes = 0;
			double cpu = 0;
			for (RedisServerProcess master : this.cluster.masters()) {
				Map<String, String> clusterInfo = fields(master.query("CLUSTER", "INFO"));
				// Redis lists a message type only once one was sent; the shard type exists from Redis 7 on.
				bus += Double.parseDouble(clusterInfo.getOrDefault("cluster_stats_messages_publish_sent", "0"))
						+ Double.parseDouble(clusterInfo.getOrDefault("cluster_stats_messages_publishshard_sent", "0"));
				Map<String, String> info = fields(master.query("INFO", "everything"));
				publishes += calls(info.get("cmdstat_publish")) + calls(info.get("cmdstat_spublish"));
				cpu += CostMeter.number(info, "used_cpu_sys") + CostMeter.number(info, "used_cpu_user");
			}
			return new double[] { bus, publishes, cpu };
		}

		/** The {@code calls=} of a {@code cmdstat_} line (commands run inside scripts included); 0 if none ran. */
		private static long calls(String commandStats) {
			if (commandStats == null) {
				return 0;
			}
			int calls = commandStats.indexOf("calls=");
			return Long.parseLong(commandStats.substring(calls + 6, commandStats.indexOf(',', calls)));
		}

		private static Map<String, String> fields(String text) {
			Map<String, String> fields = new java.util.HashMap<>();
			for (String line : text.split("\r?\n")) {
				int colon = line.indexOf(':');
				if (colon > 0 && !line.startsWith("#")) {
					fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
				}
			}
			return fields;
		}

	}

}
