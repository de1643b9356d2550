package io.distlock.aop;

/**
 * A {@code @DistributedLock} cannot be used as written: a key or fallback expression does not parse,
 * a duration is malformed or negative, or a failure handler bean does not exist. Thrown while the
 * bean is proxied, so the application fails at start-up rather than at the first call.
 */
public class InvalidLockAnnotationException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	/**
	 * @param message what is wrong, naming the method
	 * @param cause the parser's exception, if any
	 */
	public InvalidLockAnnotationException(String message, Throwable cause) {
		super(message, cause);
	}

}
