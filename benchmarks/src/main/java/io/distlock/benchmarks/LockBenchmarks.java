package io.distlock.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.HdrHistogram.Histogram;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.embedded.RedisServerProcess;

/**
 * Runs distlock and its peers side by side in one JVM against one local {@code redis-server}, and
 * prints a table, {@code RESULT} lines and distlock's ratios to each peer.
 *
 * <p>Arguments: measured duration and warm-up per scenario and library (ISO-8601, e.g. PT10S PT3S),
 * how many distinct names the memory scenario takes (default a million), and which scenarios run
 * ({@code all}, or a comma-separated subset of uncontended, contended, redlock, annotation, zookeeper, memory; the
 * reactive, waiters, names, clients, handoff-floor and cluster scenarios run only when named; read-mostly,
 * semaphore and scale ({@link ScaleScenario}) run with {@code all}). {@code -Dbench.cluster.masters=3,6}
 * sets the cluster scenario's cluster sizes.
 * {@code -Dbench.floors=true} adds the floor-script lock, a reference rather than a peer, to the libraries.
 * {@code -Dbench.uncontended.rounds=5} sets how many rounds scenario 1 runs, {@code -Dbench.zookeeper.rounds} scenario 7
 * ({@link MeasuredRounds}; 3 by default).
 * A run fails (non-zero) if a contended run loses an update: speed without exclusion is worthless.
 */
public final class LockBenchmarks {

	private static final Logger log = LoggerFactory.getLogger(LockBenchmarks.class);

	private LockBenchmarks() {
	}

	public static void main(String[] args) {
		// Clients of some libraries leave non-daemon threads behind; the run's outcome is the exit code.
		try {
			run(args);
		}
		catch (Throwable ex) {
			ex.printStackTrace();
			System.exit(1);
		}
		System.exit(0);
	}

