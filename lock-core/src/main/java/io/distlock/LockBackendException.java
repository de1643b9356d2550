package io.distlock;

/**
 * The lock backend could not be reached or did not answer in time, so whether the lock was
 * acquired is unknown to the caller; the engine treats it as not acquired. An acquisition that
 * reaches the server after its caller gave up expires after its lease.
 */
public class LockBackendException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String lockName;

	/**
	 * @param lockName the lock concerned
	 * @param message what happened
	 * @param cause the backend's exception, if any
	 */
	public LockBackendException(String lockName, String message, Throwable cause) {
		super(message, cause);
		this.lockName = lockName;
	}

	/** @return the lock concerned */
	public String getLockName() {
		return this.lockName;
	}

}
