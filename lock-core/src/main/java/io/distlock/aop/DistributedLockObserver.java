package io.distlock.aop;

import java.time.Duration;

/**
 * Told how {@code @DistributedLock} calls fare, for metrics. {@code lockName} is the annotation's
 * {@code name}, or {@code SimpleClassName.method} without one: never the resolved key, so that one
 * series per order id cannot arise.
 */
public interface DistributedLockObserver {

	/**
	 * One acquisition finished.
	 * @param lockName the logical lock name
	 * @param outcome how it ended
	 * @param waited how long it took
	 */
	void acquisition(String lockName, Outcome outcome, Duration waited);

	/**
	 * A method released its locks.
	 * @param lockName the logical lock name
	 * @param heldFor from acquisition to release
	 */
	void released(String lockName, Duration heldFor);

	/** How an acquisition ended. */
	enum Outcome {

		/** All locks were acquired. */
		ACQUIRED,

		/** Another holder kept a lock for the whole wait time. */
		TIMED_OUT,

		/** The backend failed, or the wait was interrupted. */
		FAILED

	}

}