	private static void run(String[] args) throws Exception {
		Duration duration = Duration.parse(args.length > 0 ? args[0] : "PT10S");
		Duration warmup = Duration.parse(args.length > 1 ? args[1] : "PT3S");
		int names = Integer.parseInt(args.length > 2 ? args[2] : "1000000");
		java.util.Set<String> scenarios = java.util.Set.of((args.length > 3 ? args[3] : "all").split(","));
		java.util.function.Predicate<String> selected = scenario -> scenarios.contains("all") || scenarios.contains(scenario);
		List<String> report = new ArrayList<>();
		Map<String, Result> uncontended = new LinkedHashMap<>();
		Map<String, MeasuredRounds.Rounds> uncontendedRounds = new LinkedHashMap<>();
		Map<String, Result> contended = new LinkedHashMap<>();
		Map<String, Result> redlock = new LinkedHashMap<>();
		Map<String, Result> annotation = new LinkedHashMap<>();
		Map<String, MemoryScenario.Result> memory = new LinkedHashMap<>();
		Map<String, ReactiveScenario.Result> reactive = new LinkedHashMap<>();
		Map<String, Result> zkUncontended = new LinkedHashMap<>();
		Map<Integer, Map<String, Result>> byClients = new java.util.TreeMap<>();
		Map<Integer, Map<String, Result>> byNames = new java.util.TreeMap<>();
		Map<String, Map<String, Result>> byWaiters = new LinkedHashMap<>();
		Map<String, Result> zkContended = new LinkedHashMap<>();
		Map<String, Result> zkEnsemble = new LinkedHashMap<>();
		List<String> zkRatios = new ArrayList<>();
		List<String> zkCosts = new ArrayList<>();
		Histogram handOffFloor = null;
		Map<String, SharedKindsScenario.Result> readMostly = new LinkedHashMap<>();
		Map<String, SharedKindsScenario.Result> semaphores = new LinkedHashMap<>();
		ScaleScenario.Results scale = null;
		try (RedisServerProcess redis = RedisServerProcess.start()) {
			// -Dbench.only=distlock,naive narrows a run to some libraries (e.g. under a profiler).
			String only = System.getProperty("bench.only", "");
			List<Contender> contenders = Contenders.all(redis.host(), redis.port())
				.stream()
				.filter(contender -> only.isEmpty() || List.of(only.split(",")).contains(contender.name()))
				.toList();
			// Whoever runs first would pay the JVM's warm-up of the shared stack (Lettuce, Spring,
			// Netty) alone; one discarded pass over every library levels that.
			for (Contender contender : contenders) {
				uncontended(contender, 4, warmup, warmup);
				redis.command("FLUSHALL");
			}
			if (selected.test("uncontended")) {
				uncontendedRounds = MeasuredRounds.run(contenders, redis, warmup, duration, MeasuredRounds.Options.defaults());
				uncontendedRounds.forEach((name, rounds) -> uncontended.put(name, rounds.summary()));
			}
			for (Contender contender : contenders) {
				if (selected.test("contended")) {
					contended.put(contender.name(), contended(contender, redis, warmup, duration));
					redis.command("FLUSHALL");
				}
			}
			// Opt-in: the shortest a hand-off through Redis pub/sub can be here (HandOffFloor).
			if (scenarios.contains("handoff-floor")) {
				handOffFloor = HandOffFloor.run(redis.host(), redis.port(), warmup, duration);
			}
			for (int pass = 0; pass < (selected.test("annotation") ? 2 : 0); pass++) {
				for (AnnotationContenders.Named path : AnnotationContenders.all(redis.host(), redis.port())) {
					Result result = annotated(path, warmup, (pass == 0) ? warmup : duration);
					if (pass == 1) {
						annotation.put(path.name(), result);
					}
					redis.command("FLUSHALL");
				}
			}
			// Opt-in: one key, 4 clients, 8 to 1,024 platform threads, and 10,000 virtual threads where
			// the JVM has them (run the harness on Java 21+).
			if (scenarios.contains("waiters")) {
				for (int threads : new int[] { 8, 64, 256, 1024 }) {
					for (Contender contender : contenders) {
						byWaiters.computeIfAbsent(Integer.toString(threads), count -> new LinkedHashMap<>())
							.put(contender.name(), contended(contender, redis, warmup, duration, 4, threads, new CostMeter(redis)));
						redis.command("FLUSHALL");
					}
				}
				if (VirtualThreads.available()) {
					virtualThreads = true;
					try {
						for (Contender contender : contenders) {
							byWaiters.computeIfAbsent("10000 virtual", count -> new LinkedHashMap<>())
								.put(contender.name(), contended(contender, redis, warmup, duration, 4, 10_000, new CostMeter(redis)));
							redis.command("FLUSHALL");
						}
					}
					finally {
						virtualThreads = false;
					}
				}
			}
			// Opt-in: 4 threads, each locking its own share of 10, 10,000 or 1,000,000 names at random.
			if (scenarios.contains("names")) {
				// A first pass warms every library up, so that the first one measured is not the one the JIT
				// has seen least.
				for (Contender contender : contenders) {
					names(contender, 10, warmup, warmup, null);
					redis.command("FLUSHALL");
				}
				for (int nameCount : new int[] { 10, 10_000, 1_000_000 }) {
					for (Contender contender : contenders) {
						byNames.computeIfAbsent(nameCount, count -> new LinkedHashMap<>())
							.put(contender.name(), names(contender, nameCount, warmup, duration, new CostMeter(redis)));
						redis.command("FLUSHALL");
					}
				}
			}
			if (selected.test("scale")) {
				scale = ScaleScenario.run(contenders, redis, warmup, duration);
			}
			// Opt-in: named explicitly, not part of "all". One key, 2 threads per client, 1 to 64 clients
			// (-Dbench.clients=1,4,16,64 by default).
			if (scenarios.contains("clients")) {
				String clientCounts = System.getProperty("bench.clients", "");
				for (String listed : (clientCounts.isBlank() ? "1,4,16,64" : clientCounts).split(",")) {
					int clientCount = Integer.parseInt(listed.trim());
					for (Contender contender : contenders) {
						Result result = contended(contender, redis, warmup, duration, clientCount, 2 * clientCount,
								new CostMeter(redis));
						byClients.computeIfAbsent(clientCount, count -> new LinkedHashMap<>()).put(contender.name(), result);
						redis.command("FLUSHALL");
					}
				}
			}
			if (scenarios.contains("reactive")) {
				reactive.put("distlock", ReactiveScenario.distlock(redis.host(), redis.port(), warmup, duration));
				redis.command("FLUSHALL");
				reactive.put("redisson", ReactiveScenario.redisson(redis.host(), redis.port(), warmup, duration));
				redis.command("FLUSHALL");
			}
			if (selected.test("zookeeper")) {
				zooKeeper(redis, warmup, duration, zkUncontended, zkContended, zkEnsemble, zkRatios, zkCosts);
			}
			if (selected.test("read-mostly") || selected.test("semaphore")) {
				sharedKinds(redis, warmup, duration, selected, readMostly, semaphores);
			}
			for (Contender contender : contenders) {
				if (selected.test("memory")) {
					memory.put(contender.name(), MemoryScenario.run(contender, redis, names));
					redis.command("FLUSHALL");
				}
			}
		}
		// Opt-in: scenario 13 on Redis Clusters of its own (-Dbench.cluster.masters=3,6 by default).
		List<String> clusterReport = new ArrayList<>();
		if (scenarios.contains("cluster")) {
			String only = System.getProperty("bench.only", "");
			List<Integer> masterCounts = java.util.Arrays.stream(System.getProperty("bench.cluster.masters", "3,6").split(","))
				.map(String::trim)
				.map(Integer::valueOf)
				.toList();
			ClusterScenario.run(masterCounts, warmup, duration,
					name -> only.isEmpty() || List.of(only.split(",")).contains(name), clusterReport);
		}
		// Opt-in: scenario 15, the server's instructions per uncontended pair under callgrind.
		List<String> instructionsReport = new ArrayList<>();
		if (scenarios.contains("instructions")) {
			String only = System.getProperty("bench.only", "");
			InstructionsScenario.run(name -> only.isEmpty() || List.of(only.split(",")).contains(name), instructionsReport);
		}
		List<RedisServerProcess> masters = new ArrayList<>();
		try {
			for (int i = 0; i < (selected.test("redlock") ? 5 : 0); i++) {
				masters.add(RedisServerProcess.start());
			}
			List<Contender> contenders = masters.isEmpty() ? List.of() : RedlockContenders.all(masters);
			for (Contender contender : contenders) {
				uncontended(contender, 2, warmup, warmup);
			}
			for (Contender contender : contenders) {
				redlock.put(contender.name(), uncontended(contender, 2, warmup, duration));
			}
		}
		finally {
			masters.forEach(RedisServerProcess::close);
		}

		if (!reactive.isEmpty()) {
			report.add("Scenario 6, reactive: " + ReactiveScenario.SUBSCRIPTIONS + " concurrent Mono subscriptions on one key over "
					+ ReactiveScenario.CLIENTS + " clients, lock + short section + unlock, repeated");
			reactive.forEach((name, result) -> report.add(String.format(Locale.ROOT,
					"RESULT scenario=reactive lib=%s acqPerSec=%.0f handoffP50us=%d handoffP99us=%d threadsAdded=%d", name,
					result.acquisitionsPerSecond(), micros(result.handoff(), 50), micros(result.handoff(), 99),
					result.threadsAdded())));
			if (reactive.containsKey("distlock") && reactive.containsKey("redisson")) {
				report.add(String.format(Locale.ROOT, "RATIO scenario=reactive distlock/redisson throughput=%.2f handoffP99=%.2f",
						reactive.get("distlock").acquisitionsPerSecond() / reactive.get("redisson").acquisitionsPerSecond(),
						(double) micros(reactive.get("distlock").handoff(), 99)
								/ Math.max(1, micros(reactive.get("redisson").handoff(), 99))));
			}
		}
		report.add("Scenario 1, uncontended: 4 threads, a key each, lock()+unlock() pairs; one client; each library warmed"
				+ " on its own client before each window, the order rotated each round; pairs/s the median round's, latencies"
				+ " over all rounds");
		pairTable(report, uncontended);
		if (!uncontendedRounds.isEmpty()) {
			report.add("pairs/s by round:");
			report.addAll(MeasuredRounds.perRound(uncontendedRounds));
			report.add("");
		}
		costTable(report, "uncontended", "pair", uncontended);
		if (!byClients.isEmpty()) {
			report.add("Scenario 8, clients: one key, 2 threads per client; per acquisition what Redis sent (replies and pub/sub)");
			report.add(String.format(Locale.ROOT, "%-14s %8s %10s %12s %12s %10s %12s", "library", "clients", "acq/s",
					"connections", "reply B/acq", "redis us", "handoff p50"));
			byClients.forEach((clientCount, results) -> results.forEach((name, result) -> {
				report.add(String.format(Locale.ROOT, "%-14s %8d %10.0f %12d %12.0f %10.1f %9d us", name, clientCount,
						result.opsPerSecond(), result.connections(), result.costs().replyBytes(), result.costs().redisCpuMicros(),
						micros(result.handoff(), 50)));
			}));
			byClients.forEach((clientCount, results) -> results.forEach((name, result) -> report.add(String.format(Locale.ROOT,
					"RESULT scenario=clients lib=%s clients=%d acqPerSec=%.0f connections=%d replyBytesPerAcq=%.0f redisCpuUs=%.1f commands=%.1f handoffP50us=%d fairness=%.2f",
					name, clientCount, result.opsPerSecond(), result.connections(), result.costs().replyBytes(),
					result.costs().redisCpuMicros(), result.costs().commands(), micros(result.handoff(), 50), result.fairness()))));
			Charts.clients(byClients);
		}
		Charts.costs(uncontended);
		if (scale != null) {
			ScaleScenario.report(report, scale);
		}
		if (!byNames.isEmpty()) {
			report.add("Scenario 10, names: 4 threads, each its own share of N names, a lock handle per pair, one client");
			report.add(String.format(Locale.ROOT, "%-14s %10s %10s %10s %10s %10s %12s", "library", "names", "pairs/s",
					"p50 us", "p99 us", "redis us", "alloc B"));
			byNames.forEach((nameCount, results) -> results.forEach((name, result) -> report.add(String.format(Locale.ROOT,
					"%-14s %10d %10.0f %10d %10d %10.1f %12.0f", name, nameCount, result.opsPerSecond(), micros(result.pair(), 50),
					micros(result.pair(), 99), result.costs().redisCpuMicros(), result.costs().allocatedBytes()))));
			byNames.forEach((nameCount, results) -> results.forEach((name, result) -> report.add(String.format(Locale.ROOT,
					"RESULT scenario=names lib=%s names=%d pairsPerSec=%.0f p99us=%d redisCpuUs=%.1f allocBytes=%.0f", name,
					nameCount, result.opsPerSecond(), micros(result.pair(), 99), result.costs().redisCpuMicros(),
					result.costs().allocatedBytes()))));
			Charts.names(byNames);
		}
		if (!byWaiters.isEmpty()) {
			report.add("Scenario 9, waiters: one key, 4 clients, N threads; per acquisition what Redis did and sent");
			report.add(String.format(Locale.ROOT, "%-14s %14s %10s %12s %12s %14s %10s %12s %8s", "library", "threads",
					"acq/s", "handoff p50", "handoff p99", "lock+wait p99", "redis us", "reply B/acq", "min/max"));
			byWaiters.forEach((threads, results) -> results.forEach((name, result) -> report.add(String.format(Locale.ROOT,
					"%-14s %14s %10.0f %9d us %9d us %11d us %10.1f %12.0f %8.2f", name, threads, result.opsPerSecond(),
					micros(result.handoff(), 50), micros(result.handoff(), 99), micros(result.pair(), 99),
					result.costs().redisCpuMicros(), result.costs().replyBytes(), result.fairness()))));
			byWaiters.forEach((threads, results) -> results.forEach((name, result) -> report.add(String.format(Locale.ROOT,
					"RESULT scenario=waiters lib=%s threads=%s acqPerSec=%.0f handoffP50us=%d handoffP99us=%d lockWaitP99us=%d redisCpuUs=%.1f replyBytesPerAcq=%.0f fairness=%.2f",
					name, threads.replace(' ', '-'), result.opsPerSecond(), micros(result.handoff(), 50),
					micros(result.handoff(), 99), micros(result.pair(), 99), result.costs().redisCpuMicros(),
					result.costs().replyBytes(), result.fairness()))));
			Charts.waiters(byWaiters);
		}
		report.add("Scenario 2, contended: 8 threads on one key, 4 independent clients; GET+SET of a Redis counter inside");
		contendedTable(report, contended);
		if (handOffFloor != null) {
			handOffFloorLines(report, handOffFloor, contended);
		}
		report.add("Scenario 3, Redlock over 5 independent masters: 2 threads, a key each, lock()+unlock() pairs");
		pairTable(report, redlock);
		report.add("Scenario 4, distlock through @DistributedLock(key = \"#key\") vs getLock(key).tryLock(3s)/unlock(); 4 threads");
		pairTable(report, annotation);
		if (!zkUncontended.isEmpty()) {
			report.add("Scenario 7, ZooKeeper vs Curator's InterProcessMutex, each client a session of its own; each in rounds"
					+ " as scenario 1 (pairs/s the median round's, latencies over all rounds)");
			report.add("7a, one server, uncontended: 4 threads, a key each, lock()+unlock() pairs; one client");
			pairTable(report, zkUncontended);
			report.add("7b, one server, contended: 8 threads on one key, 4 clients; GET+SET of a Redis counter inside");
			contendedTable(report, zkContended);
			report.add("7c, a 3-server ensemble: 2 threads, a key each, lock()+unlock() pairs");
			pairTable(report, zkEnsemble);
			report.add("7a and 7b, what each window asked of the server (requests received, transactions applied), by round:");
			report.addAll(zkCosts);
			report.add("");
		}
		sharedKindsReport(report, readMostly, semaphores);
		report.add("Scenario 5, memory after " + names + " distinct names taken and released once each (8 threads, client open)");
		report.add(String.format(Locale.ROOT, "%-14s %12s %14s %10s %10s", "library", "heap +KiB", "redis +KiB", "keys left",
				"names/s"));
		memory.forEach((name, result) -> report.add(String.format(Locale.ROOT, "%-14s %12d %14d %10d %10.0f", name,
				result.heapGrowthBytes() / 1024, result.redisGrowthBytes() / 1024, result.keysLeft(), result.namesPerSecond())));
		report.add("");
		results(report, "uncontended", uncontended);
		contendedResults(report, "contended", contended);
		results(report, "zookeeper-uncontended", zkUncontended);
		contendedResults(report, "zookeeper-contended", zkContended);
		results(report, "zookeeper-ensemble", zkEnsemble);
		results(report, "redlock", redlock);
		results(report, "annotation", annotation);
		memory.forEach((name, result) -> report.add(String.format(Locale.ROOT,
				"RESULT scenario=memory lib=%s names=%d heapGrowthBytes=%d redisGrowthBytes=%d keysLeft=%d", name, names,
				result.heapGrowthBytes(), result.redisGrowthBytes(), result.keysLeft())));
		report.add("");
		// The median of the per-round ratios, with their spread: rounds run minutes apart on a shared machine.
		report.addAll(MeasuredRounds.ratios(uncontendedRounds, "distlock"));
		ratios(report, "contended", contended, "distlock");
		ratios(report, "redlock", redlock, "distlock");
		ratios(report, "annotation", annotation, "annotation");
		report.addAll(zkRatios);
		report.addAll(clusterReport);
		report.addAll(instructionsReport);
		report.forEach(System.out::println);
	}

