package io.distlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A reentrant lock shared by every client of the same backend, with the
 * {@link java.util.concurrent.locks.Lock} contract plus what users of Redisson's {@code RLock} reach
 * for: explicit leases, hold counts, remaining lease and fencing tokens.
 *
 * <p>A lock taken without a lease is kept alive by the registry's watchdog for as long as the owning
 * thread holds it (and is alive); a lock taken with a lease simply expires after it. If the backend
 * loses a hold (the lease ran out, the server restarted), registered {@link LockListener}s are told
 * and the owner's {@link #unlock()} throws {@link LockLostException}.
 */
public interface DistLock extends Lock {

	/** @return the lock's name, as given to {@link LockRegistry#getLock(String)} */
	String getName();

	/**
	 * Acquires the lock, waiting as long as it takes, and holds it for {@code leaseTime} unless
	 * released earlier. No watchdog renews it.
	 * @param leaseTime how long the lock stays held without an unlock; positive
	 */
	void lock(Duration leaseTime);

	/**
	 * Acquires the lock if it becomes free within {@code waitTime}; holds it for {@code leaseTime},
	 * or under the watchdog if {@code leaseTime} is {@code null}.
	 * @param waitTime how long to wait; zero or negative means do not wait
	 * @param leaseTime the lease, or {@code null} for the watchdog
	 * @return whether the lock was acquired
	 * @throws InterruptedException if interrupted while waiting
	 */
	boolean tryLock(Duration waitTime, Duration leaseTime) throws InterruptedException;

	/**
	 * Acquires the lock if it becomes free within {@code waitTime}, under the watchdog.
	 * @param waitTime how long to wait
	 * @return whether the lock was acquired
	 * @throws InterruptedException if interrupted while waiting
	 */
	default boolean tryLock(Duration waitTime) throws InterruptedException {
		return tryLock(waitTime, null);
	}

	@Override
	default boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
		return tryLock(Duration.ofNanos(unit.toNanos(time)), null);
	}

	/**
	 * Whether the calling thread holds this lock, as the backend sees it now.
	 * @return true if the backend records the calling thread as owner
	 */
	boolean isHeldByCurrentThread();

	/**
	 * Whether any client holds this lock, as the backend sees it now.
	 * @return true if held
	 */
	boolean isLocked();

	/**
	 * How many times the calling thread holds this lock (reentrant acquisitions), as this client
	 * counts them.
	 * @return the hold count; 0 if not held
	 */
	int getHoldCount();

	/**
	 * How long the backend keeps the lock if nobody releases or renews it.
	 * @return the remaining lease; {@link Duration#ZERO} if the lock is free
	 */
	Duration remainingLease();

	/**
	 * The fencing token of the calling thread's hold: strictly greater than the token of every
	 * earlier holder of this lock name. (A thread whose {@code unlock()} never reached the server and
	 * that takes the lock again while its old hold still stands takes that hold up, token and all:
	 * nobody else held the lock in between.) Pass it to the resource the lock protects so that it can
	 * reject writes from a holder that has since lost the lock.
	 * @return the token
	 * @throws IllegalMonitorStateException if the calling thread does not hold this lock
	 */
	long getFencingToken();

	/**
	 * Releases one hold like {@link #unlock()}; the last one leaves the lock taken for {@code keep}
	 * more: its lease is set to {@code keep} and no longer renewed, so no other owner takes it before
	 * then, even if this process dies meanwhile (ShedLock's {@code lockAtLeastFor}: a job that must
	 * run once per period, however quickly it finishes). The calling thread no longer holds it.
	 * @param keep how long the lock stays taken; zero or negative: released now, as {@link #unlock()}
	 * @throws LockLostException if the hold had been lost (nothing is kept then)
	 * @throws UnsupportedOperationException if this lock's holds do not expire on their own (ZooKeeper:
	 * they last as long as the session); the lock is then still held
	 * @see LockRegistry#canKeepAfterUnlock()
	 */
	default void unlockKeepingFor(Duration keep) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot keep a lock after its release");
	}

	/**
	 * Takes this lock for a piece of work rather than for the calling thread: the hold has an owner
	 * of its own (so it is not reentrant), and may be released from any thread. What
	 * {@link LockRegistry#tryLockForWork} does for a lock's name, for any lock a handle names: a read
	 * or write lock, a semaphore's permit.
	 * @param waitTime how long to wait at most
	 * @param leaseTime the lease, or {@code null} for the watchdog
	 * @return the hold, or empty if the lock stayed taken
	 * @throws InterruptedException if interrupted while waiting
	 * @throws UnsupportedOperationException if this lock has no such form (locks of other libraries)
	 */
	default Optional<WorkHold> tryLockForWork(Duration waitTime, Duration leaseTime) throws InterruptedException {
		throw new UnsupportedOperationException(getClass().getName() + " cannot be held by work rather than a thread; "
				+ "that needs a distlock registry");
	}

	/**
	 * {@link #tryLockForWork(Duration, Duration)} without blocking the calling thread, as
	 * {@link LockRegistry#tryLockForWorkAsync} does for a lock's name.
	 * @param waitTime how long to wait at most
	 * @param leaseTime the lease, or {@code null} for the watchdog
	 * @return the hold when taken, empty if the lock stayed taken; cancelling it ends the wait
	 */
	default CompletableFuture<Optional<WorkHold>> tryLockForWorkAsync(Duration waitTime, Duration leaseTime) {
		return CompletableFuture.failedFuture(new UnsupportedOperationException(getClass().getName()
				+ " has no non-blocking acquisition; that needs a distlock registry"));
	}

	/**
	 * Not supported: a distributed lock has no distributed condition variables.
	 * @throws UnsupportedOperationException always
	 */
	@Override
	default Condition newCondition() {
		throw new UnsupportedOperationException("Distributed lock '" + getName() + "' does not support conditions");
	}

}
