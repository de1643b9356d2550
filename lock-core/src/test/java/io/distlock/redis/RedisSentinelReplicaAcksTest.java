package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.LockListener;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisSentinelGroup;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.ClosedAfterEach;

/**
 * How many holders overlap when Sentinel promotes a replica that missed the last grant: the master
 * is killed right after it, while the replica's link drops everything. The restart grace is
 * off here, to show what the acknowledgement does by itself (with it on, the promoted replica serves
 * the grace, see {@link RedisPromotionTest}). Without acknowledgement the old holder still believes
 * it holds when a new client takes the lock on the promoted replica; with one, the grant that no
 * replica had was refused, so there was nobody to overlap with.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisSentinelReplicaAcksTest {

	/** Long enough that no renewal (which would find the hold gone) tells the old holder during the failover. */
	private static final Duration WATCHDOG = Duration.ofSeconds(60);

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	@Test
	void withoutAcknowledgementAGrantTheReplicaMissedLetsASecondHolderInAfterTheFailover() throws Exception {
		Failover failover = failoverAfterAGrantTheReplicaMissed(RedisReplicaAcks.NONE);
		assertThat(failover.oldHolderBelievesItHolds()).as("the old holder was granted the lock").isTrue();
		assertThat(failover.newHolderGotIn()).as("a new client got the lock on the promoted replica").isTrue();
	}

	@Test
	void withOneAcknowledgementNoHolderOverlapsAfterTheFailover() throws Exception {
		Failover failover = failoverAfterAGrantTheReplicaMissed(RedisReplicaAcks.of(1, Duration.ofMillis(300)));
		assertThat(failover.oldHolderBelievesItHolds()).as("the grant no replica had was refused").isFalse();
		assertThat(failover.newHolderGotIn()).isTrue();
	}

	@Test
	void withOneAcknowledgementAGrantSurvivesTheFailoverOfItsMaster() throws Exception {
		RedisSentinelGroup group = this.opened.add(RedisSentinelGroup.start());
		RedisServerProcess master = group.master();
		awaitStreaming(group, master);
		DistLock held = client(group, RedisReplicaAcks.of(1, Duration.ofSeconds(2))).getLock("survives");
		assertThat(held.tryLock(Duration.ofSeconds(5))).isTrue();
		// Killed right after the grant: the replica has it, because the grant waited until it did.
		master.kill();
		group.awaitNewMaster(master, Duration.ofSeconds(60));
		DistLock other = client(group, RedisReplicaAcks.NONE).getLock("survives");
		assertThat(other.tryLock(Duration.ZERO)).as("the promoted replica still has the hold").isFalse();
		// Asked of Redis: once the holder's client has found the new master (its reconnects back off).
		await("Redis to say the holder holds it").pollInSameThread().atMost(Duration.ofSeconds(30))
			.until(held::isHeldByCurrentThread);
		held.unlock();
	}

	private Failover failoverAfterAGrantTheReplicaMissed(RedisReplicaAcks acks) throws Exception {
		RedisSentinelGroup group = this.opened.add(RedisSentinelGroup.startWithRelayedReplicaLink());
		RedisServerProcess master = group.master();
		RedisServerProcess replica = group.dataNodes().stream().filter(node -> node != master).findFirst().orElseThrow();
		awaitStreaming(group, master);
		AtomicBoolean told = new AtomicBoolean();
		DistLock old = client(group, acks, lost -> told.set(true)).getLock("failover");
		// The replica's link breaks unnoticed: the grant (and the master's pings) never reach it.
		group.replicaLink().drop();
		boolean granted = acks.enabled() ? refused(old) : old.tryLock(Duration.ofSeconds(2));
		assertThat(granted).as("granted by the master").isEqualTo(!acks.enabled());
		master.kill();
		assertThat(group.awaitNewMaster(master, Duration.ofSeconds(60))).isSameAs(replica);
		// What the old holder believes (its own hold table, and no loss reported), not what Redis says.
		boolean believes = granted && old.getHoldCount() > 0 && !told.get();
		// Without acknowledgement: the promoted replica has no replica left to acknowledge anything.
		DistLock fresh = client(group, RedisReplicaAcks.NONE).getLock("failover");
		boolean newHolder = fresh.tryLock(Duration.ofSeconds(10));
		if (newHolder) {
			fresh.unlock();
		}
		return new Failover(believes, newHolder);
	}

	private static boolean refused(DistLock lock) {
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> lock.tryLock(Duration.ofSeconds(2)))
			.withMessageContaining("distlock.redis.replica-acks");
		return false;
	}

	private static void awaitStreaming(RedisSentinelGroup group, RedisServerProcess master) {
		ReplicatedRedis.awaitStreaming(master,
				group.dataNodes().stream().filter(node -> node != master).findFirst().orElseThrow());
	}

	private RedisLockRegistry client(RedisSentinelGroup group, RedisReplicaAcks acks) {
		return client(group, acks, lost -> {
		});
	}

	private RedisLockRegistry client(RedisSentinelGroup group, RedisReplicaAcks acks, LockListener listener) {
		LettuceConnectionFactory factory = this.opened.add(new RedisTestClients(group, Duration.ofSeconds(2)))
			.connectionFactory();
		return this.opened.add(new RedisLockRegistry(factory, RedisLockRegistry.DEFAULT_KEY_PREFIX,
				LockEngineOptions.builder().watchdogTimeout(WATCHDOG).restartGrace(Duration.ZERO).listener(listener).build(),
				acks));
	}

	/**
	 * @param oldHolderBelievesItHolds whether the client granted the lock before the failover still
	 * believed it held it when the new client asked
	 * @param newHolderGotIn whether a client that asked after the failover got the lock
	 */
	private record Failover(boolean oldHolderBelievesItHolds, boolean newHolderGotIn) {
	}

}