	/**
	 * Scenario 7: distlock's ZooKeeper lock against Curator's {@code InterProcessMutex}, on one real
	 * ZooKeeper server and on a 3-server ensemble (both started here, in this JVM, on free ports).
	 * The contended run keeps scenario 2's Redis counter, so a lost update is caught the same way.
	 */
	private static void zooKeeper(RedisServerProcess redis, Duration warmup, Duration duration,
			Map<String, Result> uncontended, Map<String, Result> contended, Map<String, Result> ensemble,
			List<String> ratios, List<String> costs) throws Exception {
		// Rounds as in scenario 1: on this machine a single window per library is ±30%. (Each window below
		// sets its own threads.)
		MeasuredRounds.Options rounds = MeasuredRounds.Options.fromProperty("bench.zookeeper.rounds", 4);
		try (TestingServer server = new TestingServer(ZooKeeperContenders.spec(-1), true)) {
			List<Contender> contenders = ZooKeeperContenders.all(server.getConnectString());
			for (Contender contender : contenders) {
				uncontended(contender, 4, warmup, warmup);
			}
			Map<String, MeasuredRounds.Rounds> pairs = MeasuredRounds.run(contenders, rounds, contender -> {
				ZooKeeperMeter meter = new ZooKeeperMeter();
				Result result = uncontended(contender, 4, warmup, duration, meter);
				costs.add(meter.line("zookeeper-uncontended", contender.name(), "pair", result, duration));
				return result;
			});
			Map<String, MeasuredRounds.Rounds> handOffs = MeasuredRounds.run(contenders, rounds, contender -> {
				ZooKeeperMeter meter = new ZooKeeperMeter();
				Result result = contended(contender, redis, warmup, duration, 4, 8, meter);
				costs.add(meter.line("zookeeper-contended", contender.name(), "acquisition", result, duration));
				redis.command("FLUSHALL");
				return result;
			});
			pairs.forEach((name, measured) -> uncontended.put(name, measured.summary()));
			handOffs.forEach((name, measured) -> contended.put(name, measured.summary()));
			ratios.addAll(MeasuredRounds.ratios(pairs, "distlock", "zookeeper-uncontended"));
			ratios.addAll(MeasuredRounds.ratios(handOffs, "distlock", "zookeeper-contended"));
			ratios.addAll(MeasuredRounds.ratios(pairs, "distlock-line", "zookeeper-uncontended"));
			ratios.addAll(MeasuredRounds.ratios(handOffs, "distlock-line", "zookeeper-contended"));
		}
		try (TestingCluster cluster = new TestingCluster(ZooKeeperContenders.ensemble())) {
			cluster.start();
			List<Contender> contenders = ZooKeeperContenders.all(cluster.getConnectString());
			for (Contender contender : contenders) {
				uncontended(contender, 2, warmup, warmup);
			}
			Map<String, MeasuredRounds.Rounds> pairs = MeasuredRounds.run(contenders, rounds,
					contender -> uncontended(contender, 2, warmup, duration));
			pairs.forEach((name, measured) -> ensemble.put(name, measured.summary()));
			ratios.addAll(MeasuredRounds.ratios(pairs, "distlock", "zookeeper-ensemble"));
			ratios.addAll(MeasuredRounds.ratios(pairs, "distlock-line", "zookeeper-ensemble"));
		}
	}

