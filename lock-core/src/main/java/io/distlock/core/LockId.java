package io.distlock.core;

import io.distlock.HoldKind;

/**
 * Which lock an acquisition or a release is about: a name and the kind of hold, with a semaphore's
 * permits. Where the engine once passed a lock's name, it passes this, so that {@code getLock("x")},
 * the read and write sides of {@code getReadWriteLock("x")} and {@code getSemaphore("x", n)} never
 * share a hold, a room or a backend key.
 *
 * <p>A class rather than a record so that it carries its room's key, made once per handle: every
 * uncontended lock() and unlock() asks whether the room has waiters, and must not allocate a key to ask.
 */
final class LockId {

	private final String name;

	private final HoldKind kind;

	private final int permits;

	private final RoomKey room;

	/**
	 * @param name the lock's name, checked
	 * @param kind the kind of hold
	 * @param permits a semaphore's permits as the caller declares them; 0 for other kinds
	 */
	LockId(String name, HoldKind kind, int permits) {
		this.name = name;
		this.kind = kind;
		this.permits = permits;
		this.room = new RoomKey(name, kind.family());
	}

	/** @return the exclusive lock of this name */
	static LockId exclusive(String name) {
		return new LockId(name, HoldKind.EXCLUSIVE, 0);
	}

	/** @return the lock's name */
	String name() {
		return this.name;
	}

	/** @return the kind of hold */
	HoldKind kind() {
		return this.kind;
	}

	/** @return a semaphore's permits as the caller declares them; 0 for other kinds */
	int permits() {
		return this.permits;
	}

	/** @return the room its waiters share: readers and writers of one read-write lock wait in one */
	RoomKey room() {
		return this.room;
	}

	/** @return how messages name it, e.g. {@code read lock 'x'} */
	String describe() {
		return this.kind.describe(this.name);
	}

	/** @return a description (such as {@link #describe()}'s) with its first letter capitalized, to start a sentence */
	static String capitalized(String text) {
		return Character.toUpperCase(text.charAt(0)) + text.substring(1);
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof LockId that && this.kind == that.kind && this.permits == that.permits
				&& this.name.equals(that.name);
	}

	@Override
	public int hashCode() {
		return (this.name.hashCode() * 31 + this.kind.hashCode()) * 31 + this.permits;
	}

	@Override
	public String toString() {
		return describe();
	}

	/**
	 * One waiting room: a lock name within one family.
	 * @param name the lock's name
	 * @param family the key space
	 */
	record RoomKey(String name, HoldKind.Family family) {

		/** @return how listings of waiters name it: {@code x}, {@code x (read-write)}, {@code x (semaphore)} */
		String displayName() {
			return this.family.displayName(this.name);
		}

	}

}
