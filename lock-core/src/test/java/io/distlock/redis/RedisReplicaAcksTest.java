package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.ClosedAfterEach;

/**
 * {@code distlock.redis.replica-acks}: a hold counts only once that many replicas have it, so that a
 * master that crashes right after a grant cannot leave a promoted replica without it. Each test
 * freezes the replica (SIGSTOP: its link stays open, but it acknowledges nothing) where a replica
 * would miss the grant.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisReplicaAcksTest {

	private static final RedisKeys KEYS = new RedisKeys(RedisLockRegistry.DEFAULT_KEY_PREFIX, false);

	private static final Pattern WAITING_CLIENT = Pattern.compile("id=(\\d+) [^\\n]*cmd=wait\\b");

	private static final RedisReplicaAcks ONE_REPLICA = RedisReplicaAcks.of(1, Duration.ofMillis(300));

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	@Test
	void aHoldCountsOnceTheReplicaHasIt() throws InterruptedException {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisServerProcess master = servers.master();
		RedisServerProcess replica = servers.replica();
		DistLock lock = registry(master, ONE_REPLICA).getLock("acknowledged");

		assertThat(lock.tryLock(Duration.ofSeconds(2))).isTrue();
		assertThat(replica.query("EXISTS", KEYS.lock("acknowledged"))).as("the replica has the hold when lock() returns")
			.isEqualTo("1");
		lock.unlock();
	}

	@Test
	void withoutAcknowledgementsAHoldTheReplicaMissedIsGrantedAnyway() throws InterruptedException {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisServerProcess master = servers.master();
		RedisServerProcess replica = servers.replica();
		DistLock lock = registry(master, RedisReplicaAcks.NONE).getLock("unacknowledged");
		replica.pause();
		try {
			// The fault the acknowledgement exists for: the master grants what no replica has.
			assertThat(lock.tryLock(Duration.ofSeconds(2))).isTrue();
			lock.unlock();
		}
		finally {
			replica.resume();
		}
	}

	@Test
	void aHoldNoReplicaAcknowledgesIsGivenBackAndTheCallerToldWhichPropertyAsksForIt() {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisServerProcess master = servers.master();
		RedisServerProcess replica = servers.replica();
		DistLock lock = registry(master, ONE_REPLICA).getLock("missed");
		replica.pause();
		try {
			assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> lock.tryLock(Duration.ofSeconds(2)))
				.withMessageContaining("only 0 of the 1 replica(s) that distlock.redis.replica-acks asks for")
				.withMessageContaining("given back");
			assertThat(master.query("EXISTS", KEYS.lock("missed"))).as("the hold was given back").isEqualTo("0");
			assertThat(lock.isHeldByCurrentThread()).isFalse();
		}
		finally {
			replica.resume();
		}
	}

	@Test
	void aHoldHandedOverCountsOnlyOnceTheReplicaHasIt() throws Exception {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisServerProcess master = servers.master();
		RedisServerProcess replica = servers.replica();
		DistLock held = registry(master, RedisReplicaAcks.NONE).getLock("handed-over");
		DistLock waiting = registry(master, ONE_REPLICA).getLock("handed-over");
		assertThat(held.tryLock(Duration.ZERO)).isTrue();
		CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
			try {
				return waiting.tryLock(Duration.ofSeconds(20));
			}
			catch (InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		});
		// Queued and listening: the release hands the lock over and announces it to the waiter.
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			assertThat(master.query("LLEN", KEYS.queue("handed-over"))).isEqualTo("1");
			assertThat(master.query("PUBSUB", "NUMSUB", KEYS.releaseChannel("handed-over")).trim()).endsWith("1");
			assertThat(master.query("PUBSUB", "CHANNELS", KEYS.grantChannelPrefix() + "*")).contains(KEYS.grantChannelPrefix());
		});
		replica.pause();
		try {
			held.unlock();
			assertThat(waiter).failsWithin(Duration.ofSeconds(15))
				.withThrowableThat()
				.havingRootCause()
				.isInstanceOf(LockBackendException.class)
				.withMessageContaining("distlock.redis.replica-acks");
			assertThat(master.query("EXISTS", KEYS.lock("handed-over"))).as("the hand-off was given back").isEqualTo("0");
		}
		finally {
			replica.resume();
		}
	}

	@Test
	void aReconnectBetweenTheAcquisitionAndItsWaitVoidsTheAcknowledgement() throws Exception {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisServerProcess master = servers.master();
		RedisServerProcess replica = servers.replica();
		DistLock lock = registry(master, RedisReplicaAcks.of(1, Duration.ofSeconds(10))).getLock("reconnected");
		replica.pause();
		try {
			CompletableFuture<Boolean> taking = CompletableFuture.supplyAsync(() -> {
				try {
					return lock.tryLock(Duration.ofSeconds(20));
				}
				catch (InterruptedException ex) {
					throw new IllegalStateException(ex);
				}
			});
			String[] waitingClient = new String[1];
			await().atMost(Duration.ofSeconds(10)).until(() -> {
				Matcher waiting = WAITING_CLIENT.matcher(master.query("CLIENT", "LIST"));
				return waiting.find() && (waitingClient[0] = waiting.group(1)) != null;
			});
			// Lettuce re-sends the unanswered WAIT on its new connection, which wrote nothing and so is
			// acknowledged at once, by a replica that never had the hold.
			assertThat(master.query("CLIENT", "KILL", "ID", waitingClient[0])).isEqualTo("1");
			assertThat(taking).failsWithin(Duration.ofSeconds(15))
				.withThrowableThat()
				.havingRootCause()
				.isInstanceOf(LockBackendException.class)
				.withMessageContaining("re-established");
			assertThat(master.query("EXISTS", KEYS.lock("reconnected"))).isEqualTo("0");
		}
		finally {
			replica.resume();
		}
	}

	@Test
	void aServerThatRefusesWaitFailsTheAcquisitionAndSaysHowToTurnItOff() {
		RedisServerProcess server = this.opened.add(RedisServerProcess.start("--rename-command", "WAIT", "WAIT-REFUSED-BY-A-PROXY"));
		DistLock lock = registry(server, ONE_REPLICA).getLock("proxied");
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> lock.tryLock(Duration.ofSeconds(2)))
			.withMessageContaining("refused WAIT")
			.withMessageContaining("set distlock.redis.replica-acks=0");
		assertThat(server.query("EXISTS", KEYS.lock("proxied"))).isEqualTo("0");
	}

	private RedisLockRegistry registry(RedisServerProcess server, RedisReplicaAcks acks) {
		return ReplicatedRedis.registry(this.opened, server, acks);
	}

}