	private static void contendedTable(List<String> report, Map<String, Result> results) {
		report.add(String.format(Locale.ROOT, "%-14s %10s %12s %12s %14s %12s", "library", "acq/s", "handoff p50", "handoff p99",
				"lock+wait p99", "min/max"));
		results.forEach((name, result) -> report.add(String.format(Locale.ROOT, "%-14s %10.0f %9d us %9d us %11d us %12.2f", name,
				result.opsPerSecond, micros(result.handoff, 50), micros(result.handoff, 99), micros(result.pair, 99),
				result.fairness)));
		report.add("");
	}

	/**
	 * Scenarios 11 and 12: the read-write lock against Redisson's {@code RReadWriteLock} and Curator's
	 * {@code InterProcessReadWriteLock}, the semaphore against Redisson's {@code RPermitExpirableSemaphore}
	 * and Curator's {@code InterProcessSemaphoreV2}. A reader inside with a writer, or more holders
	 * than permits, fails the run for distlock (and is reported for the others).
	 */
	private static void sharedKinds(RedisServerProcess redis, Duration warmup, Duration duration,
			java.util.function.Predicate<String> selected, Map<String, SharedKindsScenario.Result> readMostly,
			Map<String, SharedKindsScenario.Result> semaphores) throws Exception {
		try (TestingServer zooKeeper = new TestingServer(ZooKeeperContenders.spec(-1), true)) {
			for (SharedKindsScenario.Library library : SharedKindsScenario.libraries(redis.host(), redis.port(),
					zooKeeper.getConnectString())) {
				if (selected.test("read-mostly")) {
					readMostly.put(library.name(), SharedKindsScenario.readMostly(library, warmup, duration));
					redis.command("FLUSHALL");
				}
				if (selected.test("semaphore")) {
					semaphores.put(library.name(), SharedKindsScenario.semaphore(library, warmup, duration));
					redis.command("FLUSHALL");
				}
			}
		}
		for (Map<String, SharedKindsScenario.Result> results : List.of(readMostly, semaphores)) {
			SharedKindsScenario.Result ours = results.get("distlock");
			if (ours != null && ours.violations() > 0) {
				throw new IllegalStateException("distlock let holders in together " + ours.violations() + " times");
			}
		}
	}

