package io.distlock.annotation;

/**
 * Decides what a {@link DistributedLock} method returns when it did not get its lock. Declared as a
 * bean and named in {@link DistributedLock#failureHandler()}.
 */
@FunctionalInterface
public interface LockFailureHandler {

	/**
	 * @param failure the call that did not get its lock
	 * @return the value the method call returns instead
	 * @throws Throwable to make the call fail with it
	 */
	Object handle(LockFailure failure) throws Throwable;

}
