package io.distlock.annotation;

/**
 * Which lock of a key {@link DistributedLock} takes: the key's exclusive lock, or a side of its
 * read-write lock ({@link io.distlock.LockRegistry#getReadWriteLock}), which is a lock of its own,
 * unrelated to the exclusive one.
 */
public enum LockMode {

	/** The key's exclusive lock: one holder at a time (or, with {@code permits > 1}, a permit of its semaphore). */
	EXCLUSIVE,

	/** The read lock of the key's read-write lock: shared with other readers, excluded by a writer. */
	READ,

	/** The write lock of the key's read-write lock: excludes every other reader and writer. */
	WRITE

}