	private static void sharedKindsReport(List<String> report, Map<String, SharedKindsScenario.Result> readMostly,
			Map<String, SharedKindsScenario.Result> semaphores) {
		if (!readMostly.isEmpty()) {
			report.add("Scenario 11, read-mostly: " + SharedKindsScenario.READERS + " readers and "
					+ SharedKindsScenario.WRITERS + " writer (pausing " + SharedKindsScenario.WRITER_PAUSE_MILLIS
					+ " ms between writes) over " + SharedKindsScenario.CLIENTS
					+ " clients on one read-write lock, readers inside " + SharedKindsScenario.HOLD_MILLIS
					+ " ms; distlock and Redisson on Redis, Curator on ZooKeeper");
			sharedKindsResults(report, "read-mostly", "mostReaders", "writerWait", readMostly);
		}
		if (!semaphores.isEmpty()) {
			report.add("Scenario 12, semaphore: " + SharedKindsScenario.SEMAPHORE_THREADS + " threads over "
					+ SharedKindsScenario.CLIENTS + " clients on one semaphore of " + SharedKindsScenario.PERMITS
					+ " permits, acquire, " + SharedKindsScenario.HOLD_MILLIS + " ms inside, release");
			sharedKindsResults(report, "semaphore", "mostHolders", "wait", semaphores);
		}
	}

