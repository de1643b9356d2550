package io.distlock.core;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.distlock.HoldInfo;
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

	/** The fencing token; {@link LockBackend.Acquisition#TOKEN_ON_REQUEST} until the owner first asks. */
	volatile long token;

	/** The id of the attempt that took this hold, which names it to the backend on release; may be null. */
	final String attemptId;

	final boolean watchdog;

	final Instant since;

	private final WeakReference<Thread> thread;

	private final String threadName;

	private final String origin;

	private final String logicalName;

	private final AtomicLong renewals = new AtomicLong();

	private volatile int count = 1;

	/** Until when (System.nanoTime) the backend is known to keep the hold without renewal. */
	private volatile long confirmedUntilNanos;

	/**
	 * What ends the hold first: its owner's last release (the watchdog then leaves it alone) or the
	 * watchdog's finding that its explicit lease ran out (the owner then learns it was lost).
	 */
	private final AtomicReference<Ending> ending = new AtomicReference<>();

	/** The two ways a hold ends while its owner may still act on it. */
	enum Ending {
		/** The owner's last release is in flight. */
		RELEASING,
		/** Its explicit lease ran out before its owner released it. */
		EXPIRED
	}

	private final AtomicReference<LostHold> lost = new AtomicReference<>();

	Hold(String name, String owner, long token, String attemptId, boolean watchdog, Instant since, Thread thread) {
		this.name = name;
		this.owner = owner;
		this.token = token;
		this.attemptId = attemptId;
		this.watchdog = watchdog;
		this.since = since;
		// No thread for a hold owned by work: it lives until released, whichever thread ends the work.
		this.thread = (thread != null) ? new WeakReference<>(thread) : null;
		this.threadName = (thread != null) ? thread.getName() : "(work)";
		this.origin = LockOrigin.current();
		this.logicalName = LockOrigin.currentLockName();
	}

	String origin() {
		return this.origin;
	}

	String threadName() {
		return this.threadName;
	}

	void renewed() {
		this.renewals.incrementAndGet();
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
		Thread owningThread = this.thread.get();
		return owningThread != null && owningThread.isAlive();
	}

	void confirmedUntil(long nanos) {
		this.confirmedUntilNanos = nanos;
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

	boolean releasing() {
		return this.ending.get() == Ending.RELEASING;
	}

	/**
	 * @param how how the hold ends
	 * @return whether it ends so; false if it already ended the other way
	 */
	boolean end(Ending how) {
		return this.ending.compareAndSet(null, how) || this.ending.get() == how;
	}

	/**
	 * @param lostHold the loss
	 * @return true if this call marked it lost, false if it already was
	 */
	boolean markLost(LostHold lostHold) {
		return this.lost.compareAndSet(null, lostHold);
	}

	LostHold lost() {
		return this.lost.get();
	}

	/** @return the fencing token, or {@link LockBackend.Acquisition#NO_TOKEN} if none was issued (yet) */
	long issuedToken() {
		long token = this.token;
		return (token == LockBackend.Acquisition.TOKEN_ON_REQUEST) ? LockBackend.Acquisition.NO_TOKEN : token;
	}

	HoldInfo info() {
		return new HoldInfo(this.name, this.owner, this.threadName, this.count, issuedToken(), this.since, this.watchdog,
				this.lost.get() != null, this.origin, this.renewals.get(), this.logicalName);
	}

}
