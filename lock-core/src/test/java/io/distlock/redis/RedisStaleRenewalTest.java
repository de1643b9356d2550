package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.core.AcquireRequest;
import io.distlock.core.BackendLockRegistry;
import io.distlock.core.LockBackend;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.HoldRef;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.LockEngineOptions;
import io.distlock.core.ReleaseRequest;
import io.distlock.testing.ForwardingLockBackend;
import io.distlock.testing.RedisServerExtension;

/**
 * A watchdog renewal that reaches Redis only after the hold it was sent for is gone, and its owner
 * (the same thread) has taken the lock again with a short lease: it must not stretch that new hold
 * to the watchdog's lease, which a crashed holder would then block others for, and which the engine
 * does not know of. The interleaving is forced, not timed: the stale renewal is sent by hand, or
 * held back by the backend until the owner has unlocked and locked again.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisStaleRenewalTest {

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisServer);

	private static final Duration WATCHDOG_LEASE = Duration.ofSeconds(30);

	private static final Duration SHORT_LEASE = Duration.ofSeconds(1);

	private RedisLockBackend backend;

	@AfterEach
	void closeBackend() {
		if (this.backend != null) {
			this.backend.close();
		}
	}

	private RedisLockBackend backend() {
		this.backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		return this.backend;
	}

	@Test
	void aRenewalOfAReleasedHoldDoesNotStretchTheOwnersNextHold() {
		RedisLockBackend backend = backend();
		Acquisition first = acquire(backend, "stale", "a:1", WATCHDOG_LEASE, "ticket-1");
		// What the watchdog took from its list for the first hold, before the owner released it.
		HoldRef renewal = new HoldRef("stale", "a:1", first.attemptId());
		assertThat(backend.release(new ReleaseRequest("stale", "a:1", 1, first.attemptId(), Acquisition.NO_TOKEN, null)))
			.isEqualTo(Release.RELEASED);
		Acquisition second = acquire(backend, "stale", "a:1", SHORT_LEASE, "ticket-2");

		// Straight on the shared connection (the watchdog's path on a single server), then through
		// the template (a Cluster's, a pool's, Redlock's).
		assertThat(backend.renew(List.of(renewal), WATCHDOG_LEASE, Duration.ofSeconds(5)))
			.as("the renewal of the released hold").containsExactly(false);
		assertThat(backend.renew(List.of(renewal), WATCHDOG_LEASE, null)).as("the same through the template")
			.containsExactly(false);
		assertThat(backend.remainingLease("stale")).as("the second hold's lease").isLessThanOrEqualTo(SHORT_LEASE);
		assertThat(backend.isHeldBy("stale", "a:1")).as("the second hold is kept").isTrue();

		assertThat(backend.renew(List.of(new HoldRef("stale", "a:1", second.attemptId())), WATCHDOG_LEASE, null))
			.as("the second hold's own renewal").containsExactly(true);
		assertThat(backend.remainingLease("stale")).isGreaterThan(SHORT_LEASE);
	}

	@Test
	void aHoldHandedToAQueuedOwnerIsRenewedByItsTicketBeforeAndAfterItIsTakenUp() {
		RedisLockBackend backend = backend();
		Duration queueFor = Duration.ofSeconds(10);
		Acquisition earlier = acquire(backend, "handed", "b:1", WATCHDOG_LEASE, "b-earlier");
		assertThat(backend.release(new ReleaseRequest("handed", "b:1", 1, earlier.attemptId(), Acquisition.NO_TOKEN, null)))
			.isEqualTo(Release.RELEASED);
		acquire(backend, "handed", "a:1", WATCHDOG_LEASE, "a-1");
		assertThat(backend.acquire(new AcquireRequest("handed", "b:1", 0, WATCHDOG_LEASE, queueFor, "b-queued")).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(backend.release(ReleaseRequest.of("handed", "a:1", 1))).isEqualTo(Release.RELEASED);
		assertThat(backend.isHeldBy("handed", "b:1")).as("handed to the queued owner").isTrue();

		assertThat(backend.renew(List.of(new HoldRef("handed", "b:1", "b-earlier")), WATCHDOG_LEASE, null))
			.as("a renewal of the owner's earlier hold").containsExactly(false);
		assertThat(backend.remainingLease("handed")).as("the hand-off's provisional lease").isLessThanOrEqualTo(LockBackend.QUEUE_PLACE);
		assertThat(backend.renew(List.of(new HoldRef("handed", "b:1", "b-queued")), WATCHDOG_LEASE, null))
			.as("the extension of the hold handed over").containsExactly(true);

		Acquisition takenUp = acquire(backend, "handed", "b:1", WATCHDOG_LEASE, "b-queued");
		assertThat(backend.renew(List.of(new HoldRef("handed", "b:1", takenUp.attemptId())), WATCHDOG_LEASE,
				Duration.ofSeconds(5)))
			.as("a renewal of the hold taken up").containsExactly(true);
	}

	@Test
	void aRenewalThatNamesNoAttemptRenewsWhateverHoldTheOwnerHas() {
		RedisLockBackend backend = backend();
		acquire(backend, "any", "a:1", SHORT_LEASE, "ticket-1");
		assertThat(backend.renew(List.of(new HoldRef("any", "a:1")), WATCHDOG_LEASE, Duration.ofSeconds(5)))
			.containsExactly(true);
		assertThat(backend.remainingLease("any")).isGreaterThan(SHORT_LEASE);
		assertThat(backend.renew(List.of(new HoldRef("any", "b:1")), WATCHDOG_LEASE, Duration.ofSeconds(5)))
			.as("another owner's renewal").containsExactly(false);
	}

	@Test
	void aHoldHandedOverByAnEarlierVersionIsRenewedByTheTicketItNames() {
		RedisLockBackend backend = backend();
		// An earlier distlock's release.lua named the hold's attempt ':ticket'.
		this.clients.redis().opsForHash().putAll("distlock:{upgraded}", Map.of("a:1", "1", ":ticket", "old-ticket"));
		this.clients.redis().expire("distlock:{upgraded}", SHORT_LEASE);
		assertThat(backend.renew(List.of(new HoldRef("upgraded", "a:1", "other-ticket")), WATCHDOG_LEASE, null))
			.containsExactly(false);
		assertThat(backend.renew(List.of(new HoldRef("upgraded", "a:1", "old-ticket")), WATCHDOG_LEASE, null))
			.containsExactly(true);
		assertThat(backend.remainingLease("upgraded")).isGreaterThan(SHORT_LEASE);
	}

	@Test
	void aWatchdogRenewalThatLandsAfterUnlockAndRelockLeavesTheNewHoldItsOwnLease() throws Exception {
		// 6 s: the watchdog's first renewal comes 2 s after the lock; the second hold's 3 s lease
		// outlasts the test's few calls on a loaded machine, and is well below the watchdog's.
		Duration watchdog = Duration.ofSeconds(6);
		Duration explicit = Duration.ofSeconds(3);
		HeldBackRenewal held = new HeldBackRenewal(new RedisLockBackend(this.clients.connectionFactory(), "distlock"), "held-back");
		try (BackendLockRegistry registry = new BackendLockRegistry(held,
				LockEngineOptions.builder().watchdogTimeout(watchdog).build())) {
			DistLock lock = registry.getLock("held-back");
			lock.lock();
			assertThat(held.taken.await(30, TimeUnit.SECONDS)).as("the watchdog sends a renewal of the first hold").isTrue();
			lock.unlock();
			lock.lock(explicit);
			held.letGo.countDown();
			assertThat(held.landed.await(30, TimeUnit.SECONDS)).as("the held-back renewal landed").isTrue();

			assertThat(held.remainingLease("held-back")).as("the second hold's lease after the late renewal")
				.isLessThanOrEqualTo(explicit);
			assertThat(registry.lostHolds()).isZero();
			lock.unlock();
		}
	}

	private static Acquisition acquire(LockBackend backend, String name, String owner, Duration lease, String ticket) {
		Acquisition acquired = backend.acquire(new AcquireRequest(name, owner, 0, lease, Duration.ZERO, ticket));
		assertThat(acquired.status()).isEqualTo(Acquisition.Status.ACQUIRED);
		return acquired;
	}

	/**
	 * A real backend that holds back the first renewal of one lock, as a slow connection or a renewal
	 * thread still waiting through the template would, until the test lets it go; every other call
	 * goes straight through.
	 */
	static final class HeldBackRenewal extends ForwardingLockBackend {

		private final String name;

		private final AtomicBoolean holding = new AtomicBoolean();

		/** Counted down when the watchdog has handed over its renewal of the lock. */
		final CountDownLatch taken = new CountDownLatch(1);

		/** Lets the renewal go on to Redis. */
		final CountDownLatch letGo = new CountDownLatch(1);

		/** Counted down when Redis has answered the held-back renewal. */
		final CountDownLatch landed = new CountDownLatch(1);

		HeldBackRenewal(LockBackend backend, String name) {
			super(backend);
			this.name = name;
		}

		@Override
		public List<Boolean> renew(List<HoldRef> holds, Duration lease, Duration within) {
			boolean hold = holds.stream().anyMatch(ref -> ref.name().equals(this.name)) && this.holding.compareAndSet(false, true);
			if (!hold) {
				return backend().renew(holds, lease, within);
			}
			this.taken.countDown();
			try {
				if (!this.letGo.await(60, TimeUnit.SECONDS)) {
					throw new IllegalStateException("The test never let the renewal go");
				}
				return backend().renew(holds, lease, within);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			finally {
				this.landed.countDown();
			}
		}

	}

}