	private static void sharedKindsResults(List<String> report, String scenario, String inside, String wait,
			Map<String, SharedKindsScenario.Result> results) {
		results.forEach((name, result) -> report.add(String.format(Locale.ROOT,
				"RESULT scenario=%s lib=%s acqPerSec=%.0f %sP50us=%d %sP99us=%d %s=%d violations=%d%s", scenario, name,
				result.opsPerSecond(), wait, result.waits().getValueAtPercentile(50), wait,
				result.waits().getValueAtPercentile(99), inside, result.mostInside(), result.violations(),
				scenario.equals("read-mostly") ? String.format(Locale.ROOT, " writesPerSec=%.1f", result.writesPerSecond())
						: "")));
		SharedKindsScenario.Result ours = results.get("distlock");
		if (ours == null) {
			return;
		}
		results.forEach((name, peer) -> {
			if (!name.equals("distlock") && peer.waits().getTotalCount() == 0) {
				report.add(String.format(Locale.ROOT, "RATIO scenario=%s distlock/%s throughput=%.2f %sP99=n/a (%s: no "
						+ "acquisition in the window, starved)", scenario, name,
						ours.opsPerSecond() / Math.max(1e-9, peer.opsPerSecond()), wait, name));
			}
			else if (!name.equals("distlock")) {
				double waitRatio = (double) ours.waits().getValueAtPercentile(99)
						/ Math.max(1, peer.waits().getValueAtPercentile(99));
				report.add(String.format(Locale.ROOT, "RATIO scenario=%s distlock/%s throughput=%.2f %sP99=%.2f",
						scenario, name, ours.opsPerSecond() / Math.max(1e-9, peer.opsPerSecond()), wait, waitRatio));
			}
		});
	}

	private static void contendedResults(List<String> report, String scenario, Map<String, Result> results) {
		results.forEach((name, result) -> report.add(String.format(Locale.ROOT,
				"RESULT scenario=%s lib=%s acqPerSec=%.0f handoffP50us=%d handoffP99us=%d lockWaitP99us=%d fairness=%.2f",
				scenario, name, result.opsPerSecond, micros(result.handoff, 50), micros(result.handoff, 99),
				micros(result.pair, 99), result.fairness)));
	}

	/**
	 * The hand-off floor beside scenario 2's hand-offs: the best peer's p50 and half of it, which
	 * issue 16 asked distlock's to reach.
	 */
	private static void handOffFloorLines(List<String> report, Histogram floor, Map<String, Result> contended) {
		report.add(String.format(Locale.ROOT,
				"Hand-off floor (a release script publishing to one parked waiter of another client, nothing else running): p50 %d us, p99 %d us",
				micros(floor, 50), micros(floor, 99)));
		report.add(String.format(Locale.ROOT, "RESULT scenario=handoff-floor p50us=%d p99us=%d", micros(floor, 50),
				micros(floor, 99)));
		contended.entrySet()
			.stream()
			.filter(entry -> !entry.getKey().equals("distlock") && !entry.getKey().startsWith("floor-"))
			.min(java.util.Comparator.comparingLong(entry -> entry.getValue().handoff.getValueAtPercentile(50)))
			.ifPresent(best -> report.add(String.format(Locale.ROOT,
					"RATIO scenario=handoff-floor floor/bestPeer=%s bestPeerP50us=%d floorP50/halfBestPeerP50=%.2f", best.getKey(),
					micros(best.getValue().handoff, 50),
					2.0 * floor.getValueAtPercentile(50) / Math.max(1, best.getValue().handoff.getValueAtPercentile(50)))));
		Result ours = contended.get("distlock");
		if (ours != null) {
			report.add(String.format(Locale.ROOT, "RATIO scenario=handoff-floor distlock/floor handoffP50=%.2f",
					(double) ours.handoff.getValueAtPercentile(50) / Math.max(1, floor.getValueAtPercentile(50))));
		}
		report.add("");
	}

	static long micros(Histogram histogram, double percentile) {
		return histogram.getValueAtPercentile(percentile) / 1000;
	}

	private static void pairTable(List<String> report, Map<String, Result> results) {
		report.add(String.format(Locale.ROOT, "%-14s %10s %10s %10s %10s", "library", "pairs/s", "p50 us", "p99 us", "p999 us"));
		results.forEach((name, result) -> report.add(String.format(Locale.ROOT, "%-14s %10.0f %10d %10d %10d", name,
				result.opsPerSecond, micros(result.pair, 50), micros(result.pair, 99), micros(result.pair, 99.9))));
		report.add("");
	}

	/** The cost split of each library's measured window, per pair or acquisition, and as COST lines. */
	private static void costTable(List<String> report, String scenario, String unit, Map<String, Result> results) {
		if (results.values().stream().allMatch(result -> result.costs() == null)) {
			return;
		}
		report.add("Cost per " + unit + " (Redis CPU, commands Redis ran, bytes in and out of Redis, client JVM CPU, bytes allocated by all threads and by the calling threads)");
		report.add(CostMeter.Costs.header());
		results.forEach((name, result) -> {
			if (result.costs() != null) {
				report.add(result.costs().row(name));
			}
		});
		results.forEach((name, result) -> {
			CostMeter.Costs costs = result.costs();
			if (costs != null) {
				report.add(String.format(Locale.ROOT,
						"COST scenario=%s lib=%s redisCpuUs=%.1f commands=%.1f requestBytes=%.0f replyBytes=%.0f clientCpuUs=%.1f allocatedBytes=%.0f callerAllocatedBytes=%.0f",
						scenario, name, costs.redisCpuMicros(), costs.commands(), costs.requestBytes(), costs.replyBytes(),
						costs.clientCpuMicros(), costs.allocatedBytes(), costs.callerAllocatedBytes()));
			}
		});
	}

