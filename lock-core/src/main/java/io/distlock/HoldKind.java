package io.distlock;

/**
 * What a hold is: an exclusive lock's, one side of a read-write lock's, or a semaphore's permit.
 * The three families live in key spaces of their own, so {@code getLock("x")},
 * {@code getReadWriteLock("x")} and {@code getSemaphore("x", n)} are three unrelated locks, as a
 * Curator mutex and read-write lock on one path are.
 */
public enum HoldKind {

	/** A hold of an exclusive, reentrant lock ({@link LockRegistry#getLock}). */
	EXCLUSIVE(Family.LOCK),

	/** A read share of a {@link DistReadWriteLock}: any number of owners at once, while nobody writes. */
	READ(Family.READ_WRITE),

	/** The write hold of a {@link DistReadWriteLock}: one owner, and no reader but its own. */
	WRITE(Family.READ_WRITE),

	/** One permit of a {@link DistSemaphore}. */
	PERMIT(Family.SEMAPHORE);

	private final Family family;

	HoldKind(Family family) {
		this.family = family;
	}

	/** @return the key space a hold of this kind lives in: READ and WRITE share one */
	public Family family() {
		return this.family;
	}

	/**
	 * @param name a lock's name
	 * @return how messages name the lock a hold of this kind belongs to, e.g. {@code read lock 'x'}
	 */
	public String describe(String name) {
		return switch (this) {
			case EXCLUSIVE -> "lock '" + name + "'";
			case READ -> "read lock '" + name + "'";
			case WRITE -> "write lock '" + name + "'";
			case PERMIT -> "semaphore '" + name + "'";
		};
	}

	/** The key spaces: holds of different families never exclude each other. */
	public enum Family {

		/** Exclusive locks. */
		LOCK,

		/** Read-write locks: their read and write holds. */
		READ_WRITE,

		/** Semaphores: their permits. */
		SEMAPHORE;

		/**
		 * @param name a lock's name
		 * @return how listings name a lock of this family: {@code x}, {@code x (read-write)}, {@code x (semaphore)}
		 */
		public String displayName(String name) {
			return switch (this) {
				case LOCK -> name;
				case READ_WRITE -> name + " (read-write)";
				case SEMAPHORE -> name + " (semaphore)";
			};
		}

	}

}
