package io.distlock.aop;

import java.time.Duration;

/**
 * Told how {@code @DistributedLock} calls fare, for metrics. {@code logicalName} is the annotation's
 * {@code name}, or {@code SimpleClassName.method} without one: never the resolved key, so that one
 * series per order id cannot arise.
 */
public interface DistributedLockObserver {

	/**
	 * One acquisition finished.
	 * @param logicalName the logical lock name
	 * @param outcome how it ended
	 * @param waited how long it took
	 */
	void acquisition(String logicalName, Outcome outcome, Duration waited);

	/**
	 * A method released its locks.
	 * @param logicalName the logical lock name
	 * @param heldFor from acquisition to release
	 */
	void released(String logicalName, Duration heldFor);

	/**
	 * One acquisition finished, through the named registry; by default as
	 * {@link #acquisition(String, Outcome, Duration)}.
	 * @param logicalName the logical lock name
	 * @param registry the registry's bean name, or {@code default} for the application's default one
	 * @param outcome how it ended
	 * @param waited how long it took
	 */
	default void acquisition(String logicalName, String registry, Outcome outcome, Duration waited) {
		acquisition(logicalName, outcome, waited);
	}

	/**
	 * A method released its locks, of the named registry; by default as {@link #released(String, Duration)}.
	 * @param logicalName the logical lock name
	 * @param registry the registry's bean name, or {@code default}
	 * @param heldFor from acquisition to release
	 */
	default void released(String logicalName, String registry, Duration heldFor) {
		released(logicalName, heldFor);
	}

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