	private static void results(List<String> report, String scenario, Map<String, Result> results) {
		results.forEach((name, result) -> report.add(String.format(Locale.ROOT,
				"RESULT scenario=%s lib=%s pairsPerSec=%.0f p50us=%d p99us=%d p999us=%d", scenario, name, result.opsPerSecond,
				micros(result.pair, 50), micros(result.pair, 99), micros(result.pair, 99.9))));
	}

	private static void ratios(List<String> report, String scenario, Map<String, Result> results, String subject) {
		Result ours = results.get(subject);
		if (ours == null) {
			return;
		}
		results.forEach((name, peer) -> {
			if (!name.equals(subject)) {
				report.add(String.format(Locale.ROOT, "RATIO scenario=%s %s/%s throughput=%.2f p50=%.2f p99=%.2f", scenario,
						subject, name, ours.opsPerSecond / Math.max(1, peer.opsPerSecond),
						(double) ours.pair.getValueAtPercentile(50) / Math.max(1, peer.pair.getValueAtPercentile(50)),
						(double) ours.pair.getValueAtPercentile(99) / Math.max(1, peer.pair.getValueAtPercentile(99))));
			}
		});
	}

	/** {@code threads} threads, a key each, on one client. */
	static Result uncontended(Contender contender, int threads, Duration warmup, Duration duration) throws Exception {
		return uncontended(contender, threads, warmup, duration, null);
	}

	/** As above, measuring the costs per pair with {@code meter} if given. */
	static Result uncontended(Contender contender, int threads, Duration warmup, Duration duration, Window meter)
			throws Exception {
		try (Contender.Client client = contender.newClient()) {
			return pairs(threads, warmup, duration, thread -> {
				Lock lock = client.lock("uncontended:" + thread);
				return () -> {
					lock.lock();
					lock.unlock();
				};
			}, meter);
		}
	}

	/**
	 * 4 threads, each locking and unlocking a name picked at random from its own share of
	 * {@code names} (no two threads share a name, so nobody waits), with a new lock handle per pair
	 * as code that locks per entity makes one: how each library's cost grows with the names it sees.
	 */
	static Result names(Contender contender, int names, Duration warmup, Duration duration, CostMeter meter)
			throws Exception {
		int threads = 4;
		int share = Math.max(1, names / threads);
		try (Contender.Client client = contender.newClient()) {
			return pairs(threads, warmup, duration, thread -> () -> {
				Lock lock = client.lock("names:" + thread + ":" + ThreadLocalRandom.current().nextInt(share));
				lock.lock();
				lock.unlock();
			}, meter);
		}
	}

	/** 4 threads, a key each, through one way of calling distlock. */
	static Result annotated(AnnotationContenders.Named named, Duration warmup, Duration duration) throws Exception {
		try (AnnotationContenders.Path path = named.open().get()) {
			return pairs(4, warmup, duration, thread -> {
				String key = "annotated:" + thread;
				return () -> path.run(key);
			});
		}
	}

	private static Result pairs(int threads, Duration warmup, Duration duration,
			java.util.function.IntFunction<Runnable> pairs) throws Exception {
		return pairs(threads, warmup, duration, pairs, null);
	}

	private static Result pairs(int threads, Duration warmup, Duration duration,
			java.util.function.IntFunction<Runnable> pairs, Window meter) throws Exception {
		Histogram latencies = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
		long[] counts = run(threads, warmup, duration, (thread, measuring) -> {
			Runnable pair = pairs.apply(thread);
			return () -> {
				long start = System.nanoTime();
				pair.run();
				if (measuring.get()) {
					synchronized (latencies) {
						latencies.recordValue(Math.min(System.nanoTime() - start, latencies.getHighestTrackableValue()));
					}
					return true;
				}
				return false;
			};
		}, meter);
		long total = java.util.Arrays.stream(counts).sum();
		return new Result(total / (duration.toNanos() / 1e9), latencies, new Histogram(1), 1,
				(meter instanceof CostMeter costs) ? costs.per(total) : null);
	}

	/** 8 threads on one key, split over 4 clients, with a non-atomic Redis read-modify-write inside. */
	static Result contended(Contender contender, RedisServerProcess redis, Duration warmup, Duration duration)
			throws Exception {
		return contended(contender, redis, warmup, duration, 4, 8, null);
	}

	/**
	 * {@code threads} threads on one key, split over {@code clientCount} clients, with a non-atomic
	 * Redis read-modify-write inside; {@code meter}, if given, measures the costs per acquisition.
	 */
	static Result contended(Contender contender, RedisServerProcess redis, Duration warmup, Duration duration,
			int clientCount, int threads, Window meter) throws Exception {
		return contended(contender, redis, warmup, duration, clientCount, threads, 1, meter);
	}

