package io.distlock.embedded;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * A local Redis Sentinel deployment of real processes on free ports: a master, one replica
 * ({@code --replicaof}) and three sentinels ({@code redis-server <conf> --sentinel}, quorum 2), all
 * bound to 127.0.0.1, stopped and their directories deleted by {@link #close()}.
 *
 * <p>The sentinels judge a master down after one second without an answer, so a
 * {@link RedisServerProcess#kill() killed} master is replaced by the replica within a few seconds;
 * {@link #awaitNewMaster(RedisServerProcess, Duration)} waits for that. Replication stays
 * asynchronous, as in production: writes the master acknowledged just before it died may be missing
 * on the replica that takes over.
 */
public final class RedisSentinelGroup implements AutoCloseable {

	/** The name the sentinels monitor the master under. */
	public static final String MASTER_NAME = "distlock-master";

	private static final int SENTINEL_COUNT = 3;

	private static final int QUORUM = 2;

	private static final long DOWN_AFTER_MILLIS = 1000;

	/**
	 * Also how long a failed failover attempt waits before the next one; short so that a vote split
	 * between the sentinels costs seconds, not Sentinel's default three minutes.
	 */
	private static final long FAILOVER_TIMEOUT_MILLIS = 5000;

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

	private final List<RedisServerProcess> dataNodes = new ArrayList<>();

	private final List<RedisServerProcess> sentinels = new ArrayList<>();

	/** The replica's link to its master, where {@link #startWithRelayedReplicaLink()} relays it. */
	private TcpRelay replicaLink;

	private RedisSentinelGroup() {
	}

	/**
	 * Starts the master, the replica and the sentinels, and waits until the replica is in sync and
	 * every sentinel knows the replica and the two other sentinels, so that a failover can start as
	 * soon as the master dies.
	 * @return the running deployment
	 */
	public static RedisSentinelGroup start() {
		return start(false);
	}

	/**
	 * {@link #start()}, with the replica's link to its master through a {@link TcpRelay} that a test
	 * can {@linkplain TcpRelay#drop() break without either side noticing}, so that the replica misses
	 * what the master writes next (a signal such as SIGSTOP would not do: the kernel keeps receiving
	 * for a stopped process, and it reads everything once resumed).
	 * @return the running deployment; {@link #replicaLink()} is the relay
	 */
	public static RedisSentinelGroup startWithRelayedReplicaLink() {
		return start(true);
	}

	private static RedisSentinelGroup start(boolean relayed) {
		RedisSentinelGroup group = new RedisSentinelGroup();
		try {
			// Diskless sync without its default 5 s delay: the replica is in sync at once, and so is
			// the replica of a promoted master (none here, but a restarted node would be one).
			RedisServerProcess master = RedisServerProcess.start("--repl-diskless-sync-delay", "0");
			group.dataNodes.add(master);
			int masterPort = master.port();
			if (relayed) {
				group.replicaLink = new TcpRelay(master.port());
				masterPort = group.replicaLink.port();
			}
			RedisServerProcess replica = RedisServerProcess.start("--repl-diskless-sync-delay", "0", "--replicaof",
					master.host(), Integer.toString(masterPort));
			group.dataNodes.add(replica);
			await("the replica on port " + replica.port() + " to sync with the master on port " + master.port(),
					() -> replica.query("INFO", "replication").contains("master_link_status:up"));
			// Started after the replica is attached: a sentinel finds replicas in the master's INFO, which
			// it reads at once on connecting but then only every 10 s.
			for (int i = 0; i < SENTINEL_COUNT; i++) {
				group.sentinels.add(RedisServerProcess.startWithConfig(sentinelConfig(master), "--sentinel"));
			}
			for (RedisServerProcess sentinel : group.sentinels) {
				await("the sentinel on port " + sentinel.port() + " to know the replica and the other sentinels",
						() -> group.knowsEveryone(sentinel));
			}
			return group;
		}
		catch (RuntimeException ex) {
			group.close();
			throw ex;
		}
	}

	private static List<String> sentinelConfig(RedisServerProcess master) {
		return List.of("sentinel monitor " + MASTER_NAME + " " + master.host() + " " + master.port() + " " + QUORUM,
				"sentinel down-after-milliseconds " + MASTER_NAME + " " + DOWN_AFTER_MILLIS,
				"sentinel failover-timeout " + MASTER_NAME + " " + FAILOVER_TIMEOUT_MILLIS,
				"sentinel parallel-syncs " + MASTER_NAME + " 1");
	}

	/** @return the name the sentinels monitor the master under, for {@code spring.data.redis.sentinel.master} */
	public String masterName() {
		return MASTER_NAME;
	}

	/** @return {@code host:port} of every sentinel, for {@code spring.data.redis.sentinel.nodes} */
	public List<String> sentinelNodes() {
		return this.sentinels.stream().map(sentinel -> sentinel.host() + ":" + sentinel.port()).toList();
	}

	/**
	 * @return the relay of the replica's link to its first master
	 * @throws IllegalStateException unless started with {@link #startWithRelayedReplicaLink()}
	 */
	public TcpRelay replicaLink() {
		if (this.replicaLink == null) {
			throw new IllegalStateException("The replica's link is not relayed: start with startWithRelayedReplicaLink()");
		}
		return this.replicaLink;
	}

	/** @return the sentinel processes */
	public List<RedisServerProcess> sentinels() {
		return List.copyOf(this.sentinels);
	}

	/** @return the master and the replica, in the order they were started, whatever their roles now */
	public List<RedisServerProcess> dataNodes() {
		return List.copyOf(this.dataNodes);
	}

	/**
	 * The data node the sentinels name as master now (the first live sentinel that answers).
	 * @return the master's process
	 * @throws IllegalStateException if no sentinel answers or the named master is not one of ours
	 */
	public RedisServerProcess master() {
		for (RedisServerProcess sentinel : this.sentinels) {
			if (sentinel.isRunning()) {
				Optional<RedisServerProcess> master = masterReportedBy(sentinel);
				if (master.isPresent()) {
					return master.get();
				}
			}
		}
		throw new IllegalStateException("No sentinel of " + sentinelNodes() + " names a master of " + MASTER_NAME);
	}

	/**
	 * Waits until every live sentinel names a master other than {@code former}, and that node
	 * answers as a master ({@code role:master}): the failover is over and clients that ask the
	 * sentinels now reach the new master.
	 * @param former the master that was lost (usually {@link RedisServerProcess#kill() killed})
	 * @param timeout how long to wait at most
	 * @return the new master
	 * @throws IllegalStateException if the failover did not complete within {@code timeout}
	 */
	public RedisServerProcess awaitNewMaster(RedisServerProcess former, Duration timeout) {
		Map<RedisServerProcess, RedisServerProcess> named = new HashMap<>();
		await("the sentinels " + sentinelNodes() + " to name a new master instead of port " + former.port(), timeout,
				() -> {
					named.clear();
					for (RedisServerProcess sentinel : this.sentinels) {
						if (sentinel.isRunning()) {
							masterReportedBy(sentinel).ifPresent(master -> named.put(sentinel, master));
						}
					}
					long live = this.sentinels.stream().filter(RedisServerProcess::isRunning).count();
					return named.size() == live && named.values().stream().distinct().count() == 1
							&& !named.containsValue(former) && isMaster(named.values().iterator().next());
				});
		return named.values().iterator().next();
	}

	@Override
	public void close() {
		// Sentinels first, so that none starts a failover while the data nodes go down.
		this.sentinels.forEach(RedisServerProcess::close);
		this.dataNodes.forEach(RedisServerProcess::close);
		if (this.replicaLink != null) {
			this.replicaLink.close();
		}
	}

	private boolean knowsEveryone(RedisServerProcess sentinel) {
		Map<String, String> master = fields(sentinel.query("SENTINEL", "MASTER", MASTER_NAME));
		return "master".equals(master.get("flags")) && "1".equals(master.get("num-slaves"))
				&& Integer.toString(SENTINEL_COUNT - 1).equals(master.get("num-other-sentinels"));
	}

	private Optional<RedisServerProcess> masterReportedBy(RedisServerProcess sentinel) {
		List<String> address;
		try {
			address = sentinel.query("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME).lines().toList();
		}
		catch (RuntimeException unreachable) {
			return Optional.empty();
		}
		if (address.size() != 2) {
			return Optional.empty();
		}
		return this.dataNodes.stream()
			.filter(node -> node.host().equals(address.get(0)) && Integer.toString(node.port()).equals(address.get(1)))
			.findFirst();
	}

	private static boolean isMaster(RedisServerProcess node) {
		try {
			return node.isRunning() && node.query("INFO", "replication").contains("role:master");
		}
		catch (RuntimeException unreachable) {
			return false;
		}
	}

	/** Reads a flat array reply of alternating names and values, as {@code SENTINEL MASTER} gives. */
	private static Map<String, String> fields(String reply) {
		List<String> lines = reply.lines().toList();
		Map<String, String> fields = new HashMap<>();
		for (int i = 0; i + 1 < lines.size(); i += 2) {
			fields.put(lines.get(i), lines.get(i + 1));
		}
		return fields;
	}

	private static void await(String what, BooleanSupplier condition) {
		await(what, READY_TIMEOUT, condition);
	}

	private static void await(String what, Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Gave up after " + timeout + " waiting for " + what);
			}
			try {
				Thread.sleep(50);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while waiting for " + what, ex);
			}
		}
	}

}
