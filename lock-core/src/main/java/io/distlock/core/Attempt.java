package io.distlock.core;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import io.distlock.HoldKind;
import io.distlock.LockBackendException;
import io.distlock.LockLostException;
import io.distlock.LockUpgradeException;
import io.distlock.PermitsMismatchException;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.HoldTable.HoldKey;

/**
 * One acquisition of one lock by one owner, over one or more backend calls: what it asked, what the
 * backend answered, and the hold it records when it wins. The waiting between calls is the
 * caller's: a parked thread ({@link BlockingAcquisition}) or a chain of wake-ups ({@link AsyncAcquisition}).
 */
final class Attempt {

	/**
	 * The least an explicit lease must have left for a re-entry that keeps its deadline: below it the
	 * lease is over before the backend could confirm the re-entry (Redlock takes its clock drift
	 * allowance off a lease, so a few milliseconds confirm nothing there), and the hold counts as lost.
	 */
	private static final long MIN_LEASE_LEFT_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	/** Acquisitions answered only after their lease had run out, in a row, before giving up. */
	private static final int MAX_LATE_REPLIES = 3;

	/**
	 * What the attempts of one engine work with, built once by the engine; each attempt keeps these
	 * and nothing else of it.
	 * @param tickets numbers this client's attempts
	 * @param restartGraceSeen told how long the restart grace the backend refused an acquisition for lasts
	 */
	record Parts(LockBackend backend, LockEngineOptions options, HoldTable holds, LeaseRenewals renewals,
			Unlocking unlocking, ClosedState closed, AtomicLong tickets, Consumer<Duration> restartGraceSeen) {
	}

	private final LockBackend backend;

	private final LockEngineOptions options;

	private final HoldTable holds;

	private final LeaseRenewals renewals;

	/** Gives back a hold won while the registry closed. */
	private final Unlocking unlocking;

	private final ClosedState closed;

	private final Consumer<Duration> restartGraceSeen;

	/** The lock, the kind of hold and a semaphore's permits. */
	final LockId id;

	/** The lock's name, for messages. */
	final String name;

	final String owner;

	final Duration explicitLease;

	/** Whether the hold will belong to the calling thread; otherwise to a piece of work. */
	final boolean threadBound;

	final HoldKey key;

	final String ticket;

	/**
	 * How long the backend keeps this attempt's place in its queue, and a hold handed to it,
	 * without hearing from it: never longer than the lease, so that a frozen or vanished waiter
	 * holds others up no longer than a crashed holder would.
	 */
	final long placeNanos;

	/** lock(): an interrupt neither ends it nor fails a backend call; it is re-sent and the interrupt kept. */
	final boolean uninterruptible;

	/** Whether the backend may have queued this owner (it must then leave the queue on failure). */
	boolean queued;

	/** Whether a first acquisition was sent and no answer came: it may have taken the lock. */
	boolean unanswered;

	/** Whether an interrupt arrived during an uninterruptible acquisition, to be restored at its end. */
	boolean deferredInterrupt;

	/**
	 * When the last call that found the lock taken started: a hand-off to this attempt came after
	 * that call ran, so its lease started later.
	 */
	long refusedAt;

	/**
	 * The last token the backend had handed out at that call: a hand-off with a token up to this
	 * was made before it, so that call found the hand-off lapsed.
	 */
	long refusedToken;

	Attempt(Parts parts, LockId id, String owner, boolean threadBound, Duration explicitLease,
			boolean uninterruptible) {
		this.backend = parts.backend();
		this.options = parts.options();
		this.holds = parts.holds();
		this.renewals = parts.renewals();
		this.unlocking = parts.unlocking();
		this.closed = parts.closed();
		this.restartGraceSeen = parts.restartGraceSeen();
		this.id = id;
		this.name = id.name();
		this.owner = owner;
		this.threadBound = threadBound;
		this.explicitLease = explicitLease;
		this.key = this.holds.key(id.name(), id.kind(), owner);
		this.ticket = Long.toString(parts.tickets().incrementAndGet(), 36);
		this.placeNanos = Math.min(LockBackend.QUEUE_PLACE.toNanos(), LockArguments.saturatedNanos(lease()));
		this.uninterruptible = uninterruptible;
	}

	/** How long the backend may queue this attempt now: until its wait ends, at most its place time. */
	long queueFor(boolean forever, long deadline) {
		return forever ? this.placeNanos : Math.max(1, Math.min(this.placeNanos, deadline - System.nanoTime()));
	}

