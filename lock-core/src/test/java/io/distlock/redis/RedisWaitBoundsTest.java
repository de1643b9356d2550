package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.core.LockBackend;
import io.distlock.core.BackendLockRegistry;
import io.distlock.core.LockEngineOptions;
import io.distlock.testing.ForwardingLockBackend;
import io.distlock.testing.RedisServerExtension;
import io.distlock.core.LockNotice;

/**
 * How long waiting can take: a timed acquisition ends close to its wait whatever else stalls (another
 * thread's subscription, Redis itself), and a waiter that vanished holds the others up no longer
 * than its own lease would have.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisWaitBoundsTest {

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	private static final RedisKeys keys = new RedisKeys("distlock", false);

	/** What a timed acquisition may take beyond its wait: a round trip or two on a loaded machine. */
	private static final Duration OVERRUN = Duration.ofMillis(500);

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisServer);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private ForkedLockClient child;

	private StallingBackend stalling;

	@AfterEach
	void tearDown() throws Exception {
		redisServer.server().resume();
		if (this.stalling != null) {
			this.stalling.unstall.countDown();
		}
		if (this.child != null) {
			this.child.close();
		}
		this.threads.shutdownNow();
	}

	@Test
	void aShortTryLockIsNotHeldUpByAnotherThreadsStalledSubscription() throws Exception {
		String name = "stalled-subscribe";
		DistLock holder = this.clients.registry(Duration.ofSeconds(30)).getLock(name);
		holder.lock();
		this.stalling = new StallingBackend(new RedisLockBackend(this.clients.connectionFactory(), "distlock"),
				Duration.ofSeconds(4));
		BackendLockRegistry engine = new BackendLockRegistry(this.stalling, LockEngineOptions.builder().watchdogTimeout(Duration.ofSeconds(30)).build());
		try {
			DistLock lock = engine.getLock(name);
			CountDownLatch mayUnlock = new CountDownLatch(1);
			CompletableFuture<Long> firstAcquired = new CompletableFuture<>();
			Future<?> first = this.threads.submit(() -> {
				if (!lock.tryLock(Duration.ofSeconds(10))) {
					firstAcquired.complete(null);
					return null;
				}
				firstAcquired.complete(System.nanoTime());
				mayUnlock.await();
				lock.unlock();
				return null;
			});
			// The first waiter of this client is queued in Redis and stuck subscribing to the lock's releases.
			assertThat(this.stalling.subscribing.await(10, TimeUnit.SECONDS)).isTrue();

			long start = System.nanoTime();
			Future<Boolean> second = this.threads.submit(() -> lock.tryLock(Duration.ofMillis(300)));
			boolean acquired = second.get(20, TimeUnit.SECONDS);
			long tookMillis = millisSince(start);
			assertThat(acquired).isFalse();
			assertThat(tookMillis).as("tryLock(300 ms) by a second thread while the first waiter's subscribe stalls "
					+ "for %d ms, took (ms)", this.stalling.stall.toMillis())
				.isLessThanOrEqualTo(300 + OVERRUN.toMillis());

			// The first waiter still works while its subscription is late: a release reaches it.
			long releasedAt = System.nanoTime();
			holder.unlock();
			Long acquiredAt = firstAcquired.get(20, TimeUnit.SECONDS);
			assertThat(acquiredAt).as("the first waiter acquired the lock").isNotNull();
			assertThat(TimeUnit.NANOSECONDS.toMillis(acquiredAt - releasedAt))
				.as("ms from the holder's release until the first waiter had the lock")
				.isLessThanOrEqualTo(this.stalling.stall.plus(Duration.ofSeconds(1)).toMillis());
			mayUnlock.countDown();
			first.get(10, TimeUnit.SECONDS);
		}
		finally {
			this.stalling.unstall.countDown();
			engine.close();
		}
	}

	@Test
	void aVanishedWaiterHoldsOthersUpForAtMostItsLease() throws Exception {
		String name = "vanished-waiter";
		Duration lease = Duration.ofSeconds(1);
		// Far shorter than the fixed queue place of 4 s, so that waiting for that place stands out.
		this.child = ForkedLockClient.start(redisServer.server(), lease);
		DistLock holderA = this.clients.registry(lease).getLock(name);
		Duration leaseA = Duration.ofMillis(1500);
		// A's lease runs out with nobody releasing: there is no release to hand the lock over.
		holderA.lock(leaseA);
		long aLeaseEnd = System.nanoTime() + leaseA.toNanos();
		this.child.send("trylock " + name + " 30000");
		await().atMost(leaseA).pollInterval(Duration.ofMillis(5)).until(() -> queueLength(name) == 1);
		long queuedAt = System.nanoTime();
		// The waiter's JVM dies; its queue place stays in Redis until it lapses.
		this.child.kill();
		assertThat(queueLength(name)).as("the dead waiter's place").isEqualTo(1);

		DistLock lockB = this.clients.registry(lease).getLock(name);
		assertThat(lockB.tryLock(Duration.ofSeconds(10))).isTrue();
		long acquiredAt = System.nanoTime();
		long bound = Math.max(queuedAt + lease.plus(Duration.ofMillis(1500)).toNanos(),
				aLeaseEnd + Duration.ofSeconds(1).toNanos());
		assertThat(millisBetween(queuedAt, acquiredAt)).as("ms from the dead waiter queueing (its lease: %d ms) until "
				+ "B acquired the lock, %d ms after A's lease of %d ms ran out", lease.toMillis(),
				millisBetween(aLeaseEnd, acquiredAt), leaseA.toMillis())
			.isLessThanOrEqualTo(millisBetween(queuedAt, bound));
		lockB.unlock();
	}

	@Test
	void aTimedTryLockEndsWithinItsWaitWhenRedisFreezesMidWait() throws Exception {
		String name = "frozen-mid-wait";
		DistLock holder = this.clients.registry(Duration.ofSeconds(30)).getLock(name);
		holder.lock();
		DistLock waiter = this.clients.registry(Duration.ofSeconds(30)).getLock(name);
		Duration wait = Duration.ofSeconds(1);
		long start = System.nanoTime();
		Future<Boolean> waiting = this.threads.submit(() -> waiter.tryLock(wait));
		long end;
		Object outcome;
		try {
			// Queued and asleep in its wait when Redis stops answering, 300 ms in.
			await().atMost(wait).pollInterval(Duration.ofMillis(5)).until(() -> queueLength(name) == 1);
			long frozenAt = start + TimeUnit.MILLISECONDS.toNanos(300);
			TimeUnit.NANOSECONDS.sleep(Math.max(0, frozenAt - System.nanoTime()));
			redisServer.server().pause();
			try {
				outcome = waiting.get(20, TimeUnit.SECONDS);
			}
			catch (ExecutionException ex) {
				outcome = ex.getCause();
			}
			end = System.nanoTime();
		}
		finally {
			redisServer.server().resume();
		}
		System.err.println("MEASURE 10b outcome=" + outcome + " ms=" + millisBetween(start, end));
		assertThat(outcome).as("the outcome of tryLock(%d ms)", wait.toMillis())
			.satisfiesAnyOf(result -> assertThat(result).isEqualTo(Boolean.FALSE),
					result -> assertThat(result).isInstanceOf(LockBackendException.class));
		assertThat(millisBetween(start, end)).as("tryLock(%d ms) with Redis frozen from 300 ms on ended after (ms)",
				wait.toMillis())
			.isLessThanOrEqualTo(wait.plus(OVERRUN).toMillis());
	}

	private long queueLength(String name) {
		Long length = this.clients.redis().opsForList().size(keys.queue(name));
		return (length != null) ? length : 0;
	}

	private static long millisSince(long startNanos) {
		return millisBetween(startNanos, System.nanoTime());
	}

	private static long millisBetween(long fromNanos, long toNanos) {
		return TimeUnit.NANOSECONDS.toMillis(toNanos - fromNanos);
	}

	/**
	 * A real backend whose first {@code subscribe} stalls before it goes through, as one to a server
	 * that is slow to answer would; every other call goes straight through.
	 */
	static final class StallingBackend extends ForwardingLockBackend {

		final Duration stall;

		/** Counted down when the first subscribe has started stalling. */
		final CountDownLatch subscribing = new CountDownLatch(1);

		/** Ends the stall early (at the end of a test). */
		final CountDownLatch unstall = new CountDownLatch(1);

		private final AtomicBoolean stalled = new AtomicBoolean();

		StallingBackend(LockBackend backend, Duration stall) {
			super(backend);
			this.stall = stall;
		}

		@Override
		public AutoCloseable subscribe(String name, String clientId, Consumer<LockNotice> onRelease) {
			if (this.stalled.compareAndSet(false, true)) {
				this.subscribing.countDown();
				try {
					this.unstall.await(this.stall.toMillis(), TimeUnit.MILLISECONDS);
				}
				catch (InterruptedException ex) {
					// As the real subscriber does when interrupted while waiting to subscribe.
					Thread.currentThread().interrupt();
					throw new IllegalStateException("Interrupted while subscribing to lock releases", ex);
				}
			}
			return backend().subscribe(name, clientId, onRelease);
		}

	}

}
