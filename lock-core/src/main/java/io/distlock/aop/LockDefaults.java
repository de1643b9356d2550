package io.distlock.aop;

import java.time.Duration;

import io.distlock.LockSettings;

/**
 * What {@code @DistributedLock} uses where it says nothing.
 *
 * @param waitTime how long to wait for a lock; zero means do not wait
 * @param leaseTime the lease, or {@code null} to let the watchdog keep the lock until the method returns
 */
public record LockDefaults(Duration waitTime, Duration leaseTime) {

	/**
	 * Validates the defaults.
	 * @throws io.distlock.InvalidLockSettingException if the wait is negative or the lease not positive
	 */
	public LockDefaults {
		LockSettings.waitTime(waitTime);
		if (leaseTime != null) {
			LockSettings.defaultLease(leaseTime);
		}
	}

}