	boolean mayHaveBackendState() {
		return this.queued || this.unanswered;
	}

	/**
	 * Whether a hand-off that reached this thread at {@code now} can be taken up without asking the
	 * backend: its provisional lease started after {@link #refusedAt}, so until half of it has passed
	 * since then, at least half remains, enough for the extension to land. Never where the backend
	 * {@linkplain LockBackend#confirmsHandOffs() confirms hand-offs}: the take-up asks it.
	 */
	boolean handOffStillFresh(long now) {
		return !this.backend.confirmsHandOffs() && now - (this.refusedAt + this.placeNanos / 2) < 0;
	}

	/**
	 * One attempt: acquires or re-enters and records the hold.
	 * @param queueNanos how long the backend may queue this owner if the lock is taken; 0: not at all
	 * @return {@code null} if acquired, else how long to wait at most before trying again
	 */
	Duration tryOnce(long queueNanos) {
		if (this.closed.isClosed()) {
			throw this.closed.exception(this.name);
		}
		Hold hold = heldNow();
		if (hold == null && this.id.kind() == HoldKind.WRITE
				&& this.holds.holds(this.name, HoldKind.READ, this.owner)) {
			// Known here, before anything is sent or queued: the backend would refuse it too.
			throw new LockUpgradeException(this.name, Thread.currentThread().getName());
		}
		int held = (hold != null) ? hold.count() : 0;
		Duration lease = (hold != null) ? reentryLease(hold) : lease();
		boolean first = held == 0 && this.backend.queuesWaiters(this.id.kind());
		// Re-entry never waits, so only a first acquisition is queued.
		Duration queueFor = !first ? Duration.ZERO
				: (queueNanos == LockBackend.QUEUE_PLACE.toNanos()) ? LockBackend.QUEUE_PLACE : Duration.ofNanos(queueNanos);
		if (queueFor.toMillis() > 0) {
			this.queued = true;
		}
		long start;
		Acquisition result;
		int lateReplies = 0;
		while (true) {
			start = System.nanoTime();
			if (hold != null) {
				// Before it is sent: a re-entry racing this one must not ask for less.
				hold.askedAtLeastUntil(start + LockArguments.saturatedNanos(lease));
			}
			this.unanswered = first;
			result = call(held, lease, queueFor);
			this.unanswered = false;
			if (hold != null || result.status() != Acquisition.Status.ACQUIRED
					|| !this.backend.leasesExpire()
					|| System.nanoTime() - (start + result.validity().toNanos()) < 0) {
				break;
			}
			// The answer came only after the lease it gave had run out: this thread could not run for
			// that long (a paused JVM, a long GC), and meanwhile the hold may have expired and the
			// lock gone to another owner. Asking again takes the hold over (and extends it) if it is
			// still this owner's; otherwise the lock is found taken, or taken afresh.
			if (++lateReplies == MAX_LATE_REPLIES) {
				// A backend slower than the lease, every time: no answer can be trusted, and asking on
				// would keep the lock taken for nobody. What it took expires within its lease.
				throw new LockBackendException(this.name, "Lock '" + this.name + "': the backend ("
						+ this.backend.description() + ") answered " + MAX_LATE_REPLIES
						+ " acquisitions in a row only after the lease they gave (" + lease.toMillis()
						+ " ms) had run out; the lock was not taken. Use a longer lease.", null);
			}
		}
		switch (result.status()) {
			case ACQUIRED -> {
				if (hold == null) {
					record(result.token(), result.attemptId(), start + result.validity().toNanos());
					if (this.closed.isClosed()) {
						giveBackAfterClose();
					}
				}
				else {
					hold.count(held + 1);
					hold.confirmedAtLeastUntil(start + result.validity().toNanos());
				}
				return null;
			}
			case HELD_BY_OTHER -> {
				this.refusedAt = start;
				this.refusedToken = result.token();
				if (result.restartGrace()) {
					this.restartGraceSeen.accept(result.ttl());
				}
				return result.ttl();
			}
			case UPGRADE_REFUSED -> {
				// Refused before the backend queued it; a place an earlier call of this attempt took is left as usual.
				throw new LockUpgradeException(this.name, Thread.currentThread().getName());
			}
			case PERMITS_DIFFER -> {
				throw new PermitsMismatchException(this.name, this.id.permits(), (int) result.token(),
						this.backend.description());
			}
			default -> throw new LockLostException(this.holds.markLost(hold, "the backend no longer had the hold when its owner re-entered it"));
		}
	}

