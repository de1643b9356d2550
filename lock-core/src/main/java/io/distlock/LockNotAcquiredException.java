package io.distlock;

import java.time.Duration;

/**
 * A lock was not acquired within its wait because another holder kept it: what the reactive face
 * ({@link io.distlock.reactor.ReactiveLocks#withLock}) signals and
 * {@link LockRegistry#executeLocked(java.util.Collection, Duration, LockRegistry.LockedWork)} throws
 * instead of running the work. A backend that did not answer is a {@link LockBackendException} instead.
 */
public class LockNotAcquiredException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String lockName;

	private final Duration waited;

	/**
	 * @param lockName the lock that stayed taken
	 * @param waited how long it was waited for
	 */
	public LockNotAcquiredException(String lockName, Duration waited) {
		super("Could not acquire lock '" + lockName + "' within " + waited.toMillis()
				+ " ms: another holder kept it. The work was not run; wait longer, or handle this error "
				+ "(catch it, or onErrorResume in a reactive chain) if skipping the work is acceptable.");
		this.lockName = lockName;
		this.waited = waited;
	}

	/** @return the lock that stayed taken */
	public String getLockName() {
		return this.lockName;
	}

	/** @return how long it was waited for */
	public Duration getWaited() {
		return this.waited;
	}

}
