package io.distlock.core;

import java.util.concurrent.locks.LockSupport;

/**
 * One waiting acquisition's place in a {@link WaitingRoom}: a parked thread's, woken by unparking
 * it, or one without a thread ({@link AsyncAcquisition}), woken through its callback.
 */
final class Waiter {

	final WaitingRoom room;

	/** What the attempt waits for: the lock, and in a read-write lock's room, which side. */
	final LockId id;

	final String owner;

	/** The waiting attempt's ticket: a hand-off naming another attempt of this owner is not for it. */
	final String ticket;

	/**
	 * The thread that parks for this waiter, or null for one without a thread. It parks holding no
	 * lock (it does not wait on the room's guard): an Error thrown where it parks (a
	 * StackOverflowError, a tool's) then leaves no lock half-taken, and reaches the caller as itself.
	 */
	final Thread thread;

	/** For a waiter without a thread: what wakes it. */
	final Runnable onWake;

	/** Set when this waiter, at the head, should try the lock now. Guarded by the room's guard. */
	boolean mustTry;

	/** The fencing token of a hold handed to this waiter, or null. Guarded by the room's guard. */
	Long grantedToken;

	/**
	 * @param thread the thread that parks for it, or null for a waiter without a thread
	 * @param onWake what wakes a waiter without a thread, or null
	 */
	Waiter(WaitingRoom room, LockId id, String owner, String ticket, Thread thread, Runnable onWake) {
		if ((thread == null) == (onWake == null)) {
			throw new IllegalArgumentException("A waiter is woken either by unparking its thread or by its callback");
		}
		this.room = room;
		this.id = id;
		this.owner = owner;
		this.ticket = ticket;
		this.thread = thread;
		this.onWake = onWake;
	}

	/** Wakes the waiting thread, or hands the wake-up on. Called under the room's guard. */
	void wake() {
		if (this.thread != null) {
			// Unparked after the room's state changed: a waker that comes between the waiter's look
			// and its park leaves a permit, and the park returns at once.
			LockSupport.unpark(this.thread);
		}
		else {
			this.onWake.run();
		}
	}

	/**
	 * What {@link #awaitTurn(long)} would answer at once, without waiting: for a waiter without a
	 * thread, which comes back here when it is woken or its own timer runs out.
	 */
	ReleaseWaits.Turn turnNow() {
		synchronized (this.room.guard) {
			if (this.grantedToken != null) {
				return ReleaseWaits.Turn.GRANTED;
			}
			this.mustTry = false;
			return (this.room.queue.peekFirst() == this) ? ReleaseWaits.Turn.TRY : ReleaseWaits.Turn.WAIT;
		}
	}

	/** @return whether something happened that {@link #awaitTurn(long)} would have woken up for */
	boolean woken() {
		synchronized (this.room.guard) {
			return this.mustTry || this.grantedToken != null;
		}
	}

	/**
	 * Sleeps until the lock is handed to this waiter, until it is its turn to try (it became the
	 * head, or a release was announced while it was the head) or until {@code nanos} passed.
	 * @return what woke it
	 */
	ReleaseWaits.Turn awaitTurn(long nanos) throws InterruptedException {
		return this.room.awaitTurn(this, nanos);
	}

	/** @return the fencing token of the hold handed to this waiter (valid after {@link ReleaseWaits.Turn#GRANTED}) */
	long grantedToken() {
		synchronized (this.room.guard) {
			return this.grantedToken;
		}
	}

	/** @return whether release notifications reach this waiter's room */
	boolean subscribed() {
		return this.room.subscribed();
	}

	/** Forgets a hand-off this waiter did not take up as it was (it confirms it with the backend instead). */
	void forgetGrant() {
		synchronized (this.room.guard) {
			this.grantedToken = null;
		}
	}

	/** @return what the attempt waits for */
	LockId id() {
		return this.id;
	}

	/** @return the waiting owner's id */
	String owner() {
		return this.owner;
	}

	/** @return the waiting attempt's ticket */
	String ticket() {
		return this.ticket;
	}

}