	/**
	 * As above, over {@code keys} keys: thread {@code t} takes key {@code t % keys}, each key with a
	 * Redis counter of its own, and a hand-off is counted when a key passes to another thread.
	 */
	static Result contended(Contender contender, RedisServerProcess redis, Duration warmup, Duration duration,
			int clientCount, int threads, int keys, Window meter) throws Exception {
		// One key keeps the names earlier runs used.
		List<String> lockNames = new ArrayList<>();
		List<String> counterKeys = new ArrayList<>();
		for (int key = 0; key < keys; key++) {
			lockNames.add((keys == 1) ? "contended" : "contended:" + key);
			counterKeys.add((keys == 1) ? "bench:counter" : "bench:counter:" + key);
		}
		// Every key is contended by threads of every client (thread % clientCount would give a key only
		// the clients that share its parity when both counts are even).
		Contention.Setup setup = new Contention.Setup(clientCount, threads, lockNames, counterKeys, "contended:connect",
				thread -> thread % keys, thread -> (thread / keys) % clientCount,
				() -> Contenders.connectionFactory(redis.host(), redis.port()), () -> connectedClients(redis), false);
		Contention.Outcome outcome = Contention.run(contender, setup, warmup, duration, meter);
		for (int key = 0; key < keys; key++) {
			long acquired = outcome.acquisitions()[key];
			if (outcome.inRedis()[key] != acquired || outcome.local()[key] != acquired) {
				throw new IllegalStateException(contender.name() + " LOST UPDATES on " + lockNames.get(key) + ": " + acquired
						+ " acquisitions, Redis counter " + outcome.inRedis()[key] + ", local counter "
						+ outcome.local()[key]);
			}
		}
		long total = outcome.total();
		return new Result(total / (duration.toNanos() / 1e9), outcome.lockWait(), outcome.handoff(), outcome.fairness(),
				(meter instanceof CostMeter costs) ? costs.per(total) : null, outcome.connections());
	}

	/** Whether {@link #run} starts virtual threads instead of platform threads (Java 21+). */
	private static volatile boolean virtualThreads;

	/** Runs {@code body} with {@link #run} starting virtual threads (Java 21+). */
	static <T> T onVirtualThreads(java.util.concurrent.Callable<T> body) throws Exception {
		virtualThreads = true;
		try {
			return body.call();
		}
		finally {
			virtualThreads = false;
		}
	}

	/** Runs {@code threads} loops for the warm-up and then the measured duration; counts measured iterations. */
	private static long[] run(int threads, Duration warmup, Duration duration, LoopFactory loops) throws Exception {
		return run(threads, warmup, duration, loops, null);
	}

	/** As above; {@code meter}, if given, measures the costs of the measured window. */
	static long[] run(int threads, Duration warmup, Duration duration, LoopFactory loops, Window meter)
			throws Exception {
		java.util.concurrent.atomic.AtomicBoolean measuring = new java.util.concurrent.atomic.AtomicBoolean();
		java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
		long[] counts = new long[threads];
		ExecutorService pool = virtualThreads ? VirtualThreads.executor() : Executors.newFixedThreadPool(threads);
		CountDownLatch ready = new CountDownLatch(threads);
		List<Future<?>> futures = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			int thread = t;
			futures.add(pool.submit(() -> {
				Loop loop = loops.create(thread, measuring);
				if (meter != null) {
					meter.caller(Thread.currentThread());
				}
				ready.countDown();
				while (!stop.get()) {
					if (loop.once()) {
						counts[thread]++;
					}
				}
				return null;
			}));
		}
		ready.await();
		Thread.sleep(warmup.toMillis());
		if (meter != null) {
			meter.start();
		}
		measuring.set(true);
		Thread.sleep(duration.toMillis());
		measuring.set(false);
		if (meter != null) {
			meter.stop();
		}
		stop.set(true);
		for (Future<?> future : futures) {
			future.get(2, TimeUnit.MINUTES);
		}
		pool.shutdown();
		log.debug("ran {} threads", threads);
		return counts;
	}

	/**
	 * What {@link #run} tells a meter: the calling threads, then where the measured window starts
	 * and stops. {@link CostMeter} reads one server's counters; the cluster scenario reads every
	 * master's.
	 */
	interface Window {

		/** Registers a calling thread; called from the thread itself, before {@link #start()}. */
		default void caller(Thread thread) {
		}

		/** The measured window starts. */
		void start();

		/** The measured window ends. */
		void stop();

	}

	@FunctionalInterface
	interface LoopFactory {

		Loop create(int thread, java.util.concurrent.atomic.AtomicBoolean measuring);

	}

	@FunctionalInterface
	interface Loop {

		/** @return whether this iteration was measured */
		boolean once() throws Exception;

	}

	/** One library's numbers in one scenario. */
	record Result(double opsPerSecond, Histogram pair, Histogram handoff, double fairness, CostMeter.Costs costs,
			long connections) {

		Result(double opsPerSecond, Histogram pair, Histogram handoff, double fairness) {
			this(opsPerSecond, pair, handoff, fairness, null, -1);
		}

		Result(double opsPerSecond, Histogram pair, Histogram handoff, double fairness, CostMeter.Costs costs) {
			this(opsPerSecond, pair, handoff, fairness, costs, -1);
		}

	}

	private static long connectedClients(RedisServerProcess redis) {
		return (long) CostMeter.number(CostMeter.info(redis, "clients"), "connected_clients");
	}

}
