package io.distlock;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A hold that belongs to a piece of work rather than to a thread: the work of a method that returns
 * a {@code CompletableFuture} or a reactive stream, which may finish on any thread. It has an owner
 * of its own, so it is not reentrant: the thread that took it (or any other) waits for it like any
 * other owner. The watchdog keeps it, if it has no lease of its own, until {@link #release()}.
 */
public interface WorkHold {

	/** @return the lock's name */
	String lockName();

	/**
	 * @return the hold's fencing token
	 * @throws UnsupportedOperationException if the backend has none (Redlock)
	 */
	long fencingToken();

	/**
	 * Releases the hold, from any thread; later calls do nothing.
	 * @throws LockLostException if the hold was lost before (its lease ran out, the backend lost it)
	 * @throws LockBackendException if the backend did not answer; the hold then expires within its lease
	 */
	void release();

	/**
	 * Releases the hold like {@link #release()}, without blocking the calling thread: the backend
	 * call runs on the registry's own threads.
	 * @return completes when the hold is released, or fails as {@link #release()} would throw
	 */
	default CompletableFuture<Void> releaseAsync() {
		return CompletableFuture.runAsync(this::release);
	}

	/**
	 * Releases the hold like {@link #release()} but leaves the lock taken for {@code keep} more,
	 * unrenewed (see {@link DistLock#unlockKeepingFor(java.time.Duration)}); later calls do nothing.
	 * @param keep how long the lock stays taken; zero or negative: released now
	 * @throws UnsupportedOperationException if the backend's holds do not expire on their own; the
	 * hold is then still there and {@link #release()} releases it
	 */
	default void releaseKeepingFor(Duration keep) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot keep a lock after its release");
	}

}
