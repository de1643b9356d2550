package io.distlock.embedded;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

/**
 * A local Redis Cluster of real {@code redis-server} processes, masters only, each on a free port
 * with the 16384 slots split evenly between them.
 */
public final class RedisClusterProcess implements AutoCloseable {

	private static final long READY_TIMEOUT_MILLIS = 30_000;

	private final List<RedisServerProcess> masters = new ArrayList<>();

	private RedisClusterProcess() {
	}

	/**
	 * Starts a cluster and waits until every node reports {@code cluster_state:ok}.
	 * @param masterCount how many masters (at least 3, as Redis Cluster requires)
	 * @return the running cluster
	 */
	public static RedisClusterProcess start(int masterCount) {
		if (masterCount < 3) {
			throw new IllegalArgumentException("A Redis Cluster needs at least 3 masters, not " + masterCount);
		}
		RedisClusterProcess cluster = new RedisClusterProcess();
		try {
			for (int i = 0; i < masterCount; i++) {
				cluster.masters.add(RedisServerProcess.start("--cluster-enabled", "yes", "--cluster-config-file",
						"nodes.conf", "--cluster-node-timeout", "5000"));
			}
			cluster.assignSlots();
			cluster.meet();
			cluster.awaitReady();
			return cluster;
		}
		catch (RuntimeException ex) {
			cluster.close();
			throw ex;
		}
	}

	/** @return the masters, in slot order */
	public List<RedisServerProcess> masters() {
		return List.copyOf(this.masters);
	}

	/** @return {@code host:port} of every master, for {@code spring.data.redis.cluster.nodes} */
	public List<String> nodes() {
		return this.masters.stream().map(master -> master.host() + ":" + master.port()).toList();
	}

	/** Empties every master. */
	public void flushAll() {
		this.masters.forEach(master -> master.command("FLUSHALL"));
	}

	/** Runs a command on every master. */
	public void onEachMaster(String... command) {
		this.masters.forEach(master -> master.command(command));
	}

	/**
	 * Kills and restarts every master on its port, empty but with its cluster identity and slots (kept
	 * in {@code nodes.conf}), and waits until the cluster is healthy again.
	 */
	public void restart() {
		this.masters.forEach(RedisServerProcess::kill);
		this.masters.forEach(RedisServerProcess::restart);
		awaitReady();
	}

	/** Kills every master. {@link #restart()} brings them back. */
	public void kill() {
		this.masters.forEach(RedisServerProcess::kill);
	}

	@Override
	public void close() {
		this.masters.forEach(RedisServerProcess::close);
	}

	private void assignSlots() {
		int count = this.masters.size();
		for (int i = 0; i < count; i++) {
			int from = i * 16384 / count;
			int to = (i + 1) * 16384 / count;
			List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
			IntStream.range(from, to).mapToObj(Integer::toString).forEach(command::add);
			String reply = this.masters.get(i).command(command.toArray(String[]::new));
			if (!reply.equals("+OK")) {
				throw new IllegalStateException("CLUSTER ADDSLOTS on " + this.masters.get(i).port() + " answered " + reply);
			}
		}
	}

	private void meet() {
		RedisServerProcess first = this.masters.get(0);
		for (RedisServerProcess other : this.masters.subList(1, this.masters.size())) {
			first.command("CLUSTER", "MEET", other.host(), Integer.toString(other.port()));
		}
	}

	private void awaitReady() {
		long deadline = System.currentTimeMillis() + READY_TIMEOUT_MILLIS;
		while (System.currentTimeMillis() < deadline) {
			if (this.masters.stream().allMatch(this::healthy)) {
				return;
			}
			try {
				Thread.sleep(50);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while waiting for the cluster", ex);
			}
		}
		throw new IllegalStateException("Redis Cluster on " + nodes() + " did not become healthy within "
				+ READY_TIMEOUT_MILLIS + " ms");
	}

	/**
	 * Whether {@code master} sees the whole cluster as a client's topology will: every master known,
	 * none failing or in handshake, and every cluster-bus link up (a client leaves a node whose link
	 * reads {@code disconnected} out of the commands it runs on all masters, e.g. {@code INFO}).
	 */
	private boolean healthy(RedisServerProcess master) {
		String info = master.query("CLUSTER", "INFO");
		String nodes = master.query("CLUSTER", "NODES");
		long known = nodes.lines().filter(line -> line.contains("master") && !line.contains("fail")).count();
		boolean linked = nodes.lines().filter(line -> !line.isBlank()).allMatch(RedisClusterProcess::linkedUp);
		return info.contains("cluster_state:ok") && known == this.masters.size() && linked;
	}

	/** @param line a CLUSTER NODES line: id, address, flags, master, ping, pong, epoch, link state, slots */
	private static boolean linkedUp(String line) {
		String[] fields = line.trim().split(" ");
		return fields.length >= 8 && "connected".equals(fields[7]) && !fields[2].contains("handshake")
				&& !fields[2].contains("noaddr");
	}

}