	/**
	 * The owner's hold of the lock, if it has one, for a re-entry; null for a first acquisition (also
	 * after a hold of the owner's ran out unreleased: that one's own unlock() still says so).
	 * @throws LockLostException if the owner's hold is known lost and not yet unlocked
	 */
	Hold heldNow() {
		Hold hold = this.holds.get(this.key);
		if (hold != null && hold.lost() != null) {
			throw new LockLostException(hold.lost());
		}
		return hold;
	}

	/**
	 * What a re-entry asks the backend for. The backends set a lease rather than lengthen it, so a
	 * re-entry never asks for less than the hold has been given (a nested call with a shorter lease
	 * must not shorten the whole hold), counting an extension still on its way (its reply may come
	 * after this re-entry's, but the backend applies it first). A watchdog hold asks for at least the
	 * watchdog's lease, as its renewals do; a hold with an explicit lease re-entered without one keeps
	 * its own deadline instead of taking the watchdog's lease, which a crashed holder would then block
	 * others for.
	 * @throws LockLostException if an explicit lease re-entered without one is (nearly) over
	 */
	private Duration reentryLease(Hold hold) {
		Duration asked = (this.explicitLease == null) ? (hold.watchdog ? this.options.watchdogTimeout() : null)
				: (hold.watchdog && this.explicitLease.compareTo(this.options.watchdogTimeout()) < 0)
						? this.options.watchdogTimeout() : this.explicitLease;
		long given = Math.max(0, hold.askedNanosLeft(System.nanoTime()));
		if (asked != null && LockArguments.saturatedNanos(asked) >= given) {
			return asked;
		}
		if (asked == null && given < MIN_LEASE_LEFT_NANOS) {
			throw new LockLostException(this.holds.markLost(hold,
					"its explicit lease ran out before its owner re-entered it"));
		}
		// Whole milliseconds, rounded up: backends count leases in them.
		return Duration.ofMillis(TimeUnit.NANOSECONDS.toMillis(given + 999_999));
	}

	private Acquisition call(int held, Duration lease, Duration queueFor) {
		while (true) {
			try {
				return this.backend
					.acquire(new AcquireRequest(this.name, this.owner, held, lease, queueFor, this.ticket, this.id.kind(),
							this.id.permits()));
			}
			catch (RuntimeException ex) {
				if (this.uninterruptible && Thread.interrupted()) {
					// The call may or may not have landed; sent again, it sets the same state.
					this.deferredInterrupt = true;
					continue;
				}
				throw BackendCalls.backendFailure(this.backend, this.name, "", ex);
			}
		}
	}

	/**
	 * A release handed the lock to this attempt while it waited, with a lease of at most
	 * {@link #placeNanos}; the watchdog extends it to the hold's own lease if it is still held a
	 * moment later.
	 */
	void granted(long token) {
		Hold hold = record(token, this.ticket, this.refusedAt + this.placeNanos);
		this.renewals.extendHandedOver(hold, lease());
	}

	/**
	 * The registry closed while the call that took the lock was on its way: its watchdog is gone, so
	 * the hold would be neither renewed nor reported lost. It is given back (or expires within its
	 * lease if the backend is gone too), and the caller fails as on a closed registry.
	 */
	private void giveBackAfterClose() {
		IllegalStateException closed = this.closed.exception(this.name);
		try {
			this.unlocking.release(this.id, this.owner, Duration.ZERO);
		}
		catch (RuntimeException ex) {
			closed.addSuppressed(ex);
		}
		throw closed;
	}

	private Hold record(long token, String attemptId, long confirmedUntilNanos) {
		Hold hold = new Hold(this.name, this.id.kind(), this.owner, token, attemptId, this.explicitLease == null,
				this.options.clock().millis(), this.threadBound ? Thread.currentThread() : null);
		// Confirmed before it is visible: the watchdog must never see a hold with no lease yet.
		hold.confirmedUntil(confirmedUntilNanos);
		this.holds.put(this.key, hold);
		return hold;
	}

	private Duration lease() {
		return (this.explicitLease != null) ? this.explicitLease : this.options.watchdogTimeout();
	}

}
