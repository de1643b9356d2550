package io.distlock.core;

/**
 * What a backend tells a lock's waiters, instead of text each of them would have to parse: the lock
 * was released, it was handed to a queued owner, or an attempt that may have taken it was abandoned.
 * Backends that announce nothing (a table) never send any; the waiters poll.
 */
public sealed interface LockNotice permits LockNotice.Released, LockNotice.Granted, LockNotice.Abandoned {

	/** The notice of an ordinary release. */
	LockNotice RELEASED = new Released();

	/** The lock was released and is free. */
	record Released() implements LockNotice {
	}

	/**
	 * A release handed the lock to a queued owner's attempt, which holds it now.
	 * @param token the hold's fencing token
	 * @param owner the owner it was handed to
	 * @param ticket the attempt of that owner (a later attempt of the same thread is not it)
	 */
	record Granted(long token, String owner, String ticket) implements LockNotice {
	}

	/**
	 * An owner gave up an attempt that may have taken the lock, freeing it.
	 * @param owner the owner that gave up
	 */
	record Abandoned(String owner) implements LockNotice {
	}

}
