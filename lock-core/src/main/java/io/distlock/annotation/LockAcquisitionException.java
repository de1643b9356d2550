package io.distlock.annotation;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;

import io.distlock.LockNotAcquiredException;

/**
 * A {@code @DistributedLock} method did not get its lock(s) and was not run: another holder kept
 * the lock for the whole wait time, the backend served its restart grace (then {@link #getCause()} is
 * a {@link LockNotAcquiredException} that says until when), or the backend could not be reached (then
 * {@link #getCause()} says why).
 */
public class LockAcquisitionException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final List<String> lockNames;

	private final transient Method method;

	private final Duration waited;

	/**
	 * @param lockNames the locks the method needed
	 * @param method the method that was not run
	 * @param waited how long the caller waited
	 * @param cause the backend failure, or {@code null} if the lock was simply busy
	 */
	public LockAcquisitionException(List<String> lockNames, Method method, Duration waited, Throwable cause) {
		super(message(lockNames, method, waited, cause), cause);
		this.lockNames = List.copyOf(lockNames);
		this.method = method;
		this.waited = waited;
	}

	private static String message(List<String> lockNames, Method method, Duration waited, Throwable cause) {
		String what = (lockNames.size() == 1) ? "lock '" + lockNames.get(0) + "'" : "locks " + lockNames;
		String where = method.getDeclaringClass().getSimpleName() + "." + method.getName();
		if (cause instanceof LockNotAcquiredException refused) {
			// Not acquired for a reason of its own (the backend's restart grace): that reason is the message.
			return "Could not acquire " + what + " for " + where + " within " + waited.toMillis() + " ms: "
					+ LockNotAcquiredException.reason(refused.getRestartGraceEnds().orElse(null))
					+ " The method was not run.";
		}
		if (cause != null) {
			return "Could not acquire " + what + " for " + where + " after " + waited.toMillis()
					+ " ms because the lock backend failed: " + cause.getMessage()
					+ ". The method was not run; see docs/failure-semantics.md.";
		}
		return "Could not acquire " + what + " for " + where + " within " + waited.toMillis()
				+ " ms: another holder kept " + ((lockNames.size() == 1) ? "it" : "one of them") + ". The method was not run; "
				+ "raise waitTime, or choose onFailure = SKIP or a failureHandler if skipping is acceptable "
				+ "(docs/annotation.md#when-the-lock-is-not-acquired).";
	}

	/** @return the locks the method needed */
	public List<String> getLockNames() {
		return this.lockNames;
	}

	/** @return the method that was not run */
	public Method getMethod() {
		return this.method;
	}

	/** @return how long the caller waited */
	public Duration getWaited() {
		return this.waited;
	}

}
