package io.distlock.annotation;

/**
 * What a {@link DistributedLock} method does when it does not get its lock in time. In no case does
 * the method run without its lock.
 */
public enum OnLockFailure {

	/** Throw {@link io.distlock.annotation.LockAcquisitionException} (the default). */
	THROW,

	/** Do not run the method; return the {@link DistributedLock#fallback()} value. */
	SKIP

}
