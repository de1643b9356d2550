package io.distlock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.Timeout;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.LockListener;
import io.distlock.LockLostException;
import io.distlock.LockNotAcquiredException;
import io.distlock.LockRegistry;
import io.distlock.LockRegistryStats;
import io.distlock.LostHold;
import io.distlock.testing.HoldsOnThreads;
import io.distlock.testing.ThreadStates;

/**
 * What every lock backend must do, run against real servers. A backend's test extends this class
 * and says how to make independent clients, crash one, and disturb the backend. A backend that
 * keeps read-write locks and semaphores adds {@link ReadWriteLockContract} and
 * {@link SemaphoreContract} with {@code implements}: this class answers their {@link ContractFixture}.
 *
 * <p>"Client" means what one application instance has: its own connections, watchdog and
 * subscriptions. Two clients in one JVM behave like two processes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class LockRegistryContract implements AsyncLockingContract, ContractFixture {

	private final List<AutoCloseable> cleanUps = new ArrayList<>();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	/**
	 * A new client with its own connections, watchdog and subscriptions.
	 * @param watchdogTimeout the lease of locks taken without one
	 * @param listeners told about lost holds
	 * @return the client's registry
	 */
	protected abstract LockRegistry newClient(Duration watchdogTimeout, LockListener... listeners);

	/**
	 * Ends a client as a crash would: no more renewals, no releases, connections gone.
	 * @param client a registry from {@link #newClient}
	 */
	protected abstract void crash(LockRegistry client);

	/**
	 * A counter kept in the backend's world (not in this JVM), initially 0.
	 * @param name distinguishes counters
	 * @return the counter
	 */
	protected abstract SharedCounter sharedCounter(String name);

	/** Drops whatever server-side cache of prepared statements or scripts the backend relies on. */
	protected abstract void flushServerSideScripts();

	/** Restarts the backend's servers, losing their data, and waits until they answer again. */
	protected abstract void restartServers();

	/** Stops the backend's servers; {@link #restartServers()} brings them back. */
	protected abstract void stopServers();

	/**
	 * Loses the backend's fencing counter, as a restart without persistence, {@code FLUSHALL}, a
	 * failover to a replica that missed it or a restore of an old backup would, and waits until the
	 * servers answer again. By default: {@link #restartServers()}.
	 */
	protected void loseFencingCounter() {
		restartServers();
	}

	/**
	 * Whether the backend issues fencing tokens. One that cannot issue sound ones (Redlock) must say
	 * so instead of handing out numbers that do not always grow.
	 */
	protected boolean offersFencingTokens() {
		return true;
	}

	/**
	 * How fast a waiter of another client must get a released lock: median and slowest of ten. The
	 * point is that the release wakes it, not the holder's 30 s lease; the limits leave room for a
	 * loaded machine. Release notifications: median under 200 ms, slowest under 2 s; a backend that
	 * polls (a database table) may ask for more.
	 */
	protected Duration[] handoffLimits() {
		return new Duration[] { Duration.ofMillis(200), Duration.ofSeconds(2) };
	}

	/**
	 * The watchdog lease under which one client keeps 600 holds. A round renews every hold a third of
	 * a lease after the last round ended, so a hold taken just after a round began waits that round,
	 * the pause and most of the next round: the lease must outlast a third of itself plus about two
	 * rounds. 3 s leaves about a second per round, which a backend renewing in a few batched calls
	 * never comes near; one that needs a call per hold may ask for more.
	 */
	protected Duration manyHoldsLease() {
		return Duration.ofSeconds(3);
	}

	/**
	 * Whether restarting the servers loses their data (Redis without persistence), so that holds
	 * taken before are lost; a database keeps them.
	 */
	protected boolean restartLosesData() {
		return true;
	}

	/**
	 * Waits until no server still has the calling thread's hold of {@code name} taken through
	 * {@code client}. A backend that answers at quorum (Redlock) writes to the last nodes later, so
	 * their copy of an explicit lease expires later too.
	 */
	protected void awaitLeaseGoneEverywhere(LockRegistry client, String name) {
	}

	/** @return a client with the default watchdog */
	protected LockRegistry newClient() {
		return newClient(Duration.ofSeconds(30));
	}

	@Override
	public LockRegistry asyncClient() {
		return newClient();
	}

	@Override
	public SharedCounter asyncCounter(String name) {
		return sharedCounter(name);
	}

	@Override
	public LockRegistry contractClient(Duration watchdogTimeout, LockListener... listeners) {
		return newClient(watchdogTimeout, listeners);
	}

	@Override
	public void crashContractClient(LockRegistry client) {
		crash(client);
	}

	@Override
	public SharedCounter contractCounter(String name) {
		return sharedCounter(name);
	}

	@Override
	public <T extends AutoCloseable> T closeAfterContract(T closeable) {
		return closeAfterTest(closeable);
	}

	@Override
	public void flushContractScripts() {
		flushServerSideScripts();
	}

	@Override
	public boolean loseAllHolds() {
		if (!restartLosesData()) {
			return false;
		}
		restartServers();
		return true;
	}

	/** Closes something after the test. */
	protected <T extends AutoCloseable> T closeAfterTest(T closeable) {
		this.cleanUps.add(closeable);
		return closeable;
	}

	@AfterEach
	void closeClients() throws Exception {
		this.threads.shutdownNow();
		Collections.reverse(this.cleanUps);
		for (AutoCloseable closeable : this.cleanUps) {
			closeable.close();
		}
	}

	@Test
	void mutualExclusionAcrossClientsKeepsEveryUpdate() throws Exception {
		assertMutualExclusion(this.threads, "counter", 4, 300, 100);
	}

	/**
	 * The same with 2,000 virtual threads over two clients, on a JDK that has them; run by the
	 * {@code virtual-threads} Maven profile (a JDK 21+ and {@code -Ddistlock.virtual-threads=true}).
	 */
	@Test
	@EnabledIfSystemProperty(named = "distlock.virtual-threads", matches = "true")
	void mutualExclusionHoldsForThousandsOfVirtualThreads() throws Exception {
		ExecutorService virtualThreads = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
			.invoke(null);
		try {
			assertMutualExclusion(virtualThreads, "virtual", 1000, 2, 300);
		}
		finally {
			virtualThreads.shutdownNow();
		}
	}

	/**
	 * Two clients, {@code threadsPerClient} threads each, all incrementing one shared counter under
	 * the lock: no two inside at once, and no update lost.
	 * @param timeoutSeconds how long each worker may take
	 */
	private void assertMutualExclusion(ExecutorService executor, String name, int threadsPerClient, int iterations,
			long timeoutSeconds) throws Exception {
		List<LockRegistry> clients = List.of(newClient(), newClient());
		SharedCounter counter = sharedCounter(name);
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		List<Future<?>> workers = new ArrayList<>();
		for (LockRegistry client : clients) {
			for (int t = 0; t < threadsPerClient; t++) {
				workers.add(executor.submit(() -> {
					start.await();
					DistLock lock = client.getLock(name);
					for (int i = 0; i < iterations; i++) {
						lock.lock();
						try {
							if (inside.incrementAndGet() > 1) {
								overlaps.incrementAndGet();
							}
							counter.set(counter.get() + 1);
							inside.decrementAndGet();
						}
						finally {
							lock.unlock();
						}
					}
					return null;
				}));
			}
		}
		start.countDown();
		for (Future<?> worker : workers) {
			worker.get(timeoutSeconds, TimeUnit.SECONDS);
		}
		assertThat(overlaps).hasValue(0);
		assertThat(counter.get()).isEqualTo(2L * threadsPerClient * iterations);
	}

	@Test
	void withoutTheLockTheSameWorkloadLosesUpdates() throws Exception {
		// The control for the test above: its counter does break when nothing excludes the writers.
		SharedCounter counter = sharedCounter("control");
		CountDownLatch start = new CountDownLatch(1);
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < 8; t++) {
			workers.add(this.threads.submit(() -> {
				start.await();
				for (int i = 0; i < 300; i++) {
					counter.set(counter.get() + 1);
				}
				return null;
			}));
		}
		start.countDown();
		for (Future<?> worker : workers) {
			worker.get(60, TimeUnit.SECONDS);
		}
		assertThat(counter.get()).isLessThan(8 * 300);
	}

	@Test
	void reentrantHoldsMustAllBeReleased() throws Exception {
		DistLock mine = newClient().getLock("reentrant");
		DistLock theirs = newClient().getLock("reentrant");
		mine.lock();
		mine.lock();
		assertThat(mine.tryLock(Duration.ofMillis(100))).isTrue();
		assertThat(mine.getHoldCount()).isEqualTo(3);
		long token = offersFencingTokens() ? mine.getFencingToken() : 0;

		mine.unlock();
		mine.unlock();
		assertThat(mine.getHoldCount()).isEqualTo(1);
		if (offersFencingTokens()) {
			assertThat(mine.getFencingToken()).isEqualTo(token);
		}
		assertThat(mine.isHeldByCurrentThread()).isTrue();
		assertThat(otherThreadTryLock(theirs)).isFalse();

		mine.unlock();
		assertThat(mine.getHoldCount()).isZero();
		assertThat(mine.isLocked()).isFalse();
		assertThat(otherThreadTryLock(theirs)).isTrue();
	}

	@Test
	void aWaitOfCenturiesIsAWaitWithoutEnd() throws Exception {
		// 292 years is just inside what Duration.toNanos() can express; adding anything to it overflowed
		// into a deadline in the past, and a free lock was refused as if its backend had not answered.
		DistLock lock = newClient().getLock("centuries");
		for (Duration wait : List.of(Duration.ofDays(365L * 292), Duration.ofNanos(Long.MAX_VALUE),
				Duration.ofSeconds(Long.MAX_VALUE))) {
			assertThat(lock.tryLock(wait)).as("tryLock(%s)", wait).isTrue();
			lock.unlock();
		}
	}

	@Test
	void anotherClientCannotReleaseMyLock() throws Exception {
		DistLock mine = newClient().getLock("owned");
		DistLock theirs = newClient().getLock("owned");
		mine.lock();
		assertThatThrownBy(theirs::unlock).isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining("owned");
		assertThat(mine.isLocked()).isTrue();
		assertThat(otherThreadTryLock(theirs)).isFalse();
		mine.unlock();
	}

	@Test
	void anotherThreadOfMyClientCannotReleaseMyLock() throws Exception {
		LockRegistry client = newClient();
		DistLock lock = client.getLock("thread-owned");
		lock.lock();
		Future<?> attempt = this.threads.submit(() -> client.getLock("thread-owned").unlock());
		assertThatThrownBy(() -> attempt.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalMonitorStateException.class);
		assertThat(lock.isHeldByCurrentThread()).isTrue();
		assertThat(lock.getHoldCount()).isEqualTo(1);
		lock.unlock();
	}

	@Test
	void crashedHolderIsReplacedAfterItsLease() throws Exception {
		// 2 s: the lease must outlive the crash itself (Redlock closes five connection factories).
		LockRegistry crashing = newClient(Duration.ofSeconds(2));
		DistLock survivor = newClient().getLock("crash");
		crashing.getLock("crash").lock();
		long crashedAt = System.nanoTime();
		crash(crashing);

		assertThat(otherThreadTryLock(survivor)).isFalse();
		assertThat(survivor.tryLock(Duration.ofSeconds(10))).isTrue();
		assertThat(Duration.ofNanos(System.nanoTime() - crashedAt)).isGreaterThan(Duration.ofSeconds(1));
		survivor.unlock();
	}

	@Test
	void watchdogKeepsHoldPastThreeLeasesAndStopsAfterRelease() throws Exception {
		// Longer than SHORT_WATCHDOG: a renewal delayed by a loaded machine must not let the other client in.
		Duration lease = Duration.ofMillis(1500);
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		LockRegistry client = newClient(lease, lost::add);
		DistLock mine = client.getLock("renewed");
		DistLock theirs = newClient().getLock("renewed");
		mine.lock();

		await().during(lease.multipliedBy(3)).atMost(lease.multipliedBy(5)).until(() -> !otherThreadTryLock(theirs));
		assertThat(mine.isHeldByCurrentThread()).isTrue();

		mine.unlock();
		assertThat(client.heldLocks()).isEmpty();
		assertThat(otherThreadTryLock(theirs, Duration.ofMillis(300))).isTrue();
		// A watchdog still renewing after release would now find the lock gone (or someone else's)
		// and report the hold lost.
		await().during(lease.multipliedBy(2)).atMost(lease.multipliedBy(4)).until(lost::isEmpty);
	}

	@Test
	void watchdogStopsWhenTheOwningThreadDies() throws Exception {
		LockRegistry client = newClient(SHORT_WATCHDOG);
		DistLock theirs = newClient().getLock("orphan");
		CountDownLatch locked = new CountDownLatch(1);
		CountDownLatch mayDie = new CountDownLatch(1);
		Thread owner = new Thread(() -> {
			client.getLock("orphan").lock();
			locked.countDown();
			try {
				mayDie.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		owner.start();
		// Checked while the owner lives: once it is dead the watchdog may drop the hold at any moment.
		assertThat(locked.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(client.heldLocks()).hasSize(1);
		mayDie.countDown();
		owner.join(10_000);

		assertThat(theirs.tryLock(Duration.ofSeconds(10))).isTrue();
		assertThat(client.heldLocks()).isEmpty();
		theirs.unlock();
	}

	@Test
	void explicitLeaseExpiresAndTheLateUnlockSaysSo() throws Exception {
		LockRegistry client = newClient();
		DistLock mine = client.getLock("leased");
		DistLock theirs = newClient().getLock("leased");
		mine.lock(Duration.ofMillis(300));
		long lockedAt = System.nanoTime();

		assertThat(otherThreadTryLock(theirs, Duration.ofSeconds(5))).isTrue();
		assertThat(Duration.ofNanos(System.nanoTime() - lockedAt)).isGreaterThan(Duration.ofMillis(200));
		awaitLeaseGoneEverywhere(client, "leased");
		assertThatThrownBy(mine::unlock).isInstanceOf(LockLostException.class).hasMessageContaining("leased");
		assertThat(mine.getHoldCount()).isZero();
	}

	@Test
	void aNestedShorterLeaseDoesNotShortenTheHold() throws Exception {
		// As a @DistributedLock(leaseTime = "1s") method called from a watchdog-held one on the same key.
		DistLock mine = newClient().getLock("nested-lease");
		DistLock theirs = newClient().getLock("nested-lease");
		mine.lock();
		assertThat(mine.tryLock(Duration.ofSeconds(10), Duration.ofSeconds(1))).isTrue();
		assertThat(otherThreadTryLock(theirs, Duration.ofSeconds(3))).as("inside the nested hold, past its 1 s lease")
			.isFalse();
		mine.unlock();
		assertThat(otherThreadTryLock(theirs, Duration.ofMillis(1500))).as("after the nested unlock, past its 1 s lease")
			.isFalse();
		assertThat(mine.getHoldCount()).isEqualTo(1);
		mine.unlock();
		assertThat(otherThreadTryLock(theirs, Duration.ofSeconds(5))).isTrue();
	}

	@Test
	void anExplicitLeaseReenteredWithoutOneKeepsItsOwnDeadline() throws Exception {
		// A watchdog client whose lease (30 s) is far longer than the hold's own: a crashed holder
		// must block others for its own lease, not for the watchdog's.
		LockRegistry client = newClient();
		DistLock mine = client.getLock("explicit-reentered");
		DistLock theirs = newClient().getLock("explicit-reentered");
		assertThat(mine.tryLock(Duration.ofSeconds(10), Duration.ofMillis(1500))).isTrue();
		mine.lock();
		assertThat(mine.getHoldCount()).isEqualTo(2);
		assertThat(otherThreadTryLock(theirs, Duration.ofSeconds(10))).as("taken once the hold's own lease ran out")
			.isTrue();
		awaitLeaseGoneEverywhere(client, "explicit-reentered");
		// Both levels were the lost hold's: each unlock() says so.
		assertThatThrownBy(mine::unlock).isInstanceOf(LockLostException.class);
		assertThatThrownBy(mine::unlock).isInstanceOf(LockLostException.class);
		assertThat(mine.getHoldCount()).isZero();
	}

	@Test
	void theUnlockPairedWithAHoldThatRanOutSaysItWasLost() throws Exception {
		// A short watchdog period, so that the lost hold is set aside (not found at re-entry) quickly.
		LockRegistry client = newClient(SHORT_WATCHDOG);
		DistLock mine = client.getLock("reentered-lost");
		DistLock theirs = newClient().getLock("reentered-lost");
		mine.lock(Duration.ofMillis(300));
		assertThat(otherThreadTryLock(theirs, Duration.ofSeconds(5))).as("taken once the lease ran out").isTrue();
		awaitLeaseGoneEverywhere(client, "reentered-lost");
		await().atMost(Duration.ofSeconds(10)).until(() -> client.heldLocks().isEmpty());
		// The thread still believes it holds the lock; its "re-entry" takes a new hold, whose unlock
		// releases it, and the unlock paired with the lost hold says so.
		mine.lock();
		assertThat(mine.getHoldCount()).isEqualTo(1);
		mine.unlock();
		assertThat(otherThreadTryLock(theirs)).as("the new hold was released").isTrue();
		assertThatThrownBy(mine::unlock).isInstanceOf(LockLostException.class).hasMessageContaining("reentered-lost");
		assertThat(mine.getHoldCount()).isZero();
		assertThatThrownBy(mine::unlock).as("nothing left to unlock")
			.isInstanceOf(IllegalMonitorStateException.class)
			.isNotInstanceOf(LockLostException.class);
	}

	@Test
	void aLockKeptAfterUnlockStaysTakenUntilItsTimeHasPassed() throws Exception {
		LockRegistry client = newClient(SHORT_WATCHDOG);
		Assumptions.assumeTrue(client.canKeepAfterUnlock(), "this backend's holds do not expire on their own");
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		LockRegistry keeping = newClient(SHORT_WATCHDOG, lost::add);
		DistLock mine = keeping.getLock("kept");
		DistLock theirs = client.getLock("kept");
		mine.lock();
		mine.lock();
		// Longer than the watchdog's lease: a renewal after the unlock would be seen as a hold that outlives it.
		Duration keep = SHORT_WATCHDOG.multipliedBy(3);
		long keptAt = System.nanoTime();
		mine.unlockKeepingFor(keep);
		assertThat(mine.getHoldCount()).as("an inner level is released as by unlock()").isEqualTo(1);
		mine.unlockKeepingFor(keep);
		assertThat(mine.getHoldCount()).isZero();
		assertThat(keeping.heldLocks()).isEmpty();

		assertThat(otherThreadTryLock(theirs)).as("kept after the last unlock").isFalse();
		assertThat(otherThreadTryLock(theirs, Duration.ofSeconds(10))).isTrue();
		assertThat(Duration.ofNanos(System.nanoTime() - keptAt)).isGreaterThan(keep.minusMillis(200));
		assertThat(lost).as("a kept lock is not renewed, so nothing finds it gone").isEmpty();
	}

	@Test
	void aLockKeptAfterItWasLostSaysSo() throws Exception {
		LockRegistry client = newClient();
		Assumptions.assumeTrue(client.canKeepAfterUnlock(), "this backend's holds do not expire on their own");
		DistLock mine = client.getLock("kept-lost");
		DistLock theirs = newClient().getLock("kept-lost");
		mine.lock(Duration.ofMillis(300));
		assertThat(otherThreadTryLock(theirs, Duration.ofSeconds(5))).as("taken by another once the lease ran out").isTrue();
		awaitLeaseGoneEverywhere(client, "kept-lost");
		assertThatThrownBy(() -> mine.unlockKeepingFor(Duration.ofSeconds(5))).isInstanceOf(LockLostException.class);
		assertThat(mine.getHoldCount()).isZero();
		assertThat(otherThreadTryLock(theirs)).as("nothing was kept").isTrue();
	}

	@Test
	void tryLockTimesOutOnAHeldLock() throws Exception {
		DistLock mine = newClient().getLock("busy");
		DistLock theirs = newClient().getLock("busy");
		mine.lock();
		long start = System.nanoTime();
		assertThat(otherThreadTryLock(theirs, Duration.ofMillis(250))).isFalse();
		Duration waited = Duration.ofNanos(System.nanoTime() - start);
		assertThat(waited).isGreaterThanOrEqualTo(Duration.ofMillis(250)).isLessThan(Duration.ofSeconds(3));
		mine.unlock();
	}

	@Test
	void waiterAcquiresPromptlyAfterRelease() throws Exception {
		DistLock mine = newClient().getLock("handoff");
		LockRegistry other = newClient();
		List<Long> handoffMicros = new ArrayList<>();
		for (int round = 0; round < 13; round++) {
			mine.lock();
			AtomicLong acquiredAt = new AtomicLong();
			CountDownLatch waiting = new CountDownLatch(1);
			Thread waiter = new Thread(() -> {
				DistLock theirs = other.getLock("handoff");
				try {
					waiting.countDown();
					if (theirs.tryLock(Duration.ofSeconds(20))) {
						acquiredAt.set(System.nanoTime());
						theirs.unlock();
					}
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			});
			waiter.start();
			waiting.await();
			// Parked in the wait, not still on its way there: the watchdog TTL (30 s) is all it would
			// otherwise wake up for.
			await().atMost(Duration.ofSeconds(10)).until(() -> ThreadStates.parkedWaitingForRelease(waiter));
			mine.unlock();
			long releasedAt = System.nanoTime();
			waiter.join(20_000);
			assertThat(acquiredAt.get()).as("waiter acquired in round %d", round).isPositive();
			if (round >= 3) {
				handoffMicros.add(TimeUnit.NANOSECONDS.toMicros(acquiredAt.get() - releasedAt));
			}
		}
		Collections.sort(handoffMicros);
		Duration[] limits = handoffLimits();
		assertThat(handoffMicros.get(handoffMicros.size() / 2)).as("median handoff µs of %s", handoffMicros)
			.isLessThan(limits[0].toNanos() / 1000);
		assertThat(handoffMicros.get(handoffMicros.size() - 1)).as("slowest handoff µs of %s", handoffMicros)
			.isLessThan(limits[1].toNanos() / 1000);
	}

	@Test
	void queuedThreadsOfOneClientAreServedInArrivalOrder() throws Exception {
		DistLock mine = newClient().getLock("fifo");
		LockRegistry other = newClient();
		mine.lock();
		List<Integer> order = new CopyOnWriteArrayList<>();
		List<Thread> waiters = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			int position = i;
			Thread waiter = new Thread(() -> {
				DistLock lock = other.getLock("fifo");
				try {
					if (lock.tryLock(Duration.ofSeconds(30))) {
						order.add(position);
						lock.unlock();
					}
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			});
			waiter.start();
			// Each one parked before the next arrives, so arrival order is known.
			await().atMost(Duration.ofSeconds(10)).until(() -> ThreadStates.parkedWaitingForRelease(waiter));
			waiters.add(waiter);
		}
		mine.unlock();
		for (Thread waiter : waiters) {
			waiter.join(30_000);
		}
		assertThat(order).containsExactly(0, 1, 2, 3);
	}

	@Test
	void lockInterruptiblyAnswersInterrupts() throws Exception {
		LockRegistry other = newClient();
		DistLock mine = newClient().getLock("interruptible");
		mine.lock();
		CompletableFuture<Throwable> outcome = new CompletableFuture<>();
		Thread waiter = new Thread(() -> {
			try {
				other.getLock("interruptible").lockInterruptibly();
				outcome.complete(null);
			}
			catch (Throwable ex) {
				outcome.complete(ex);
			}
		});
		waiter.start();
		await().atMost(Duration.ofSeconds(10)).until(() -> ThreadStates.parkedWaitingForRelease(waiter));
		waiter.interrupt();
		assertThat(outcome.get(2, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
		assertThat(other.heldLocks()).isEmpty();
		assertThat(mine.isHeldByCurrentThread()).isTrue();
		mine.unlock();
	}

	@Test
	void lockIgnoresInterruptsButKeepsTheFlag() throws Exception {
		LockRegistry other = newClient();
		DistLock mine = newClient().getLock("uninterruptible");
		mine.lock();
		CompletableFuture<Boolean> interruptedAfterLock = new CompletableFuture<>();
		Thread waiter = new Thread(() -> {
			DistLock theirs = other.getLock("uninterruptible");
			theirs.lock();
			interruptedAfterLock.complete(Thread.currentThread().isInterrupted());
			theirs.unlock();
		});
		waiter.start();
		await().atMost(Duration.ofSeconds(10)).until(() -> ThreadStates.parkedWaitingForRelease(waiter));
		waiter.interrupt();
		assertThat(interruptedAfterLock).isNotDone();
		mine.unlock();
		assertThat(interruptedAfterLock.get(10, TimeUnit.SECONDS)).isTrue();
	}

	@Test
	void fencingTokensGrowWithEveryNewHolder() throws Exception {
		assertThat(newClient().offersFencingTokens()).as("the registry says whether it offers tokens")
			.isEqualTo(offersFencingTokens());
		if (!offersFencingTokens()) {
			DistLock lock = newClient().getLock("fenced");
			lock.lock();
			assertThatThrownBy(lock::getFencingToken).isInstanceOf(UnsupportedOperationException.class)
				.hasMessageContaining("no fencing token");
			lock.unlock();
			return;
		}
		List<DistLock> locks = List.of(newClient().getLock("fenced"), newClient().getLock("fenced"));
		long previous = 0;
		for (int i = 0; i < 10; i++) {
			DistLock lock = locks.get(i % 2);
			lock.lock();
			long token = lock.getFencingToken();
			assertThat(token).isGreaterThan(previous);
			lock.lock();
			assertThat(lock.getFencingToken()).as("a reentrant hold keeps its token").isEqualTo(token);
			lock.unlock();
			lock.unlock();
			previous = token;
		}
		assertThatThrownBy(locks.get(0)::getFencingToken).isInstanceOf(IllegalMonitorStateException.class);
	}

	@Test
	void fencingTokensKeepGrowingWhenTheBackendLosesItsCounter() throws Exception {
		if (!offersFencingTokens()) {
			return;
		}
		DistLock lock = newClient().getLock("fenced-counter-lost");
		long highest = 0;
		for (int i = 0; i < 51; i++) {
			lock.lock();
			highest = Math.max(highest, lock.getFencingToken());
			lock.unlock();
		}
		loseFencingCounter();
		DistLock after = newClient().getLock("fenced-counter-lost");
		await().atMost(Duration.ofSeconds(20)).pollInSameThread().ignoreExceptions().until(after::tryLock);
		try {
			assertThat(after.getFencingToken()).as("a resource that kept token %d must accept the next holder", highest)
				.isGreaterThan(highest);
		}
		finally {
			after.unlock();
		}
	}

	@Test
	void survivesAFlushOfServerSideScripts() throws Exception {
		DistLock lock = newClient().getLock("flushed");
		lock.lock();
		flushServerSideScripts();
		lock.unlock();
		assertThat(lock.isLocked()).isFalse();
		assertThat(lock.tryLock()).isTrue();
		lock.unlock();
	}

	@Test
	void survivesAServerRestart() throws Exception {
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		// A kept hold must outlive the database's restart and the reconnect, which a loaded machine slows.
		Duration lease = restartLosesData() ? SHORT_WATCHDOG : Duration.ofSeconds(15);
		LockRegistry client = newClient(lease, lost::add);
		DistLock held = client.getLock("restart-held");
		held.lock();
		restartServers();

		DistLock lock = client.getLock("restart");
		await().atMost(Duration.ofSeconds(20)).pollInSameThread().ignoreExceptions().until(lock::tryLock);
		assertThat(lock.isHeldByCurrentThread()).isTrue();
		lock.unlock();
		if (!restartLosesData()) {
			// The database kept the hold, and the watchdog kept renewing it.
			assertThat(held.isHeldByCurrentThread()).isTrue();
			held.unlock();
			assertThat(lost).isEmpty();
			return;
		}
		// The restart wiped the watchdog hold: the owner is told, not left believing it holds the lock.
		await().atMost(Duration.ofSeconds(10)).until(() -> !lost.isEmpty());
		assertThat(lost.get(0).lockName()).isEqualTo("restart-held");
		assertThatThrownBy(held::unlock).isInstanceOf(LockLostException.class);
	}

	@Test
	void timedAcquisitionFailsWithinItsWaitWhenTheBackendIsDown() throws Exception {
		DistLock lock = newClient().getLock("down");
		assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
		lock.unlock();
		stopServers();
		try {
			long start = System.nanoTime();
			assertThatThrownBy(() -> lock.tryLock(Duration.ofMillis(1500))).isInstanceOf(LockBackendException.class)
				.hasMessageContaining("'down'");
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
			assertThat(lock.getHoldCount()).isZero();
			assertThat(Thread.currentThread().isInterrupted()).as("the deadline's interrupt does not leak").isFalse();
		}
		finally {
			restartServers();
		}
	}

	@Test
	void twoHandlesOfOneNameAreOneLock() throws Exception {
		LockRegistry client = newClient();
		DistLock one = client.getLock("handles");
		DistLock other = client.getLock("handles");
		assertThat(one).isEqualTo(other).hasSameHashCodeAs(other).isNotEqualTo(client.getLock("handles-2"));
		assertThat(one).as("another registry's lock of that name").isNotEqualTo(newClient().getLock("handles"));
		one.lock();
		assertThat(other.isHeldByCurrentThread()).isTrue();
		other.unlock();
		assertThat(one.getHoldCount()).isZero();
	}

	@Test
	void executeLockedRunsTheWorkUnderTheLockOrNotAtAll() throws Exception {
		LockRegistry mine = newClient();
		LockRegistry theirs = newClient();
		assertThat(mine.executeLocked("executed", Duration.ofSeconds(5), () -> {
			assertThat(otherThreadTryLock(theirs.getLock("executed"))).as("held while the work runs").isFalse();
			return "ran";
		})).isEqualTo("ran");
		assertThat(otherThreadTryLock(theirs.getLock("executed"))).as("released after it").isTrue();
		assertThatThrownBy(() -> mine.executeLocked("executed", Duration.ZERO, () -> {
			throw new IOException("failed");
		})).isInstanceOf(IOException.class);
		assertThat(otherThreadTryLock(theirs.getLock("executed"))).as("released after a failure").isTrue();
		DistLock held = theirs.getLock("executed");
		assertThat(otherThreadLock(held)).isTrue();
		AtomicInteger ran = new AtomicInteger();
		assertThatThrownBy(() -> mine.executeLocked("executed", Duration.ofMillis(100), ran::incrementAndGet))
			.isInstanceOf(LockNotAcquiredException.class)
			.hasMessageContaining("'executed'");
		assertThat(ran).hasValue(0);
	}

	@Test
	void executeLockedOverSeveralLocksTakesAllOfThemOrNone() throws Exception {
		LockRegistry mine = newClient();
		LockRegistry theirs = newClient();
		assertThat(mine.executeLocked(List.of("multi:b", "multi:a", "multi:b"), Duration.ofSeconds(5), () -> {
			assertThat(otherThreadTryLock(theirs.getLock("multi:a"))).as("a held while the work runs").isFalse();
			assertThat(otherThreadTryLock(theirs.getLock("multi:b"))).as("b held while the work runs").isFalse();
			return "ran";
		})).isEqualTo("ran");
		assertThat(otherThreadTryLock(theirs.getLock("multi:a"))).as("a released after it").isTrue();
		assertThat(otherThreadTryLock(theirs.getLock("multi:b"))).as("b released after it").isTrue();
		assertThat(otherThreadLock(theirs.getLock("multi:c"))).isTrue();
		AtomicInteger ran = new AtomicInteger();
		assertThatThrownBy(() -> mine.executeLocked(List.of("multi:c", "multi:a"), Duration.ofMillis(200), ran::incrementAndGet))
			.isInstanceOf(LockNotAcquiredException.class)
			.hasMessageContaining("'multi:c'");
		assertThat(ran).hasValue(0);
		assertThat(otherThreadTryLock(theirs.getLock("multi:a"))).as("a, taken before c, given back").isTrue();
		assertThatThrownBy(() -> mine.executeLocked(List.of(), Duration.ZERO, () -> null))
			.isInstanceOf(IllegalArgumentException.class);
	}

	@Test
	void executeLockedOverOverlappingLocksInEitherOrderNeitherDeadlocksNorOverlaps() throws Exception {
		// Half the threads name the locks in one order, half in the other: taken in the given order,
		// two of them would soon hold one lock each and wait for the other's until their waits ran out.
		List<LockRegistry> clients = List.of(newClient(), newClient());
		SharedCounter counter = sharedCounter("multi-counter");
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < 8; t++) {
			LockRegistry client = clients.get(t % 2);
			List<String> names = (t % 4 < 2) ? List.of("multi:x", "multi:y") : List.of("multi:y", "multi:x");
			workers.add(this.threads.submit(() -> {
				start.await();
				for (int i = 0; i < 40; i++) {
					client.executeLocked(names, Duration.ofSeconds(60), () -> {
						if (inside.incrementAndGet() > 1) {
							overlaps.incrementAndGet();
						}
						counter.set(counter.get() + 1);
						inside.decrementAndGet();
						return null;
					});
				}
				return null;
			}));
		}
		start.countDown();
		for (Future<?> worker : workers) {
			worker.get(120, TimeUnit.SECONDS);
		}
		assertThat(overlaps).hasValue(0);
		assertThat(counter.get()).isEqualTo(8L * 40);
	}

	@Test
	void theWatchdogKeepsManyHoldsOfOneClientWithoutFallingBehindALease() throws Exception {
		Duration lease = manyHoldsLease();
		LockRegistry client = newClient(lease);
		LockRegistryStats stats = (LockRegistryStats) client;
		int holds = 600;
		try (HoldsOnThreads held = HoldsOnThreads.take(client, "batch:", holds)) {
			long before = stats.watchdogRenewals();
			// Five rounds (a third of a lease apart) outlast every lease taken before them; ten leases
			// (30 s at 3 s) leave the rounds themselves room on a loaded machine.
			await().atMost(lease.multipliedBy(10)).until(() -> stats.watchdogRenewals() >= before + 5L * holds);
			assertThat(stats.lostHolds()).as("holds lost").isZero();
			LockRegistry other = newClient();
			for (String name : held.names()) {
				assertThat(other.getLock(name).tryLock()).as("another client taking %s", name).isFalse();
			}
		}
		assertThat(stats.lostHolds()).as("holds lost").isZero();
	}

	@Test
	void rejectsBadArguments() {
		LockRegistry client = newClient();
		assertThatThrownBy(() -> client.getLock(" ")).isInstanceOf(IllegalArgumentException.class);
		assertThatThrownBy(() -> client.getLock("x").lock(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("'x'");
		assertThatThrownBy(() -> client.getLock("x").unlock()).isInstanceOf(IllegalMonitorStateException.class);
		assertThatThrownBy(() -> client.getLock("x").newCondition()).isInstanceOf(UnsupportedOperationException.class);
	}

	/** Takes the lock on a thread of its own that keeps it until the test ends. */
	protected boolean otherThreadLock(DistLock lock) throws Exception {
		CountDownLatch taken = new CountDownLatch(1);
		CountDownLatch end = new CountDownLatch(1);
		this.threads.submit(() -> {
			lock.lock();
			try {
				taken.countDown();
				end.await();
			}
			finally {
				lock.unlock();
			}
			return null;
		});
		closeAfterTest(end::countDown);
		return taken.await(30, TimeUnit.SECONDS);
	}

	/** tryLock from a thread other than the test's, which may hold the same name itself. */
	protected boolean otherThreadTryLock(DistLock lock) throws Exception {
		return otherThreadTryLock(lock, Duration.ZERO);
	}

	protected boolean otherThreadTryLock(DistLock lock, Duration wait) throws Exception {
		return this.threads.submit(() -> {
			boolean acquired = lock.tryLock(wait);
			if (acquired) {
				lock.unlock();
			}
			return acquired;
		}).get(wait.toMillis() + 30_000, TimeUnit.MILLISECONDS);
	}

}
