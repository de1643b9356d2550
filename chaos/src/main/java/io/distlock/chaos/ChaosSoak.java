package io.distlock.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import io.distlock.core.LockBackend;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.embedded.TcpRelay;

/**
 * The chaos soak: three client processes ({@link SoakClient}), eight threads each, lock sixteen keys
 * through distlock while faults are injected into the lock server, one class per phase with calm
 * before and recovery after; then {@link HistoryChecker} reads what they logged. Three runs: single
 * Redis (behind a TCP relay that can slow or cut connections), Redlock over five masters, and a
 * ZooKeeper ensemble of three servers ({@link ZooKeeperEnsemble}).
 *
 * <p>Arguments: {@code --short} (about 5 minutes; CI), {@code --long} (about 30 minutes; by hand),
 * {@code --sanity} (the same without any locking: it must report violations),
 * {@code --only=<run>,...} ({@code redis}, {@code redlock}, {@code zookeeper}, {@code zookeeper-line}: the
 * ZooKeeper run with exclusive locks held first in line), {@code --phases=<name>,...},
 * {@code --report=<file>} (Markdown), {@code --work=<dir>} (the clients' histories and logs).
 * Exits with 1 when a phase shows what a correct lock must not allow: overlapping holds where the
 * lock must keep exclusion, a stale write the fenced resource accepted, a stuck caller.
 */
public final class ChaosSoak {

	static final int CLIENTS = 3;

	static final int THREADS = 8;

	static final int KEYS = 16;

	static final Duration WATCHDOG = Duration.ofSeconds(3);

	static final Duration WAIT = Duration.ofSeconds(2);

	/** How long after the clients stop every Redis lease and queue place has run out. */
	private static final Duration REDIS_SETTLE = WATCHDOG.plus(LockBackend.QUEUE_PLACE).plusSeconds(1);

	private ChaosSoak() {
	}

	/**
	 * How long each part of a phase lasts.
	 * @param calm before the fault
	 * @param fault how long a lasting fault (latency, a frozen node) lasts
	 * @param recovery after the fault
	 * @param rounds how often the whole list of phases runs
	 */
	record Timing(Duration calm, Duration fault, Duration recovery, int rounds) {

		// CI's: the verdicts are about safety (overlaps, stale writes, tokens), which the length of
		// the calm and recovery parts does not change; they only bound what the report can show.
		static final Timing SHORT = new Timing(Duration.ofSeconds(2), Duration.ofSeconds(4), Duration.ofSeconds(5), 1);

		static final Timing LONG = new Timing(Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(40), 2);

	}

	/**
	 * The settings of one soak.
	 * @param timing how long phases last
	 * @param sanity run without locks
	 * @param runs which runs ({@code redis}, {@code redlock})
	 * @param phases which phases; empty: all
	 */
	record Settings(Timing timing, boolean sanity, List<String> runs, List<String> phases) {

		boolean wants(String phase) {
			return this.phases.isEmpty() || this.phases.contains(phase);
		}

	}

	/**
	 * What one run showed.
	 * @param name the run
	 * @param backend what the clients locked with
	 * @param results per phase
	 * @param lostNotices holds the clients' listeners were told were lost
	 * @param leftovers what the lock servers still kept once every lease and session had run out
	 * @param errors what failed in the clients, by kind, with how often
	 * @param unplaced records that fall in no phase window (must be none)
	 */
	record RunResult(String name, String backend, List<HistoryChecker.PhaseResult> results, int lostNotices,
			Leftovers leftovers, Map<String, Integer> errors, long unplaced) {
	}

	/**
	 * What the lock servers keep of a run once its clients have stopped and every lease and session
	 * has run out.
	 * @param stuck locks that would stay taken for ever (a Redis key without expiry, a lock znode
	 * still there): a lock that nobody could take again; must be none
	 * @param expiring Redis keys still there but expiring on their own (release markers)
	 * @param description the sentence the report prints
	 */
	record Leftovers(List<String> stuck, int expiring, String description) {

