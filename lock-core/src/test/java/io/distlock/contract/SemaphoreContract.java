package io.distlock.contract;

import static io.distlock.contract.HoldingThread.PATIENCE;
import static io.distlock.contract.HoldingThread.tryAcquireElsewhere;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import io.distlock.DistLock;
import io.distlock.DistSemaphore;
import io.distlock.HoldKind;
import io.distlock.LockLostException;
import io.distlock.LockRegistry;
import io.distlock.LockRegistryStats;
import io.distlock.LostHold;
import io.distlock.PermitsMismatchException;

/**
 * What every backend that offers semaphores ({@link LockRegistry#getSemaphore}) must do, run
 * against real servers: mixed into a backend's {@link LockRegistryContract} test, whose clients
 * ({@link ContractFixture}) it uses. Several clients stand for several application instances.
 *
 * <p>As in {@link ReadWriteLockContract}, arrival order is made known by starting a waiter only once
 * the one before it is parked in the engine's release wait, and every wait has a deadline.
 */
public interface SemaphoreContract extends ContractFixture {

	@Test
	default void holdersAcrossClientsReachThePermitsAndNeverPassThem() throws Exception {
		String name = "sem-gauge";
		int permits = 3;
		List<LockRegistry> clients = List.of(contractClient(), contractClient(), contractClient());

		// As many holders as permits, one per client, inside at once: the latch opens only then.
		CountDownLatch allInside = new CountDownLatch(permits);
		List<HoldingThread> holders = new ArrayList<>();
		for (int i = 0; i < permits; i++) {
			DistSemaphore semaphore = clients.get(i).getSemaphore(name, permits);
			holders.add(holding("holder-" + i, semaphore, () -> {
				boolean got = semaphore.tryAcquire(PATIENCE);
				if (got) {
					allInside.countDown();
				}
				return got;
			}));
		}
		assertThat(allInside.await(20, TimeUnit.SECONDS)).as("%d holders inside at once", permits).isTrue();
		assertThat(clients.get(0).getSemaphore(name, permits).availablePermits()).isZero();
		assertThat(tryAcquireElsewhere(clients.get(1).getSemaphore(name, permits), Duration.ofMillis(200)))
			.as("one more than the permits")
			.isFalse();
		for (HoldingThread holder : holders) {
			holder.release();
		}

		// Then many rounds of more threads than permits.
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		int threads = 8;
		int rounds = 15;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		closeAfterContract(pool::shutdownNow);
		CountDownLatch start = new CountDownLatch(1);
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			DistSemaphore semaphore = clients.get(t % clients.size()).getSemaphore(name, permits);
			workers.add(pool.submit(() -> {
				start.await();
				for (int i = 0; i < rounds; i++) {
					assertThat(semaphore.tryAcquire(PATIENCE)).as("a permit within %s", PATIENCE).isTrue();
					try {
						most.accumulateAndGet(inside.incrementAndGet(), Math::max);
						// The work: long enough that a holder let in beyond the permits would find the
						// others still inside.
						Thread.sleep(2);
						inside.decrementAndGet();
					}
					finally {
						semaphore.release();
					}
				}
				return null;
			}));
		}
		start.countDown();
		for (Future<?> worker : workers) {
			worker.get(60, TimeUnit.SECONDS);
		}
		assertThat(most.get()).as("most holders inside at once").isLessThanOrEqualTo(permits);
		assertThat(clients.get(2).getSemaphore(name, permits).availablePermits()).isEqualTo(permits);
	}

	@Test
	default void aThreadAcquiringTwiceHoldsOnePermit() throws Exception {
		// Reentrant, unlike java.util.concurrent.Semaphore: nested methods guarded by one semaphore
		// would otherwise wait for themselves once the permits ran short.
		String name = "sem-reentry";
		DistSemaphore mine = contractClient().getSemaphore(name, 2);
		DistSemaphore theirs = contractClient().getSemaphore(name, 2);
		DistSemaphore third = contractClient().getSemaphore(name, 2);
		mine.acquire();
		assertThat(mine.tryAcquire(Duration.ofSeconds(5))).as("the second acquisition, re-entered").isTrue();
		assertThat(mine.getHoldCount()).isEqualTo(2);
		assertThat(mine.availablePermits()).as("one permit taken, counted twice").isEqualTo(1);
		assertThat(tryAcquireElsewhere(theirs, Duration.ZERO)).as("another client, with one permit left").isTrue();

		HoldingThread other = holding("other-holder", theirs, () -> theirs.tryAcquire(PATIENCE));
		assertThat(other.awaitAcquired()).isTrue();
		assertThat(tryAcquireElsewhere(third, Duration.ZERO)).as("a third holder with two permits").isFalse();
		mine.release();
		assertThat(mine.isHeldByCurrentThread()).as("one acquisition left").isTrue();
		assertThat(tryAcquireElsewhere(third, Duration.ZERO)).isFalse();
		mine.release();
		assertThat(mine.getHoldCount()).isZero();
		assertThat(tryAcquireElsewhere(third, Duration.ZERO)).as("once both acquisitions were undone").isTrue();
		other.release();
	}

	@Test
	default void releaseWithoutAPermitThrows() throws Exception {
		String name = "sem-unheld";
		LockRegistry client = contractClient();
		DistSemaphore semaphore = client.getSemaphore(name, 2);
		assertThatThrownBy(semaphore::release).isInstanceOf(IllegalMonitorStateException.class)
			.hasMessageContaining(name);
		semaphore.acquire();
		semaphore.release();
		assertThatThrownBy(semaphore::release).as("one release too many").isInstanceOf(IllegalMonitorStateException.class);

		// Neither another thread of this client nor another client gives back this thread's permit.
		semaphore.acquire();
		assertThatThrownBy(() -> HoldingThread.start("other-thread", () -> {
			client.getSemaphore(name, 2).release();
			return true;
		}, () -> {
		}).awaitAcquired()).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(IllegalMonitorStateException.class);
		assertThatThrownBy(contractClient().getSemaphore(name, 2)::release)
			.isInstanceOf(IllegalMonitorStateException.class);
		assertThat(semaphore.getHoldCount()).isEqualTo(1);
		semaphore.release();
		assertThat(semaphore.isHeldByCurrentThread()).isFalse();
	}

	@Test
	default void aCrashedHoldersPermitComesBackAfterItsLeaseWhileOthersHoldOn() throws Exception {
		String name = "sem-crash";
		// 2 s: the lease must outlive the crash itself.
		LockRegistry crashing = contractClient(Duration.ofSeconds(2));
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		// A short watchdog renews the survivor's permit many times while the crashed one should end: a
		// renewal that kept every holder's permit alive would keep the crashed one too.
		DistSemaphore survivor = contractClient(SHORT_WATCHDOG, lost::add).getSemaphore(name, 2);
		DistSemaphore newcomer = contractClient().getSemaphore(name, 2);
		crashing.getSemaphore(name, 2).acquire();
		survivor.acquire();
		long crashedAt = System.nanoTime();
		crashContractClient(crashing);

		assertThat(tryAcquireElsewhere(newcomer, Duration.ZERO)).as("both permits held right after the crash")
			.isFalse();
		HoldingThread next = holding("newcomer", newcomer, () -> newcomer.tryAcquire(Duration.ofSeconds(10)));
		assertThat(next.awaitAcquired()).as("the crashed holder's permit, once its lease ran out").isTrue();
		assertThat(Duration.ofNanos(System.nanoTime() - crashedAt)).isGreaterThan(Duration.ofSeconds(1));
		assertThat(survivor.isHeldByCurrentThread()).isTrue();
		next.release();
		survivor.release();
		assertThat(lost).as("the survivor's permit, kept by its watchdog past its lease").isEmpty();
	}

	@Test
	default void differentPermitsForOneNameAreRefusedUntilTheSemaphoreIsIdle() throws Exception {
		String name = "sem-mismatch";
		LockRegistry client = contractClient();
		DistSemaphore three = client.getSemaphore(name, 3);
		DistSemaphore five = contractClient().getSemaphore(name, 5);
		three.acquire();

		long start = System.nanoTime();
		assertThatThrownBy(() -> five.tryAcquire(Duration.ofSeconds(10)))
			.isInstanceOfSatisfying(PermitsMismatchException.class, ex -> {
				assertThat(ex.getSemaphoreName()).isEqualTo(name);
				assertThat(ex.getPermits()).isEqualTo(5);
				assertThat(ex.getExistingPermits()).isEqualTo(3);
			})
			.hasMessageContaining(name);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("refused, not waited for")
			.isLessThan(Duration.ofSeconds(2));
		assertThat(five.getHoldCount()).isZero();
		// acquire() waits without end: on a thread of its own, so that a wait instead of a refusal fails.
		HoldingThread acquiring = holding("acquire-five", five, () -> {
			five.acquire();
			return true;
		});
		assertThatThrownBy(() -> acquiring.awaitAcquired(Duration.ofSeconds(5))).isInstanceOf(ExecutionException.class)
			.hasCauseInstanceOf(PermitsMismatchException.class);
		assertThat(tryAcquireElsewhere(contractClient().getSemaphore(name, 3), Duration.ZERO))
			.as("the same semaphore declared alike")
			.isTrue();

		three.release();
		// Idle now (no holder, nobody waiting): the next declaration is the semaphore's.
		assertThat(five.tryAcquire(Duration.ofSeconds(5))).isTrue();
		assertThat(five.availablePermits()).isEqualTo(4);
		assertThatThrownBy(() -> three.tryAcquire(Duration.ZERO))
			.isInstanceOfSatisfying(PermitsMismatchException.class, ex -> assertThat(ex.getExistingPermits()).isEqualTo(5));
		five.release();
	}

	@Test
	default void availablePermitsCountsTheLiveHoldersOfAllClients() throws Exception {
		String name = "sem-available";
		LockRegistry watching = contractClient();
		DistSemaphore watcher = watching.getSemaphore(name, 3);
		DistSemaphore one = contractClient().getSemaphore(name, 3);
		DistSemaphore other = contractClient().getSemaphore(name, 3);
		LockRegistryStats stats = (LockRegistryStats) watching;
		assertThat(watcher.availablePermits()).isEqualTo(3);
		assertThat(stats.remainingLease(name, HoldKind.PERMIT)).isEqualTo(Duration.ZERO);

		one.acquire();
		assertThat(watcher.availablePermits()).isEqualTo(2);
		other.acquire();
		assertThat(watcher.availablePermits()).isEqualTo(1);
		one.acquire();
		assertThat(watcher.availablePermits()).as("a re-entry takes no permit").isEqualTo(1);
		assertThat(stats.remainingLease(name, HoldKind.PERMIT)).isPositive();
		assertThat(stats.remainingLease(name)).as("the exclusive lock of that name").isEqualTo(Duration.ZERO);

		one.release();
		assertThat(watcher.availablePermits()).isEqualTo(1);
		one.release();
		assertThat(watcher.availablePermits()).isEqualTo(2);
		other.release();
		assertThat(watcher.availablePermits()).isEqualTo(3);
		assertThat(stats.remainingLease(name, HoldKind.PERMIT)).isEqualTo(Duration.ZERO);
	}

	@Test
	default void waitersOfDifferentClientsAreServedInArrivalOrder() throws Exception {
		Assumptions.assumeTrue(servesClientsInArrivalOrder(), "waiters of this backend poll, unordered");
		String name = "sem-fifo";
		DistSemaphore held = contractClient().getSemaphore(name, 1);
		held.acquire();
		List<Integer> order = new CopyOnWriteArrayList<>();
		List<HoldingThread> waiters = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			int position = i;
			DistSemaphore semaphore = contractClient().getSemaphore(name, 1);
			// Each gives its permit back at once, so that the next in the queue gets it.
			HoldingThread waiter = closeAfterContract(HoldingThread.start("waiter-" + i, () -> {
				if (!semaphore.tryAcquire(PATIENCE)) {
					return false;
				}
				order.add(position);
				semaphore.release();
				return true;
			}, () -> {
			}));
			// Each one queued before the next arrives, so that arrival order is known.
			waiter.awaitQueued();
			waiters.add(waiter);
		}
		held.release();
		for (HoldingThread waiter : waiters) {
			assertThat(waiter.awaitAcquired()).isTrue();
		}
		assertThat(order).containsExactly(0, 1, 2, 3);
	}

	@Test
	default void permitFencingTokensGrowWithEveryNewHolder() throws Exception {
		String name = "sem-fenced";
		List<DistSemaphore> semaphores = List.of(contractClient().getSemaphore(name, 2),
				contractClient().getSemaphore(name, 2));
		long previous = 0;
		for (int i = 0; i < 6; i++) {
			DistSemaphore semaphore = semaphores.get(i % 2);
			semaphore.acquire();
			long token = semaphore.getFencingToken();
			assertThat(token).isGreaterThan(previous);
			semaphore.acquire();
			assertThat(semaphore.getFencingToken()).as("a re-entered permit keeps its token").isEqualTo(token);
			semaphore.release();
			semaphore.release();
			previous = token;
		}
		// Two holders at once: each its own token, both above every earlier one.
		DistSemaphore one = semaphores.get(0);
		DistSemaphore other = semaphores.get(1);
		one.acquire();
		other.acquire();
		assertThat(one.getFencingToken()).isGreaterThan(previous).isNotEqualTo(other.getFencingToken());
		assertThat(other.getFencingToken()).isGreaterThan(previous);
		one.release();
		other.release();
		assertThatThrownBy(one::getFencingToken).isInstanceOf(IllegalMonitorStateException.class);
	}

	@Test
	default void aSemaphoreIsTheOneItsNameAndPermitsSay() {
		LockRegistry client = contractClient();
		assertThat(client.offersSemaphores()).isTrue();
		DistSemaphore semaphore = client.getSemaphore("sem-declared", 4);
		assertThat(semaphore.getName()).isEqualTo("sem-declared");
		assertThat(semaphore.getPermits()).isEqualTo(4);
		assertThat(semaphore.isHeldByCurrentThread()).isFalse();
		assertThat(semaphore.getHoldCount()).isZero();
		assertThat(client.getSemaphore("sem-declared", 1).getPermits()).isEqualTo(1);
	}

	@Test
	default void asLockTakesAPermit() throws Exception {
		String name = "sem-as-lock";
		DistSemaphore semaphore = contractClient().getSemaphore(name, 1);
		DistSemaphore theirs = contractClient().getSemaphore(name, 1);
		DistLock lock = semaphore.asLock();
		assertThat(lock.getName()).isEqualTo(name);
		lock.lock();
		assertThat(semaphore.isHeldByCurrentThread()).isTrue();
		assertThat(semaphore.availablePermits()).isZero();
		assertThat(tryAcquireElsewhere(theirs, Duration.ZERO)).as("the one permit, taken through the lock").isFalse();
		assertThat(semaphore.tryAcquire(Duration.ZERO)).as("the same permit, re-entered through the semaphore")
			.isTrue();
		assertThat(lock.getHoldCount()).isEqualTo(2);
		semaphore.release();
		lock.unlock();
		assertThat(lock.isHeldByCurrentThread()).isFalse();
		assertThat(tryAcquireElsewhere(theirs, Duration.ZERO)).isTrue();

		// A permit, not an exclusive lock: with two permits two clients hold the lock at once.
		DistLock first = contractClient().getSemaphore(name + "-2", 2).asLock();
		DistLock second = contractClient().getSemaphore(name + "-2", 2).asLock();
		assertThat(first.tryLock()).isTrue();
		assertThat(HoldingThread.tryLockElsewhere(second, Duration.ZERO)).isTrue();
		assertThat(HoldingThread.tryLockElsewhere(contractClient().getLock(name + "-2"), Duration.ZERO))
			.as("the exclusive lock of that name")
			.isTrue();
		first.unlock();
	}

	@Test
	default void semaphoresRejectBadArguments() {
		LockRegistry client = contractClient();
		assertThatThrownBy(() -> client.getSemaphore("sem-bad", 0)).isInstanceOf(IllegalArgumentException.class);
		assertThatThrownBy(() -> client.getSemaphore("sem-bad", -1)).isInstanceOf(IllegalArgumentException.class);
		assertThatThrownBy(() -> client.getSemaphore(" ", 2)).isInstanceOf(IllegalArgumentException.class);
		assertThatThrownBy(() -> client.getSemaphore("sem-bad", 2).tryAcquire(Duration.ZERO, Duration.ZERO))
			.isInstanceOf(IllegalArgumentException.class);
	}

	@Test
	default void acquireInterruptiblyAnswersInterruptsAndLeavesNothingQueued() throws Exception {
		String name = "sem-interruptible";
		DistSemaphore held = contractClient().getSemaphore(name, 1);
		held.acquire();
		LockRegistry waiting = contractClient();
		DistSemaphore semaphore = waiting.getSemaphore(name, 1);
		HoldingThread waiter = holding("interruptible", semaphore, () -> {
			semaphore.acquireInterruptibly();
			return true;
		});
		waiter.awaitQueued();
		waiter.thread().interrupt();
		assertThatThrownBy(() -> waiter.awaitAcquired(Duration.ofSeconds(5))).isInstanceOf(ExecutionException.class)
			.hasCauseInstanceOf(InterruptedException.class);
		assertThat(waiting.heldLocks()).isEmpty();
		held.release();
		assertThat(tryAcquireElsewhere(contractClient().getSemaphore(name, 1), Duration.ofSeconds(5)))
			.as("the permit, not left to the interrupted waiter")
			.isTrue();
	}

	@Test
	default void acquireIgnoresInterruptsButKeepsTheFlag() throws Exception {
		String name = "sem-uninterruptible";
		DistSemaphore held = contractClient().getSemaphore(name, 1);
		held.acquire();
		DistSemaphore semaphore = contractClient().getSemaphore(name, 1);
		AtomicBoolean interruptedAfterAcquire = new AtomicBoolean();
		HoldingThread waiter = holding("uninterruptible", semaphore, () -> {
			semaphore.acquire();
			interruptedAfterAcquire.set(Thread.currentThread().isInterrupted());
			return true;
		});
		waiter.awaitQueued();
		waiter.thread().interrupt();
		await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(3)).until(() -> !waiter.acquired().isDone());
		held.release();
		assertThat(waiter.awaitAcquired(Duration.ofSeconds(10))).isTrue();
		assertThat(interruptedAfterAcquire).as("the interrupt, kept for the caller").isTrue();
		waiter.release();
	}

	@Test
	default void aLostPermitIsReportedWithItsKindAndTheSemaphoreWorksAfterwards() throws Exception {
		String name = "sem-lost";
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		DistSemaphore semaphore = contractClient(SHORT_WATCHDOG, lost::add).getSemaphore(name, 2);
		semaphore.acquire();
		if (!loseAllHolds()) {
			semaphore.release();
			Assumptions.abort("this backend keeps its holds across a restart");
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> !lost.isEmpty());
		assertThat(lost.get(0).lockName()).isEqualTo(name);
		assertThat(lost.get(0).kind()).isEqualTo(HoldKind.PERMIT);
		assertThatThrownBy(semaphore::release).isInstanceOf(LockLostException.class).hasMessageContaining(name);
		assertThat(semaphore.getHoldCount()).isZero();

		DistSemaphore other = contractClient().getSemaphore(name, 2);
		await().atMost(Duration.ofSeconds(20)).pollInSameThread().ignoreExceptions()
			.until(() -> other.tryAcquire(Duration.ZERO));
		assertThat(semaphore.tryAcquire(Duration.ofSeconds(10))).isTrue();
		assertThat(other.availablePermits()).isZero();
		semaphore.release();
		other.release();
	}

	@Test
	default void semaphoresSurviveAFlushOfServerSideScripts() throws Exception {
		DistSemaphore semaphore = contractClient().getSemaphore("sem-flushed", 1);
		semaphore.acquire();
		flushContractScripts();
		semaphore.release();
		flushContractScripts();
		assertThat(semaphore.availablePermits()).isEqualTo(1);
		assertThat(semaphore.tryAcquire(Duration.ZERO)).isTrue();
		semaphore.release();
	}

	private HoldingThread holding(String thread, DistSemaphore semaphore, Callable<Boolean> acquire) {
		return closeAfterContract(HoldingThread.start(thread, acquire, semaphore::release));
	}

}
