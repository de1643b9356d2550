package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;

import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.ClosedAfterEach;

/**
 * A master and its replica, each on a free port and closed after the test, with the replica already
 * taking the master's writes in.
 *
 * @param master the master
 * @param replica its replica
 */
record ReplicatedRedis(RedisServerProcess master, RedisServerProcess replica) {

	/**
	 * Waits until a write reaches the replica, not only until its link is up: after a diskless sync the
	 * master sends its replica nothing (a GETACK neither) until the replica's first ack, up to a second
	 * later, and until then the replica acknowledges nothing.
	 * @param opened closes both after the test
	 * @return the running pair
	 */
	static ReplicatedRedis start(ClosedAfterEach opened) {
		RedisServerProcess master = opened.add(RedisServerProcess.start("--repl-diskless-sync-delay", "0"));
		RedisServerProcess replica = opened.add(RedisServerProcess.start("--repl-diskless-sync-delay", "0",
				"--replicaof", master.host(), Integer.toString(master.port())));
		await().atMost(Duration.ofSeconds(20))
			.until(() -> replica.query("INFO", "replication").contains("master_link_status:up"));
		awaitStreaming(master, replica);
		return new ReplicatedRedis(master, replica);
	}

	/**
	 * Waits until a write of the master reaches the replica: a freshly synced one streams (and
	 * acknowledges) only from its first ack on.
	 * @param master the master
	 * @param replica its replica
	 */
	static void awaitStreaming(RedisServerProcess master, RedisServerProcess replica) {
		assertThat(master.command("SET", "streaming", "yes")).isEqualTo("+OK");
		await().atMost(Duration.ofSeconds(20)).until(() -> "1".equals(replica.query("EXISTS", "streaming")));
	}

	/**
	 * A client of its own with no restart grace (every test server starts empty).
	 * @param opened closes it after the test
	 * @param server the server it locks on
	 * @param acks how many replicas must have a hold
	 * @return the registry
	 */
	static RedisLockRegistry registry(ClosedAfterEach opened, RedisServerProcess server, RedisReplicaAcks acks) {
		RedisTestClients clients = opened.add(new RedisTestClients(server));
		return opened.add(new RedisLockRegistry(clients.connectionFactory(), RedisLockRegistry.DEFAULT_KEY_PREFIX,
				LockEngineOptions.builder().restartGrace(Duration.ZERO).build(), acks));
	}

}