		static Leftovers ofRedisKeys(List<String> withoutExpiry, int expiring) {
			return new Leftovers(withoutExpiry, expiring, String.format(Locale.ROOT,
					"Once every lease had run out: %d keys without expiry%s, %d expiring on their own (release markers, 15 to 30 s).",
					withoutExpiry.size(), withoutExpiry.isEmpty() ? "" : " " + withoutExpiry, expiring));
		}

		static Leftovers ofZnodes(List<String> nodes) {
			return new Leftovers(nodes, 0, String.format(Locale.ROOT,
					"Once every client's session had ended: %d lock nodes left%s.", nodes.size(),
					nodes.isEmpty() ? "" : " " + nodes));
		}

	}

	public static void main(String[] args) throws Exception {
		Timing timing = Timing.SHORT;
		boolean sanity = false;
		List<String> runs = List.of("redis", "redlock", "zookeeper", "zookeeper-line");
		List<String> phases = List.of();
		Path report = Path.of("target", "chaos-report.md");
		Path work = Path.of("target", "chaos");
		for (String arg : args) {
			if (arg.equals("--short")) {
				timing = Timing.SHORT;
			}
			else if (arg.equals("--long")) {
				timing = Timing.LONG;
			}
			else if (arg.equals("--sanity")) {
				sanity = true;
			}
			else if (arg.startsWith("--only=")) {
				runs = List.of(arg.substring("--only=".length()).split(","));
			}
			else if (arg.startsWith("--phases=")) {
				phases = List.of(arg.substring("--phases=".length()).split(","));
			}
			else if (arg.startsWith("--report=")) {
				report = Path.of(arg.substring("--report=".length()));
			}
			else if (arg.startsWith("--work=")) {
				work = Path.of(arg.substring("--work=".length()));
			}
			else {
				System.err.println("Unknown argument " + arg
						+ "; use --short | --long, --sanity, --only=redis,redlock,zookeeper,zookeeper-line, --phases=a,b, --report=<file>, --work=<dir>");
				System.exit(2);
			}
		}
		Instant started = Instant.now();
		List<RunResult> results = run(new Settings(timing, sanity, runs, phases), work, System.out::println);
		String markdown = SoakReport.markdown(results, timing, sanity, Duration.between(started, Instant.now()));
		Files.createDirectories(report.toAbsolutePath().getParent());
		Files.writeString(report, markdown, StandardCharsets.UTF_8);
		System.out.println(markdown);
		System.out.println("Report written to " + report.toAbsolutePath());
		List<String> violations = SoakReport.violations(results);
		if (sanity) {
			System.out.println(violations.isEmpty() ? "SANITY FAILED: no violations found without locks"
					: "SANITY OK: the checker found " + violations.size() + " violations without locks");
			System.exit(violations.isEmpty() ? 1 : 0);
		}
		if (!violations.isEmpty()) {
			violations.forEach(violation -> System.out.println("VIOLATION " + violation));
			System.exit(1);
		}
		System.out.println("CHAOS SOAK PASSED");
		System.exit(0);
	}

	/**
	 * Runs the soak.
	 * @param settings what to run
	 * @param directory where the clients write their histories and logs
	 * @param progress told of each phase as it starts
	 * @return one result per run
	 */
	static List<RunResult> run(Settings settings, Path directory, Consumer<String> progress) throws IOException {
		List<RunResult> results = new ArrayList<>();
		try (RedisServerProcess resource = RedisServerProcess.start()) {
			if (settings.runs().contains("redis")) {
				results.add(redisRun(settings, resource, directory, progress));
			}
			if (settings.runs().contains("redlock")) {
				results.add(redlockRun(settings, resource, directory, progress));
			}
			if (settings.runs().contains("zookeeper")) {
				results.add(zooKeeperRun(settings, resource, directory, progress, false));
			}
			if (settings.runs().contains("zookeeper-line")) {
				results.add(zooKeeperRun(settings, resource, directory, progress, true));
			}
		}
		return results;
	}

