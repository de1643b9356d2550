package io.distlock;

/**
 * A thread that holds the read lock of a {@link DistReadWriteLock}, and not its write lock, asked
 * for the write lock. A read lock cannot be upgraded: two readers upgrading at once would wait for
 * each other forever (Curator and Redisson wait forever here). Thrown at once, without waiting and
 * without asking the backend.
 */
public class LockUpgradeException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	private final String lockName;

	/**
	 * @param lockName the read-write lock's name
	 * @param threadName the thread that asked
	 */
	public LockUpgradeException(String lockName, String threadName) {
		super("Thread '" + threadName + "' holds the read lock of '" + lockName
				+ "' and asked for its write lock; a read lock cannot be upgraded (two readers upgrading would "
				+ "wait for each other forever). Unlock the read lock first, or take the write lock from the start.");
		this.lockName = lockName;
	}

	/** @return the read-write lock's name */
	public String getLockName() {
		return this.lockName;
	}

}
