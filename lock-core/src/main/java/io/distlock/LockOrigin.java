package io.distlock;

import java.util.function.Supplier;

/**
 * Names the code on whose behalf the calling thread acquires locks (for example
 * {@code OrderService.ship(Order)}), so that diagnostics, lost-hold warnings and the Actuator
 * endpoint can say which method held a lock. The {@code @DistributedLock} interceptor sets it; code
 * using the API directly may too.
 */
public final class LockOrigin {

	private static final ThreadLocal<Origin> CURRENT = new ThreadLocal<>();

	private LockOrigin() {
	}

	/**
	 * Runs {@code action} with {@code origin} as the calling thread's origin.
	 * @param origin what is acquiring, e.g. a method
	 * @param action the acquisition
	 * @param <T> the result type
	 * @return the action's result
	 */
	public static <T> T during(String origin, Supplier<T> action) {
		return during(null, origin, action);
	}

	/**
	 * Runs {@code action} with a logical lock name and an origin for the calling thread.
	 * @param lockName the logical name (e.g. the annotation's {@code name}), or {@code null}
	 * @param origin what is acquiring, e.g. a method
	 * @param action the acquisition
	 * @param <T> the result type
	 * @return the action's result
	 */
	public static <T> T during(String lockName, String origin, Supplier<T> action) {
		Origin previous = CURRENT.get();
		CURRENT.set(new Origin(lockName, origin));
		try {
			return action.get();
		}
		finally {
			if (previous != null) {
				CURRENT.set(previous);
			}
			else {
				CURRENT.remove();
			}
		}
	}

	/** @return the calling thread's origin, or {@code null} */
	public static String current() {
		Origin origin = CURRENT.get();
		return (origin != null) ? origin.method() : null;
	}

	/** @return the calling thread's logical lock name, or {@code null} */
	public static String currentLockName() {
		Origin origin = CURRENT.get();
		return (origin != null) ? origin.lockName() : null;
	}

	private record Origin(String lockName, String method) {
	}

}