	private static RunResult redisRun(Settings settings, RedisServerProcess resource, Path directory,
			Consumer<String> progress) {
		try (RedisServerProcess lock = RedisServerProcess.start(); TcpRelay relay = new TcpRelay(lock.port())) {
			List<Phase> phases = new ArrayList<>();
			Timing timing = settings.timing();
			phases.add(new Phase("calm", "nothing", true, context -> context.hold(timing.fault())));
			phases.add(new Phase("script-flush", "SCRIPT FLUSH, 3 times 1 s apart", true, context -> {
				for (int i = 0; i < 3; i++) {
					lock.command("SCRIPT", "FLUSH");
					context.hold(Duration.ofSeconds(1));
				}
			}));
			phases.add(new Phase("client-kill", "CLIENT KILL of every normal and pub/sub connection, twice", true,
					context -> {
						for (int i = 0; i < 2; i++) {
							lock.command("CLIENT", "KILL", "TYPE", "normal");
							lock.command("CLIENT", "KILL", "TYPE", "pubsub");
							context.hold(Duration.ofSeconds(1));
						}
					}));
			phases.add(new Phase("pause-short", "SIGSTOP of client c1 for 1.5 s (lease 3 s)", true,
					context -> context.freezeClient(0, Duration.ofMillis(1500))).pausing("c1"));
			phases.add(new Phase("pause-long", "SIGSTOP of client c1 for 6 s (past its 3 s lease)", false,
					context -> context.freezeClient(0, Duration.ofSeconds(6))).pausing("c1"));
			phases.add(new Phase("latency", "50-200 ms added to every request through the relay", true, context -> {
				relay.delay(Duration.ofMillis(50), Duration.ofMillis(200));
				context.hold(timing.fault());
				relay.delay(Duration.ZERO, Duration.ZERO);
			}));
			phases.add(new Phase("cut-connections", "every connection cut at the relay, 3 times 1 s apart", true,
					context -> {
						for (int i = 0; i < 3; i++) {
							relay.cutAll();
							context.hold(Duration.ofSeconds(1));
						}
					}));
			phases.add(new Phase("restart-empty", "kill -9 and restart of Redis without persistence", true,
					context -> lock.restart()));
			phases.add(new Phase("restart-snapshot",
					"SAVE, then kill -9 and restart of Redis from that RDB snapshot (its default persistence)", true,
					context -> {
						// The clients go on between the save and the kill: holds taken meanwhile are lost,
						// while the fencing counter comes back with the snapshot.
						lock.command("SAVE");
						lock.restartFromSnapshot();
						if (!"1".equals(lock.query("EXISTS", "distlock:fencing").trim())) {
							context.problem("Redis restarted without the fencing counter its snapshot should have kept");
						}
					}));
			phases.add(new Phase("restart-aof", "kill -9 and restart of Redis with appendonly yes, appendfsync always",
					true, context -> {
						lock.restartWith("--appendonly", "yes", "--appendfsync", "always");
						// Otherwise this phase would silently repeat restart-empty.
						if (!"1".equals(lock.query("EXISTS", "distlock:fencing").trim())) {
							context.problem("Redis restarted without the fencing counter its append-only file should have kept");
						}
					})
				.preparedBy(() -> enableAppendOnly(lock))
				// Later phases (and rounds) run without persistence again, as they did before.
				.finishedBy(() -> lock.command("CONFIG", "SET", "appendonly", "no")));
			return runPhases("redis", "single Redis " + lock.uri() + " behind a TCP relay", settings, phases,
					List.of("lock=redis:" + relay.port()), resource, directory, progress, true, REDIS_SETTLE,
					() -> redisLeftovers(List.of(lock)));
		}
	}

