package io.distlock;

import java.time.Duration;

/**
 * A distributed semaphore: at most {@link #getPermits()} owners hold a permit at once, across all
 * instances. A permit belongs to the thread that took it, is leased and renewed by the watchdog like
 * a lock, and comes back after its lease if its holder crashes.
 *
 * <p>Unlike {@link java.util.concurrent.Semaphore}, permits are held per thread and reentrantly: a
 * thread that acquires twice holds one permit, counted twice, and must release twice (so that nested
 * methods guarded by the same semaphore never wait for themselves); {@link #release()} by a thread
 * that holds no permit throws {@link IllegalMonitorStateException}.
 *
 * <p>Every acquisition declares the number of permits; instances that disagree for one name get a
 * {@link PermitsMismatchException}. A new number takes effect once the semaphore is idle (no holder,
 * nobody waiting).
 *
 * <p>Obtained from {@link LockRegistry#getSemaphore(String, int)}; it lives in a key space of its
 * own, unrelated to the lock or read-write lock of the same name.
 */
public interface DistSemaphore {

	/** @return the semaphore's name */
	String getName();

	/** @return how many owners may hold a permit at once */
	int getPermits();

	/**
	 * Takes a permit if one is free within {@code waitTime}; the watchdog renews it until released.
	 * @param waitTime how long to wait at most
	 * @return whether a permit was taken (or re-entered)
	 * @throws InterruptedException if interrupted while waiting
	 */
	boolean tryAcquire(Duration waitTime) throws InterruptedException;

	/**
	 * As {@link #tryAcquire(Duration)}, with a fixed lease and no renewal.
	 * @param waitTime how long to wait at most
	 * @param leaseTime how long the permit is held without renewal
	 * @return whether a permit was taken (or re-entered)
	 * @throws InterruptedException if interrupted while waiting
	 */
	boolean tryAcquire(Duration waitTime, Duration leaseTime) throws InterruptedException;

	/** Takes a permit, waiting as long as it takes; an interrupt does not end the wait and is kept. */
	void acquire();

	/**
	 * Takes a permit, waiting until one is free or the thread is interrupted.
	 * @throws InterruptedException if interrupted while waiting
	 */
	void acquireInterruptibly() throws InterruptedException;

	/**
	 * Undoes one acquisition of the calling thread; the last one gives the permit back.
	 * @throws IllegalMonitorStateException if the thread holds no permit
	 * @throws LockLostException if the permit was lost (its lease ran out, the backend lost it)
	 */
	void release();

	/** @return the permits no live holder has now, a snapshot: it may change at once */
	int availablePermits();

	/** @return whether the calling thread holds a permit */
	boolean isHeldByCurrentThread();

	/** @return how many acquisitions of the calling thread are not released yet */
	int getHoldCount();

	/**
	 * @return the calling thread's permit's fencing token: above the tokens of every hold of this
	 * semaphore that ended before the permit was taken
	 * @throws IllegalMonitorStateException if the thread holds no permit
	 */
	long getFencingToken();

	/**
	 * @return this semaphore's permit as a {@link DistLock}: locking it takes a permit, unlocking
	 * gives it back; for code that expects a lock. It is the same hold as this semaphore's: a permit
	 * taken through one is counted, and can be released, through the other.
	 */
	DistLock asLock();

}
