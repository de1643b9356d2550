package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.HoldInfo;
import io.distlock.LockLostException;
import io.distlock.LostHold;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.ReleaseRequest;
import io.distlock.testing.RedisServerExtension;

/**
 * Regression tests for defects of the lock engine over a single Redis server: a registry closing
 * while one of its waiters is handed the lock, pending interrupts, holds that Redis lost, holds with
 * an explicit lease that ran out, and an unlock that could not reach Redis.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class RedisEngineRegressionTest {

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisServer);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void tearDown() throws Exception {
		// A failed interrupt test must not leave the flag set for the clean-up.
		Thread.interrupted();
		this.threads.shutdownNow();
	}

	@Test
	void closingARegistryNeverLetsItsWaiterAndTheNextInLineHoldTheLockTogether() throws Exception {
		// The race: A's unlock hands the lock to B's waiting thread T while B closes. Closing must only
		// take waiters out of the queue, never free a hold T was just handed and is about to use.
		int iterations = 40;
		RedisLockRegistry holderClient = this.clients.registry(Duration.ofSeconds(30));
		RedisLockRegistry nextClient = this.clients.registry(Duration.ofSeconds(30));
		int overlaps = 0;
		List<String> unexpected = new CopyOnWriteArrayList<>();
		AtomicInteger tHeld = new AtomicInteger();
		AtomicInteger tClosed = new AtomicInteger();
		for (int i = 0; i < iterations; i++) {
			String name = "close-race-" + i;
			try (RedisTestClients closingClients = new RedisTestClients(redisServer.server())) {
				RedisLockRegistry closing = closingClients.registry(Duration.ofSeconds(30));
				AtomicInteger inside = new AtomicInteger();
				AtomicBoolean overlapped = new AtomicBoolean();
				CountDownLatch aHolds = new CountDownLatch(1);
				CountDownLatch go = new CountDownLatch(1);

				Future<?> holder = this.threads.submit(() -> {
					DistLock lock = holderClient.getLock(name);
					lock.lock();
					aHolds.countDown();
					go.await();
					lock.unlock();
					return null;
				});
				assertThat(aHolds.await(10, TimeUnit.SECONDS)).isTrue();

				Future<?> t = this.threads.submit(() -> {
					DistLock lock = closing.getLock(name);
					try {
						lock.lock();
					}
					catch (IllegalStateException closed) {
						// Allowed: the registry closed before T got the lock (or after T released it itself).
						if (!String.valueOf(closed.getMessage()).contains("closed")) {
							unexpected.add("T: " + closed);
						}
						tClosed.incrementAndGet();
						return null;
					}
					catch (RuntimeException ex) {
						unexpected.add("T: " + ex);
						return null;
					}
					tHeld.incrementAndGet();
					criticalSection(inside, overlapped, 75);
					try {
						lock.unlock();
					}
					catch (RuntimeException ex) {
						// The registry is closed by now; whatever unlock says, T is out of its section.
					}
					return null;
				});
				// Looked at from the start and then often: with Awaitility's first look after 100 ms, these two
				// waits were most of each of the 40 rounds.
				await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(5)).atMost(Duration.ofSeconds(10))
					.until(() -> queueLength(name) == 1);

				Future<?> u = this.threads.submit(() -> {
					DistLock lock = nextClient.getLock(name);
					lock.lock();
					try {
						criticalSection(inside, overlapped, 50);
					}
					finally {
						lock.unlock();
					}
					return null;
				});
				// U queued in Redis behind T: the release goes to T.
				await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(5)).atMost(Duration.ofSeconds(10))
					.until(() -> queueLength(name) == 2);

				Future<?> closer = this.threads.submit(() -> {
					go.await();
					closing.close();
					return null;
				});
				go.countDown();
				holder.get(20, TimeUnit.SECONDS);
				closer.get(20, TimeUnit.SECONDS);
				t.get(30, TimeUnit.SECONDS);
				// Nothing stuck: whatever T did, U gets the lock (at worst after a handed-over hold's lease).
				assertThatCode(() -> u.get(30, TimeUnit.SECONDS)).as("U gets lock '%s' in iteration %d", name, i)
					.doesNotThrowAnyException();
				if (overlapped.get()) {
					overlaps++;
				}
			}
		}
		assertThat(unexpected).as("T's lock() either returns or says the registry is closed").isEmpty();
		assertThat(overlaps).as("iterations (of %d; T got the lock in %d, found the registry closed in %d) in which "
				+ "T and U were inside their critical sections together", iterations, tHeld.get(), tClosed.get())
			.isZero();
	}

	/** @return how many owners wait in the lock's queue in Redis (arrival order is the hand-off order) */
	private long queueLength(String name) {
		Long length = this.clients.redis().opsForList().size("distlock:{" + name + "}:queue");
		return (length != null) ? length : 0;
	}

	/** Marks the caller inside for {@code millis} (the work), noting if anyone else was inside meanwhile. */
	private static void criticalSection(AtomicInteger inside, AtomicBoolean overlapped, long millis)
			throws InterruptedException {
		if (inside.incrementAndGet() > 1) {
			overlapped.set(true);
		}
		try {
			Thread.sleep(millis);
		}
		finally {
			if (inside.decrementAndGet() > 0) {
				overlapped.set(true);
			}
		}
	}

	@Test
	void unlockWithAPendingInterruptStillReleases() {
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(30));
		DistLock other = this.clients.registry(Duration.ofSeconds(30)).getLock("interrupted-unlock");
		DistLock lock = registry.getLock("interrupted-unlock");
		for (int i = 0; i < 8; i++) {
			lock.lock();
			Thread.currentThread().interrupt();
			try {
				assertThatCode(lock::unlock).as("unlock() with a pending interrupt, round %d", i).doesNotThrowAnyException();
				assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is still pending").isTrue();
			}
			finally {
				Thread.interrupted();
			}
			assertThat(registry.heldLocks()).isEmpty();
			assertThat(other.tryLock()).as("released in Redis").isTrue();
			other.unlock();
		}
	}

	@Test
	void lockWithAPendingInterruptAcquiresAndKeepsTheFlag() throws Exception {
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(30));
		DistLock other = this.clients.registry(Duration.ofSeconds(30)).getLock("interrupted-lock");
		DistLock lock = registry.getLock("interrupted-lock");
		// Connected first, so that the lock calls themselves meet the interrupt; the very first call is below.
		lock.lock();
		lock.unlock();

		// Lock.lock() and Lock.tryLock() are not interruptible: they acquire and leave the flag set.
		Thread.currentThread().interrupt();
		try {
			assertThatCode(lock::lock).as("lock() with a pending interrupt").doesNotThrowAnyException();
			assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is still pending after lock()").isTrue();
		}
		finally {
			Thread.interrupted();
		}
		assertThat(lock.getHoldCount()).isEqualTo(1);
		assertThat(other.tryLock()).as("held in Redis").isFalse();
		lock.unlock();

		Thread.currentThread().interrupt();
		try {
			assertThat(lock.tryLock()).as("tryLock() with a pending interrupt").isTrue();
			assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is still pending after tryLock()").isTrue();
		}
		finally {
			Thread.interrupted();
		}
		assertThat(other.tryLock()).as("held in Redis").isFalse();
		lock.unlock();

		// A timed tryLock is interruptible: a pending interrupt ends it at once, without the lock.
		Thread.currentThread().interrupt();
		try {
			assertThatThrownBy(() -> lock.tryLock(Duration.ofSeconds(1))).isInstanceOf(InterruptedException.class);
		}
		finally {
			Thread.interrupted();
		}
		assertThat(registry.heldLocks()).isEmpty();
		assertThat(other.tryLock()).as("not taken by the interrupted tryLock(Duration)").isTrue();
		other.unlock();

		// A registry's first lock() also connects to Redis; the pending interrupt must not break that either.
		RedisLockRegistry fresh = this.clients.registry(Duration.ofSeconds(30));
		DistLock first = fresh.getLock("interrupted-first-lock");
		Thread.currentThread().interrupt();
		try {
			assertThatCode(first::lock).as("a new registry's first lock() with a pending interrupt").doesNotThrowAnyException();
			assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is still pending after lock()").isTrue();
		}
		finally {
			Thread.interrupted();
		}
		first.unlock();
		assertThat(fresh.heldLocks()).isEmpty();
	}

	@Test
	void unlockOfAHoldThatRedisLostThrowsAndTellsTheListeners() {
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(30), lost::add);
		DistLock lock = registry.getLock("flushed");
		lock.lock();
		// Data loss (a failover to a replica that had not received the hold, a restart without persistence).
		redisServer.server().command("FLUSHALL");
		DistLock other = this.clients.registry(Duration.ofSeconds(30)).getLock("flushed");
		assertThat(other.tryLock()).isTrue();

		assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class).hasMessageContaining("'flushed'");
		await().atMost(Duration.ofSeconds(5)).until(() -> lost.stream().anyMatch(hold -> hold.lockName().equals("flushed")));
		assertThat(registry.heldLocks()).isEmpty();
		assertThat(other.isHeldByCurrentThread()).as("the other client's hold survives the failed unlock").isTrue();
		other.unlock();
	}

	@Test
	void aReleaseAppliedTwiceIsNotALoss() {
		// A copy of the release re-sent after a reconnect reaches Redis after the original.
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		Duration lease = Duration.ofSeconds(30);
		// As the engine calls it: the attempt's ticket becomes the hold's id, which the release names.
		Acquisition taken = backend.acquire(new AcquireRequest("twice", "a:1", 0, lease, Duration.ZERO, "ticket-1"));
		assertThat(taken.status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(taken.attemptId()).isEqualTo("ticket-1");
		assertThat(backend.release(new ReleaseRequest("twice", "a:1", 1, taken.attemptId(), Acquisition.NO_TOKEN, null)))
			.isEqualTo(Release.RELEASED);
		assertThat(backend.release(new ReleaseRequest("twice", "a:1", 1, taken.attemptId(), Acquisition.NO_TOKEN, null)))
			.as("the copy").isEqualTo(Release.RELEASED);
		// A release of a hold that is gone without having been released is not mistaken for a copy.
		Acquisition next = backend.acquire(new AcquireRequest("twice", "a:1", 0, lease, Duration.ZERO, "ticket-2"));
		this.clients.template().delete("distlock:{twice}");
		assertThat(backend.release(new ReleaseRequest("twice", "a:1", 1, next.attemptId(), Acquisition.NO_TOKEN, null)))
			.isEqualTo(Release.NOT_HELD);
		// Whatever recognises the copy does not keep the lock from others.
		assertThat(backend.acquire(AcquireRequest.of("twice", "b:1", 0, lease)).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(backend.release(ReleaseRequest.of("twice", "b:1", 1))).isEqualTo(Release.RELEASED);
		backend.close();
	}

	@Test
	void explicitLeaseHoldsOfDeadThreadsLeaveTheEngine() throws Exception {
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(1));
		int holders = 50;
		List<Thread> dying = new ArrayList<>();
		AtomicReference<Throwable> failure = new AtomicReference<>();
		for (int i = 0; i < holders; i++) {
			DistLock lock = registry.getLock("orphan-" + i);
			Thread thread = new Thread(() -> lock.lock(Duration.ofMillis(500)), "orphan-holder-" + i);
			thread.setUncaughtExceptionHandler((t, ex) -> failure.set(ex));
			dying.add(thread);
			thread.start();
		}
		for (Thread thread : dying) {
			thread.join(TimeUnit.SECONDS.toMillis(30));
			assertThat(thread.isAlive()).isFalse();
		}
		assertThat(failure.get()).isNull();
		// Each thread died holding its lock; the leases run out after 500 ms.
		await().atMost(Duration.ofSeconds(10)).until(() -> registry.activeHolds() == 0);
		assertThat(registry.heldLocks()).isEmpty();
		for (int i = 0; i < holders; i++) {
			DistLock lock = registry.getLock("orphan-" + i);
			// Dropped from the table at once, the holds still last their 500 ms in Redis.
			assertThat(lock.tryLock(Duration.ofSeconds(5))).as("orphan-%d is free again", i).isTrue();
			lock.unlock();
		}
	}

	@Test
	void anExplicitLeaseThatRanOutIsReportedLostAndUnlockSaysSo() {
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(1), lost::add);
		DistLock lock = registry.getLock("lease-ran-out");
		lock.lock(Duration.ofMillis(300));

		await().atMost(Duration.ofSeconds(10))
			.until(() -> lost.stream().anyMatch(hold -> hold.lockName().equals("lease-ran-out")) && registry.heldLocks().isEmpty());
		assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class).hasMessageContaining("'lease-ran-out'");
		assertThat(lock.tryLock()).as("a fresh acquisition after the loss").isTrue();
		assertThat(lock.getHoldCount()).isEqualTo(1);
		lock.unlock();
		assertThat(registry.heldLocks()).isEmpty();
	}

	@Test
	void anExplicitLeaseThatRanOutDoesNotBlockTheNextAcquisitionOfItsThread() throws Exception {
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(1), lost::add);
		// A watchdog hold of another thread, whose renewals show the watchdog's ticks.
		CountDownLatch sentinelHeld = new CountDownLatch(1);
		CountDownLatch sentinelMayGo = new CountDownLatch(1);
		Future<?> sentinel = this.threads.submit(() -> {
			DistLock lock = registry.getLock("sentinel");
			lock.lock();
			sentinelHeld.countDown();
			sentinelMayGo.await();
			lock.unlock();
			return null;
		});
		assertThat(sentinelHeld.await(10, TimeUnit.SECONDS)).isTrue();

		DistLock lock = registry.getLock("lease-ran-out-unreleased");
		lock.lock(Duration.ofMillis(300));
		await().atMost(Duration.ofSeconds(10)).until(() -> registry.remainingLease("lease-ran-out-unreleased").isZero());
		// One whole watchdog tick after the lease ran out, for an engine that notices it at a tick.
		long renewals = registry.watchdogRenewals();
		await().atMost(Duration.ofSeconds(10)).until(() -> registry.watchdogRenewals() >= renewals + 2);

		// The thread never unlocked; its hold is gone, so this is a fresh acquisition, not a re-entry.
		assertThat(lock.tryLock()).isTrue();
		assertThat(lock.getHoldCount()).isEqualTo(1);
		lock.unlock();
		assertThat(lost).extracting(LostHold::lockName).contains("lease-ran-out-unreleased");
		assertThat(registry.heldLocks()).extracting(HoldInfo::lockName).containsExactly("sentinel");
		sentinelMayGo.countDown();
		sentinel.get(10, TimeUnit.SECONDS);
	}

	@Test
	void aSlowListenerDoesNotHoldUpRenewals() throws Exception {
		CountDownLatch listenerMayReturn = new CountDownLatch(1);
		CountDownLatch listenerCalled = new CountDownLatch(1);
		RedisLockRegistry registry = this.clients.registry(Duration.ofMillis(600), lost -> {
			listenerCalled.countDown();
			try {
				listenerMayReturn.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		try {
			DistLock doomed = registry.getLock("slow-listener-doomed");
			DistLock kept = registry.getLock("slow-listener-kept");
			doomed.lock();
			kept.lock();
			this.clients.redis().delete("distlock:{slow-listener-doomed}");
			assertThat(listenerCalled.await(10, TimeUnit.SECONDS)).as("the loss was reported").isTrue();
			// The listener now blocks; the other hold must go on being renewed past several leases.
			long renewals = registry.watchdogRenewals();
			await().atMost(Duration.ofSeconds(10)).until(() -> registry.watchdogRenewals() >= renewals + 5);
			assertThat(kept.isHeldByCurrentThread()).isTrue();
			assertThatThrownBy(doomed::unlock).isInstanceOf(LockLostException.class);
			kept.unlock();
		}
		finally {
			listenerMayReturn.countDown();
		}
	}

	@Test
	void aFailedUnlockDoesNotBlockTheLockForItsThread() throws Exception {
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(3));
		DistLock lock = registry.getLock("unlock-failed");
		lock.lock();
		redisServer.server().kill();

		assertThatThrownBy(lock::unlock).isInstanceOf(RuntimeException.class);
		// Renewal stopped: the hold in Redis (if any) expires within its lease.
		assertThat(registry.heldLocks()).isEmpty();

		redisServer.server().restart();
		await().atMost(Duration.ofSeconds(60)).until(() -> registry.backendHealth().up());
		assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
		lock.unlock();
		assertThat(registry.heldLocks()).isEmpty();
	}

}
