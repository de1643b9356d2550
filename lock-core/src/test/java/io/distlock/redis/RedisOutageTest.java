package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.LockLostException;
import io.distlock.LostHold;
import io.distlock.testing.RedisServerExtension;

/**
 * A holder learns of a hold lost to an outage when its lease runs out, not at the connection's
 * command timeout, and {@code unlock()} on a dead Redis does not hang: the clients here keep Spring
 * Boot's default command timeout of 60 s, which the old watchdog waited out before telling anyone.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisOutageTest {

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	private static final Duration LEASE = Duration.ofSeconds(3);

	/** How late, past the lease, the holder may be told: the documented margin. */
	private static final Duration MARGIN = Duration.ofSeconds(1);

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisServer, Duration.ofSeconds(60));

	@AfterEach
	void tearDown() throws Exception {
		if (redisServer.server().isRunning()) {
			// A frozen server must be thawed before the clients close, or closing waits for it.
			redisServer.server().resume();
		}
	}

	@Test
	void aHolderIsToldOfItsLossWithinItsLeaseWhenRedisDies() {
		toldWithinTheLease("killed", () -> redisServer.server().kill());
	}

	@Test
	void aHolderIsToldOfItsLossWithinItsLeaseWhenRedisFreezes() {
		toldWithinTheLease("frozen", () -> redisServer.server().pause());
	}

	private void toldWithinTheLease(String name, Runnable outage) {
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		List<Long> toldAt = new CopyOnWriteArrayList<>();
		RedisLockRegistry registry = this.clients.registry(LEASE, hold -> {
			toldAt.add(System.nanoTime());
			lost.add(hold);
		});
		DistLock lock = registry.getLock(name);
		lock.lock();
		// One renewal went through: the lease the holder relies on is a renewed one.
		await().atMost(Duration.ofSeconds(10)).until(() -> registry.watchdogRenewals() >= 1);

		long outageAt = System.nanoTime();
		outage.run();
		await().atMost(LEASE.plus(MARGIN).plus(Duration.ofSeconds(30))).until(() -> !toldAt.isEmpty());
		Duration told = Duration.ofNanos(toldAt.get(0) - outageAt);
		assertThat(told).as("told %s after the outage began", told).isLessThanOrEqualTo(LEASE.plus(MARGIN));
		assertThat(lost.get(0).lockName()).isEqualTo(name);

		long unlockAt = System.nanoTime();
		assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
		assertThat(Duration.ofNanos(System.nanoTime() - unlockAt)).as("unlock() on a dead Redis")
			.isLessThanOrEqualTo(Duration.ofSeconds(3));
		assertThat(registry.heldLocks()).isEmpty();
	}

	@Test
	void unlockOnADeadRedisEndsWithinTheLeaseItWouldHaveHad() {
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(30));
		DistLock lock = registry.getLock("dead-unlock");
		lock.lock(LEASE);
		redisServer.server().pause();
		long unlockAt = System.nanoTime();
		assertThatThrownBy(lock::unlock).isInstanceOf(RuntimeException.class);
		assertThat(Duration.ofNanos(System.nanoTime() - unlockAt)).as("unlock() on a frozen Redis")
			.isLessThanOrEqualTo(LEASE.plus(MARGIN).plus(Duration.ofSeconds(1)));
		assertThat(registry.heldLocks()).as("no longer renewed or listed").isEmpty();
	}

}
