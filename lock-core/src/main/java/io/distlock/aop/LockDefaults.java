package io.distlock.aop;

import java.time.Duration;

/**
 * What {@code @DistributedLock} uses where it says nothing.
 *
 * @param waitTime how long to wait for a lock; zero means do not wait
 * @param leaseTime the lease, or {@code null} to let the watchdog keep the lock until the method returns
 */
public record LockDefaults(Duration waitTime, Duration leaseTime) {

	/**
	 * Validates the defaults.
	 */
	public LockDefaults {
		if (waitTime == null || waitTime.isNegative()) {
			throw new IllegalArgumentException("Default wait time must be zero or positive but was " + waitTime);
		}
		if (leaseTime != null && (leaseTime.isNegative() || leaseTime.isZero())) {
			throw new IllegalArgumentException("Default lease time must be positive but was " + leaseTime);
		}
	}

}
