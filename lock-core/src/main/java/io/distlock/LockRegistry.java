package io.distlock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * Hands out distributed locks by name. The entry point of distlock: one registry per client
 * (usually one per application), shared by all threads.
 *
 * <p>Lock handles are cheap and not cached; two handles of the same name share the same hold
 * state in this registry, so a thread may lock through one and unlock through another.
 */
public interface LockRegistry {

	/**
	 * Returns a handle to the lock of the given name. Does not talk to the backend.
	 * @param name the lock's name; not blank
	 * @return a handle to the lock
	 * @throws IllegalArgumentException if the name is null or blank
	 */
	DistLock getLock(String name);

	/**
	 * Returns the holds this registry's threads have at this moment, for diagnostics.
	 * @return a snapshot, possibly empty
	 */
	List<HoldInfo> heldLocks();

	/**
	 * Takes a lock for a piece of work that may finish on another thread (a future, a reactive
	 * stream), waiting on the calling thread like {@link DistLock#tryLock(Duration, Duration)}.
	 * @param name the lock's name
	 * @param waitTime how long to wait for it
	 * @param leaseTime the lease, or {@code null} for the watchdog
	 * @return the hold, or empty if another holder kept the lock for the whole wait
	 * @throws InterruptedException if the waiting thread is interrupted
	 * @throws UnsupportedOperationException if this registry keeps holds per thread only
	 */
	default Optional<WorkHold> tryLockForWork(String name, Duration waitTime, Duration leaseTime)
			throws InterruptedException {
		throw new UnsupportedOperationException(getClass().getName() + " keeps holds per thread only; locks for "
				+ "future or reactive methods need a distlock registry");
	}

	/**
	 * Takes a lock for a piece of work without blocking the calling thread: the non-blocking face of
	 * {@link #tryLockForWork(String, Duration, Duration)}, for reactive and future-based code (an
	 * event loop may call it). The returned future completes with the hold, or with empty if another
	 * holder kept the lock for the whole wait; it fails with {@link LockBackendException} if the
	 * backend did not answer, and with {@link IllegalStateException} if the registry is closed.
	 * <p>Cancelling the future ends the wait: the acquisition leaves the lock's queue, and a hold it
	 * won at that moment is released, never left behind. Holds taken this way belong to the work,
	 * as with {@code tryLockForWork}: not reentrant, released by {@link WorkHold#release()} or
	 * {@link WorkHold#releaseAsync()} from any thread. Stages that depend on the returned future
	 * without an executor of their own run on the registry's few call threads: give slow or blocking
	 * ones an executor ({@code thenApplyAsync(fn, executor)}).
	 * @param name the lock's name
	 * @param waitTime how long to wait for it; zero: one try
	 * @param leaseTime the lease, or {@code null} for the watchdog
	 * @return the hold to come, or empty if not acquired within the wait
	 * @throws IllegalArgumentException if the name or the lease is invalid
	 */
	default CompletableFuture<Optional<WorkHold>> tryLockForWorkAsync(String name, Duration waitTime,
			Duration leaseTime) {
		return CompletableFuture.failedFuture(new UnsupportedOperationException(getClass().getName()
				+ " has no non-blocking acquisition; locks for reactive code need a distlock registry"));
	}

	/**
	 * As {@link #tryLockForWorkAsync(String, Duration, Duration)}, waiting as long as it takes (until
	 * the future is cancelled, or the registry closes).
	 * @param name the lock's name
	 * @param leaseTime the lease, or {@code null} for the watchdog
	 * @return the hold to come
	 * @throws IllegalArgumentException if the name or the lease is invalid
	 */
	default CompletableFuture<WorkHold> lockForWorkAsync(String name, Duration leaseTime) {
		return CompletableFuture.failedFuture(new UnsupportedOperationException(getClass().getName()
				+ " has no non-blocking acquisition; locks for reactive code need a distlock registry"));
	}

	/**
	 * Returns the read-write lock of this name: a key space of its own, unrelated to
	 * {@code getLock(name)}. Two calls with one name return handles of one lock.
	 * @param name the read-write lock's name
	 * @return a handle; it holds no state and may be kept or made anew
	 * @throws UnsupportedOperationException if this registry's backend keeps exclusive locks only
	 * ({@link #offersReadWriteLocks()})
	 */
	default DistReadWriteLock getReadWriteLock(String name) {
		throw new UnsupportedOperationException(getClass().getName() + " keeps exclusive locks only; read-write "
				+ "locks need a distlock registry on Redis, the table lock or ZooKeeper");
	}

	/**
	 * Returns the semaphore of this name with {@code permits} permits: a key space of its own,
	 * unrelated to {@code getLock(name)}. Every instance must declare the same permits for one name.
	 * @param name the semaphore's name
	 * @param permits how many owners may hold a permit at once; at least 1
	 * @return a handle; it holds no state and may be kept or made anew
	 * @throws IllegalArgumentException if {@code permits} is below 1
	 * @throws UnsupportedOperationException if this registry's backend keeps exclusive locks only
	 * ({@link #offersSemaphores()})
	 */
	default DistSemaphore getSemaphore(String name, int permits) {
		throw new UnsupportedOperationException(getClass().getName() + " keeps exclusive locks only; semaphores "
				+ "need a distlock registry on Redis, the table lock or ZooKeeper");
	}

	/** @return whether {@link #getReadWriteLock(String)} works on this registry */
	default boolean offersReadWriteLocks() {
		return false;
	}

	/** @return whether {@link #getSemaphore(String, int)} works on this registry */
	default boolean offersSemaphores() {
		return false;
	}

