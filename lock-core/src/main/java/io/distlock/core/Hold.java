package io.distlock.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.distlock.HoldInfo;
import io.distlock.HoldKind;
import io.distlock.LockOrigin;
import io.distlock.LostHold;

/**
 * One owner's hold of one lock, as this client knows it. The count is changed only by the owner;
 * the watchdog reads the rest.
 */
final class Hold {

	/** The least time a backend call about holds is given, even when their confirmed lease is (nearly) over. */
	static final long MIN_WAIT_NANOS = Duration.ofMillis(100).toNanos();

	final String name;

	final String owner;

	/** What the hold is: an exclusive lock's, a read or write hold, or a permit. */
	final HoldKind kind;

	/** The fencing token; {@link LockBackend.Acquisition#TOKEN_ON_REQUEST} until the owner first asks. */
	volatile long token;

	/** The id of the attempt that took this hold, which names it to the backend on release; may be null. */
	final String attemptId;

	final boolean watchdog;

	/** When the hold was taken, in epoch milliseconds of the engine's clock; an Instant only when asked. */
	final long sinceMillis;

	/**
	 * The owning thread, held strongly (a weak reference was one more object per acquisition): a
	 * thread that ended holding the lock is found dead at the watchdog's next tick, which drops the
	 * hold and with it the thread object, emptied of its thread-locals by its exit.
	 */
	private final Thread thread;

	private final String threadName;

	private final String origin;

	private final String logicalName;

	// Plain volatile fields changed through VarHandles rather than atomic objects: a hold is made on
	// every acquisition, and three atomics were a tenth of what an uncontended lock() allocated itself.
	private static final VarHandle RENEWALS;

	private static final VarHandle ENDING;

	private static final VarHandle LOST;