	private static RunResult redlockRun(Settings settings, RedisServerProcess resource, Path directory,
			Consumer<String> progress) {
		List<RedisServerProcess> nodes = new ArrayList<>();
		try {
			for (int i = 0; i < 5; i++) {
				nodes.add(RedisServerProcess.start());
			}
			Timing timing = settings.timing();
			List<Phase> phases = new ArrayList<>();
			phases.add(new Phase("redlock-calm", "nothing", true, context -> context.hold(timing.fault())));
			phases.add(new Phase("redlock-kill-2", "kill -9 of 2 of 5 masters; restarted empty after the fault", true,
					context -> {
						nodes.get(0).kill();
						nodes.get(1).kill();
						context.hold(timing.fault());
						nodes.get(0).restart();
						nodes.get(1).restart();
					}));
			phases.add(new Phase("redlock-freeze-1", "SIGSTOP of 1 of 5 masters", true, context -> {
				nodes.get(2).pause();
				try {
					context.hold(timing.fault());
				}
				finally {
					nodes.get(2).resume();
				}
			}));
			phases.add(new Phase("redlock-restart-1-empty", "kill -9 and immediate restart of 1 of 5 masters, empty",
					true, context -> nodes.get(3).restart()));
			String ports = String.join(",", nodes.stream().map(node -> Integer.toString(node.port())).toList());
			return runPhases("redlock", "Redlock over 5 masters", settings, phases, List.of("lock=redlock:" + ports),
					resource, directory, progress, false, REDIS_SETTLE, () -> redisLeftovers(nodes));
		}
		finally {
			nodes.forEach(RedisServerProcess::close);
		}
	}

	/** @param line whether the clients hold exclusive locks first in their line ({@code ExclusiveProtocol.LINE}) */
	private static RunResult zooKeeperRun(Settings settings, RedisServerProcess resource, Path directory,
			Consumer<String> progress, boolean line) {
		String run = line ? "zookeeper-line" : "zookeeper";
		try (ZooKeeperEnsemble ensemble = new ZooKeeperEnsemble(3, directory.resolve(run + "-servers"))) {
			Timing timing = settings.timing();
			List<Phase> phases = new ArrayList<>();
			phases.add(new Phase("zk-calm", "nothing", true, context -> context.hold(timing.fault())));
			phases.add(new Phase("zk-kill-follower", "kill -9 of a follower; restarted after the fault", true,
					context -> {
						int follower = ensemble.follower();
						ensemble.kill(follower);
						context.hold(timing.fault());
						ensemble.restart(follower);
					}));
			phases.add(new Phase("zk-kill-leader", "kill -9 of the leader; restarted after the fault", true, context -> {
				int leader = ensemble.leader();
				ensemble.kill(leader);
				context.hold(timing.fault());
				ensemble.restart(leader);
			}));
			phases.add(new Phase("zk-freeze-leader", "SIGSTOP of the leader", true, context -> {
				int leader = ensemble.leader();
				ensemble.pause(leader);
				try {
					context.hold(timing.fault());
				}
				finally {
					ensemble.resume(leader);
				}
			}));
			phases.add(new Phase("zk-lose-quorum", "kill -9 of 2 of 3 servers, the leader among them; restarted after the fault",
					true, context -> {
						int leader = ensemble.leader();
						int follower = ensemble.follower();
						ensemble.kill(leader);
						ensemble.kill(follower);
						context.hold(timing.fault());
						ensemble.restart(leader);
						ensemble.restart(follower);
					}));
			phases.add(new Phase("zk-replace-follower", "kill -9 of a follower, restarted with an empty data directory",
					true, context -> {
						int follower = ensemble.follower();
						ensemble.kill(follower);
						ensemble.restartEmpty(follower);
					}));
			phases.add(new Phase("zk-pause-short", "SIGSTOP of client c1 for 1.5 s (session 3 s)", true,
					context -> context.freezeClient(0, Duration.ofMillis(1500))).pausing("c1"));
			phases.add(new Phase("zk-pause-long", "SIGSTOP of client c1 for 6 s (past its 3 s session)", false,
					context -> context.freezeClient(0, Duration.ofSeconds(6))).pausing("c1"));
			// Each fault starts from a whole ensemble with a leader.
			phases.forEach(phase -> phase.preparedBy(ensemble::awaitLeader));
			return runPhases(run, "ZooKeeper ensemble of 3 servers" + (line ? ", holders first in line" : ""), settings,
					phases, List.of("lock=" + run + ":" + ensemble.connectString()), resource, directory, progress, true,
					// A stopped client's session ends one session timeout (the watchdog timeout) after its
					// last heartbeat; the leader expires sessions on tick boundaries.
					WATCHDOG.plusSeconds(3), () -> Leftovers.ofZnodes(lockNodes(ensemble.connectString())));
		}
	}

