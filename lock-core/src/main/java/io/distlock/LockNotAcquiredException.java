package io.distlock;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * A lock was not acquired within its wait because another holder kept it (or the backend serves its
 * restart grace: {@link #getRestartGraceEnds()}): what the reactive face
 * ({@link io.distlock.reactor.ReactiveLocks#withLock}) signals and
 * {@link LockRegistry#executeLocked(java.util.Collection, Duration, LockRegistry.LockedWork)} throws
 * instead of running the work. A backend that did not answer is a {@link LockBackendException} instead.
 */
public class LockNotAcquiredException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String lockName;

	private final Duration waited;

	private final Instant restartGraceEnds;

	/**
	 * @param lockName the lock that stayed taken
	 * @param waited how long it was waited for
	 */
	public LockNotAcquiredException(String lockName, Duration waited) {
		this(lockName, waited, null);
	}

	/**
	 * @param lockName the lock that was not acquired
	 * @param waited how long it was waited for
	 * @param restartGraceEnds when the backend's restart grace ends, if that is what refused the
	 * lock, else {@code null}
	 */
	public LockNotAcquiredException(String lockName, Duration waited, Instant restartGraceEnds) {
		super("Could not acquire lock '" + lockName + "' within " + waited.toMillis() + " ms: " + reason(restartGraceEnds)
				+ " The work was not run; wait longer, or handle this error "
				+ "(catch it, or onErrorResume in a reactive chain) if skipping the work is acceptable.");
		this.lockName = lockName;
		this.waited = waited;
		this.restartGraceEnds = restartGraceEnds;
	}

	/**
	 * @param restartGraceEnds when the backend's restart grace ends, or {@code null}
	 * @return why a lock was not acquired, as a sentence
	 */
	public static String reason(Instant restartGraceEnds) {
		if (restartGraceEnds == null) {
			return "another holder kept it.";
		}
		return "the lock server serves its restart grace until " + restartGraceEnds
				+ " (distlock.restart-grace): it restarted or lost its data, and lets no new holder in before the "
				+ "holders it may have forgotten have been told. A server that starts empty on purpose (a test's) "
				+ "can go without it: distlock.restart-grace=0s. See docs/failure-semantics.md#the-restart-grace.";
	}

	/** @return the lock that stayed taken */
	public String getLockName() {
		return this.lockName;
	}

	/** @return how long it was waited for */
	public Duration getWaited() {
		return this.waited;
	}

	/** @return when the restart grace that refused the lock ends, if that is what refused it */
	public Optional<Instant> getRestartGraceEnds() {
		return Optional.ofNullable(this.restartGraceEnds);
	}

}