	static {
		try {
			MethodHandles.Lookup lookup = MethodHandles.lookup();
			RENEWALS = lookup.findVarHandle(Hold.class, "renewals", long.class);
			ENDING = lookup.findVarHandle(Hold.class, "ending", Ending.class);
			LOST = lookup.findVarHandle(Hold.class, "lost", LostHold.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private volatile long renewals;

	private volatile int count = 1;

	/** Until when (System.nanoTime) the backend is known to keep the hold without renewal. */
	private volatile long confirmedUntilNanos;

	/**
	 * The latest time (System.nanoTime) a call sent for this hold asked the backend to keep it until;
	 * set when the hold is recorded, never moved earlier.
	 */
	private volatile long askedUntilNanos;

	/**
	 * What ends the hold first: its owner's last release (the watchdog then leaves it alone) or the
	 * watchdog's finding that its explicit lease ran out (the owner then learns it was lost).
	 */
	private volatile Ending ending;

	/** The two ways a hold ends while its owner may still act on it. */
	enum Ending {
		/** The owner's last release is in flight. */
		RELEASING,
		/** Its explicit lease ran out before its owner released it. */
		EXPIRED
	}

	private volatile LostHold lost;

	Hold(String name, HoldKind kind, String owner, long token, String attemptId, boolean watchdog, long sinceMillis, Thread thread) {
		// A start for askedAtLeastUntil's comparison (nanoTime may be negative; only differences count).
		this.askedUntilNanos = System.nanoTime();
		this.name = name;
		this.kind = kind;
		this.owner = owner;
		this.token = token;
		this.attemptId = attemptId;
		this.watchdog = watchdog;
		this.sinceMillis = sinceMillis;
		// No thread for a hold owned by work: it lives until released, whichever thread ends the work.
		this.thread = thread;
		this.threadName = (thread != null) ? thread.getName() : "(work)";
		this.origin = LockOrigin.current();
		this.logicalName = LockOrigin.currentLockName();
	}

	/**
	 * @return this hold for a renewal: by its attempt, so that a renewal landing after the hold's
	 * release extends no later hold of its owner
	 */
	LockBackend.HoldRef ref() {
		return new LockBackend.HoldRef(this.name, this.owner, this.attemptId, this.kind);
	}

	String origin() {
		return this.origin;
	}

	String threadName() {
		return this.threadName;
	}

	void renewed() {
		RENEWALS.getAndAdd(this, 1L);
	}

	int count() {
		return this.count;
	}

	void count(int count) {
		this.count = count;
	}

	boolean ownerThreadAlive() {
		if (this.thread == null) {
			return true;
		}
		return this.thread.isAlive();
	}

	void confirmedUntil(long nanos) {
		this.confirmedUntilNanos = nanos;
		askedAtLeastUntil(nanos);
	}

	/**
	 * Moves the confirmed lease later, never earlier: a re-entry that asked for less than the hold had
	 * left does not shorten it.
	 */
	void confirmedAtLeastUntil(long nanos) {
		if (nanos - this.confirmedUntilNanos > 0) {
			this.confirmedUntilNanos = nanos;
		}
	}

	/** @return how long from {@code now} the backend is known to keep the hold; negative if over */
	long confirmedNanosLeft(long now) {
		return this.confirmedUntilNanos - now;
	}

	/**
	 * Records that a call asking the backend to keep the hold until {@code nanos} is about to be sent
	 * (a renewal, an extension, a re-entry), before its answer confirms it.
	 */
	void askedAtLeastUntil(long nanos) {
		if (nanos - this.askedUntilNanos > 0) {
			this.askedUntilNanos = nanos;
		}
	}

	/**
	 * @return how long from {@code now} the backend keeps the hold, or has been asked to by a call
	 * that may still be on its way; negative if over
	 */
	long askedNanosLeft(long now) {
		long until = (this.askedUntilNanos - this.confirmedUntilNanos > 0) ? this.askedUntilNanos : this.confirmedUntilNanos;
		return until - now;
	}

	boolean confirmedAt(long nanos) {
		return nanos - this.confirmedUntilNanos < 0;
	}

	/**
	 * How long a call that renews or releases these holds may wait for the backend: until the
	 * earliest confirmed lease among them runs out (past that, the answer can only be that they are
	 * gone, and their owners must be told now), at least {@link #MIN_WAIT_NANOS}.
	 * @param holds the holds the call is about
	 * @param now {@link System#nanoTime()} at the call
	 * @return the wait
	 */
	static Duration waitWithin(List<Hold> holds, long now) {
		long earliest = Long.MAX_VALUE;
		for (Hold hold : holds) {
			earliest = Math.min(earliest, hold.confirmedUntilNanos - now);
		}
		return Duration.ofNanos(Math.max(MIN_WAIT_NANOS, earliest));
	}

	/**
	 * {@link #waitWithin(List, long)} for this hold alone, plus {@code moreNanos}, in one
	 * {@code Duration}: a release asks on every unlock.
	 */
	Duration waitWithin(long now, long moreNanos) {
		long wait = Math.max(MIN_WAIT_NANOS, this.confirmedUntilNanos - now);
		return Duration.ofNanos((wait > Long.MAX_VALUE - moreNanos) ? Long.MAX_VALUE : wait + moreNanos);
	}

	boolean releasing() {
		return this.ending == Ending.RELEASING;
	}

	/**
	 * @param how how the hold ends
	 * @return whether it ends so; false if it already ended the other way
	 */
	boolean end(Ending how) {
		return ENDING.compareAndSet(this, (Ending) null, how) || this.ending == how;
	}

	/**
	 * @param lostHold the loss
	 * @return true if this call marked it lost, false if it already was
	 */
	boolean markLost(LostHold lostHold) {
		return LOST.compareAndSet(this, (LostHold) null, lostHold);
	}

	LostHold lost() {
		return this.lost;
	}

	/** @return the fencing token, or {@link LockBackend.Acquisition#NO_TOKEN} if none was issued (yet) */
	long issuedToken() {
		long token = this.token;
		return (token == LockBackend.Acquisition.TOKEN_ON_REQUEST) ? LockBackend.Acquisition.NO_TOKEN : token;
	}

	HoldInfo info() {
		return new HoldInfo(this.name, this.owner, this.threadName, this.count, issuedToken(), Instant.ofEpochMilli(this.sinceMillis), this.watchdog,
				this.lost != null, this.origin, this.renewals, this.logicalName, this.kind);
	}

}