	/**
	 * @return whether this registry's holds carry fencing tokens ({@link DistLock#getFencingToken()},
	 * {@link WorkHold#fencingToken()}) that grow with every new holder; Redlock's do not
	 */
	default boolean offersFencingTokens() {
		return false;
	}

	/**
	 * @return when the restart grace ends that the backend refused an acquisition with lately (it
	 * restarted or lost its data, and lets no new holder in until the holders it may have forgotten
	 * have been told), if it has not ended yet; see {@code distlock.restart-grace}
	 */
	default Optional<Instant> restartGraceEnds() {
		return Optional.empty();
	}

	/**
	 * @param name the lock that was not acquired
	 * @param waited how long it was waited for
	 * @return the exception that says so, naming the restart grace if that is what refused it
	 */
	default LockNotAcquiredException notAcquired(String name, Duration waited) {
		return new LockNotAcquiredException(name, waited, restartGraceEnds().orElse(null));
	}

	/**
	 * Runs {@code work} holding the lock, taken on the calling thread within {@code waitTime} (the
	 * watchdog keeps it), and released when the work returns or throws. Spring Integration's
	 * {@code executeLocked}, with a wait that is not optional.
	 * @param name the lock's name
	 * @param waitTime how long to wait for the lock; zero: one try
	 * @param work what to run under the lock
	 * @param <T> the work's result type
	 * @param <E> what the work may throw
	 * @return the work's result
	 * @throws E what the work threw
	 * @throws LockNotAcquiredException if another holder kept the lock for the whole wait; the work did not run
	 * @throws InterruptedException if interrupted while waiting; the work did not run
	 */
	default <T, E extends Throwable> T executeLocked(String name, Duration waitTime, LockedWork<T, E> work)
			throws E, InterruptedException {
		DistLock lock = getLock(name);
		Duration wait = (waitTime != null) ? waitTime : Duration.ZERO;
		if (!lock.tryLock(wait, null)) {
			throw notAcquired(name, wait);
		}
		try {
			return work.call();
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * Runs {@code work} holding all the named locks, or none: taken on the calling thread in sorted
	 * order (so that two callers asking for overlapping sets in different orders never wait for each
	 * other's second lock) within one shared {@code waitTime}, and released in reverse order when the
	 * work returns or throws. What {@code @DistributedLock} with several keys does, for code that does
	 * not use the annotation. Repeated names count once.
	 * @param names the locks' names; at least one
	 * @param waitTime how long to wait for all of them together; zero: one try each
	 * @param work what to run under the locks
	 * @param <T> the work's result type
	 * @param <E> what the work may throw
	 * @return the work's result
	 * @throws E what the work threw
	 * @throws LockNotAcquiredException naming the first lock another holder kept for the rest of the
	 * wait; the locks taken before it are released and the work did not run
	 * @throws InterruptedException if interrupted while waiting; the work did not run
	 * @throws IllegalArgumentException if {@code names} is empty or has a null name
	 */
	default <T, E extends Throwable> T executeLocked(Collection<String> names, Duration waitTime, LockedWork<T, E> work)
			throws E, InterruptedException {
		if (names.isEmpty() || names.stream().anyMatch(Objects::isNull)) {
			throw new IllegalArgumentException("executeLocked needs at least one lock name and no null name, but got "
					+ names);
		}
		Duration wait = (waitTime != null && !waitTime.isNegative()) ? waitTime : Duration.ZERO;
		long start = System.nanoTime();
		Deque<DistLock> held = new ArrayDeque<>();
		Throwable failure = null;
		try {
			for (String name : new TreeSet<>(names)) {
				DistLock lock = getLock(name);
				Duration left = wait.minusNanos(System.nanoTime() - start);
				if (!lock.tryLock(left.isNegative() ? Duration.ZERO : left, null)) {
					throw notAcquired(name, wait);
				}
				held.push(lock);
			}
			return work.call();
		}
		catch (Throwable ex) {
			failure = ex;
			throw ex;
		}
		finally {
			unlockAll(held, failure);
		}
	}

	/**
	 * Unlocks the most recent first; a failure to unlock is added to {@code failure} if there is one, and
	 * thrown (after every lock was tried) if not. An {@link Error} from one unlock does not keep the
	 * others locked either.
	 */
	private static void unlockAll(Deque<DistLock> held, Throwable failure) {
		Throwable unlockFailure = null;
		for (DistLock lock : held) {
			try {
				lock.unlock();
			}
			catch (RuntimeException | Error ex) {
				if (failure != null) {
					failure.addSuppressed(ex);
				}
				else if (unlockFailure == null) {
					unlockFailure = ex;
				}
				else {
					unlockFailure.addSuppressed(ex);
				}
			}
		}
		if (unlockFailure instanceof Error error) {
			throw error;
		}
		if (unlockFailure != null) {
			throw (RuntimeException) unlockFailure;
		}
	}

	/**
	 * Work run under a lock by {@link #executeLocked}.
	 * @param <T> its result type
	 * @param <E> what it may throw
	 */
	@FunctionalInterface
	interface LockedWork<T, E extends Throwable> {

		/**
		 * @return the result
		 * @throws E what the work throws
		 */
		T call() throws E;

	}

	/**
	 * @return whether this registry's locks can be kept for a while after their release
	 * ({@link DistLock#unlockKeepingFor(Duration)}, {@link WorkHold#releaseKeepingFor(Duration)},
	 * {@code @DistributedLock(holdAtLeast = ...)}): they can where holds expire after their lease
	 * (Redis, Cluster, Redlock, the table lock), not where they last as long as a session (ZooKeeper)
	 */
	default boolean canKeepAfterUnlock() {
		return false;
	}

}