	/**
	 * @return the lock znodes under the soak's base path, which its clients' sessions should have taken
	 * along, and the places left in the locks' lines (the children of {@code <name>.q}, or of the lock's
	 * path when its holders are first in line; an empty line is a container node that the ensemble
	 * deletes by itself a while later, and holds nobody up)
	 */
	private static List<String> lockNodes(String connectString) {
		try (CuratorFramework curator = CuratorFrameworkFactory.newClient(connectString, 10_000, 5_000,
				new RetryNTimes(5, 500))) {
			curator.start();
			if (!curator.blockUntilConnected(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("No ZooKeeper server of " + connectString + " answered within 30 s");
			}
			if (curator.checkExists().forPath("/distlock") == null) {
				return List.of();
			}
			List<String> left = new ArrayList<>();
			for (String node : curator.getChildren().forPath("/distlock")) {
				Stat stat = curator.checkExists().forPath("/distlock/" + node);
				if (stat == null) {
					continue;
				}
				if (stat.getEphemeralOwner() != 0) {
					// A lock node (the default protocol's holder).
					left.add(node);
					continue;
				}
				try {
					curator.getChildren().forPath("/distlock/" + node).forEach(place -> left.add(node + "/" + place));
				}
				catch (KeeperException.NoNodeException deletedMeanwhile) {
					// The ensemble removed the empty line.
				}
			}
			return left;
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not list the lock nodes left in ZooKeeper", ex);
		}
	}

	private static void enableAppendOnly(RedisServerProcess lock) {
		lock.command("CONFIG", "SET", "appendfsync", "always");
		lock.command("CONFIG", "SET", "appendonly", "yes");
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		// Enabling it writes the file from the data set first; a kill before that ends would lose the data.
		while (lock.query("INFO", "persistence").contains("aof_rewrite_in_progress:1")
				|| lock.query("INFO", "persistence").contains("aof_rewrite_scheduled:1")) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Redis did not finish writing its append-only file within 30 s");
			}
			sleep(Duration.ofMillis(50));
		}
	}

	private static RunResult runPhases(String name, String backend, Settings settings, List<Phase> phases,
			List<String> lockArguments, RedisServerProcess resource, Path directory, Consumer<String> progress,
			boolean fencing, Duration settle, Supplier<Leftovers> leftovers) {
		Path runDirectory = directory.resolve(name);
		try {
			Files.createDirectories(runDirectory);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		List<String> arguments = new ArrayList<>(lockArguments);
		arguments.addAll(List.of("resource=" + resource.port(), "threads=" + THREADS, "keys=" + KEYS,
				"watchdog=" + WATCHDOG.toMillis(), "wait=" + WAIT.toMillis(), "sanity=" + settings.sanity()));
		// The windows cover the whole run, one after another, so that nothing goes unchecked between them.
		List<PhaseWindow> windows = new ArrayList<>();
		SoakClients.History history;
		// Each run counts from zero: its phases' counters and the highest tokens seen are its own.
		resource.command("FLUSHALL");
		resource.command("SET", FencedResource.PHASE_KEY, "warm-up");
		long windowStart = System.nanoTime();
		try (SoakClients clients = new SoakClients(CLIENTS, arguments, runDirectory)) {
			// A new Redis admits no holder for one restart grace; let the clients get going first.
			sleep(WATCHDOG.plusSeconds(2));
			long now = System.nanoTime();
			windows.add(new PhaseWindow("warm-up", "clients start", windowStart, now, now, now, true, null, null));
			windowStart = now;
			for (int round = 1; round <= settings.timing().rounds(); round++) {
				for (Phase phase : phases) {
					if (!settings.wants(phase.name)) {
						continue;
					}
					String phaseName = (settings.timing().rounds() > 1) ? phase.name + "#" + round : phase.name;
					progress.accept("phase " + name + "/" + phaseName + ": " + phase.fault);
					resource.command("SET", FencedResource.PHASE_KEY, phaseName);
					phase.prepare.run();
					sleep(settings.timing().calm());
					long faultStart = System.nanoTime();
					FaultContext context = new FaultContext(clients);
					phase.inject.accept(context);
					long faultEnd = System.nanoTime();
					sleep(settings.timing().recovery());
					phase.finish.run();
					now = System.nanoTime();
					windows.add(new PhaseWindow(phaseName, phase.fault, windowStart, faultStart, faultEnd,
							now, phase.exclusive || settings.sanity(), phase.pausedClient, context.problem));
					windowStart = now;
				}
			}
			resource.command("SET", FencedResource.PHASE_KEY, "stopping");
			history = clients.stop();
			now = System.nanoTime();
			windows.add(new PhaseWindow("stopping", "clients stop", windowStart, now, now, now, true, null, null));
		}
		// Holds of a stopped client run out with their lease (or session), hand-offs to vanished waiters
		// with their queue place: after both, nothing of the soak should be left but the fencing counters.
		sleep(settle);
		Leftovers left = leftovers.get();
		Map<String, Map<String, HistoryChecker.Counters>> counters = new HashMap<>();
		for (PhaseWindow window : windows) {
			Map<String, HistoryChecker.Counters> byKey = new HashMap<>();
			for (int key = 0; key < KEYS; key++) {
				byKey.put("k" + key, new HistoryChecker.Counters(number(resource.query("GET", "plain:" + window.name() + ":k" + key)),
						number(resource.query("GET", "fenced:" + window.name() + ":k" + key))));
			}
			counters.put(window.name(), byKey);
		}
		return new RunResult(name, backend, HistoryChecker.check(windows, history.records, counters,
				fencing || settings.sanity()), history.lostNotices, left, history.errors,
				HistoryChecker.unplaced(windows, history.records));
	}

	private static Leftovers redisLeftovers(List<RedisServerProcess> lockServers) {
		List<String> withoutExpiry = new ArrayList<>();
		int expiring = 0;
		for (RedisServerProcess server : lockServers) {
			for (String key : server.query("KEYS", "distlock:*").split("\n")) {
				// The fencing counters and the data-loss anchor are meant to stay.
				if (key.isBlank() || key.startsWith("distlock:fencing") || key.equals("distlock:anchor")) {
					continue;
				}
				if ("-1".equals(server.query("PTTL", key).trim())) {
					withoutExpiry.add(server.port() + " " + key);
				}
				else {
					expiring++;
				}
			}
		}
		return Leftovers.ofRedisKeys(withoutExpiry, expiring);
	}

	private static long number(String reply) {
		// A missing counter reads as an empty reply: nothing was written to it.
		return reply.isBlank() ? 0 : Long.parseLong(reply.trim());
	}

	static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	/** What a fault can reach while it is injected, and what it found wrong with itself. */
	static final class FaultContext {

		private final SoakClients clients;

		private String problem;

		FaultContext(SoakClients clients) {
			this.clients = clients;
		}

		void hold(Duration duration) {
			sleep(duration);
		}

		/** Freezes one client for a while; thawed whatever happens meanwhile. */
		void freezeClient(int index, Duration duration) {
			this.clients.pause(index);
			try {
				hold(duration);
			}
			finally {
				this.clients.resume(index);
			}
		}

		/** @param problem why the fault did not happen as described */
		void problem(String problem) {
			this.problem = problem;
		}

	}

	/** One fault class: what is done, and whether a correct lock keeps exclusion through it. */
	static final class Phase {

		final String name;

		final String fault;

		final boolean exclusive;

		final Consumer<FaultContext> inject;

		Runnable prepare = () -> {
		};

		Runnable finish = () -> {
		};

		String pausedClient;

		Phase(String name, String fault, boolean exclusive, Consumer<FaultContext> inject) {
			this.name = name;
			this.fault = fault;
			this.exclusive = exclusive;
			this.inject = inject;
		}

		Phase preparedBy(Runnable prepare) {
			this.prepare = prepare;
			return this;
		}

		Phase finishedBy(Runnable finish) {
			this.finish = finish;
			return this;
		}

		Phase pausing(String client) {
			this.pausedClient = client;
			return this;
		}

	}

}
