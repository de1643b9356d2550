package io.distlock.core;

import java.time.Duration;

import io.distlock.HoldKind;
import io.distlock.LockBackendException;

/**
 * Acquisitions that wait on the calling thread, parked in the lock's room until a hand-off, their
 * turn, a release message or their deadline wakes them; the blocking face of the engine, beside
 * {@link AsyncAcquisition}, which runs the same loop without a thread.
 */
final class BlockingAcquisition {

	private final LockBackend backend;

	private final LockEngineOptions options;

	private final ClosedState closed;

	private final ReleaseWaits waits;

	private final DeadlineGuard deadlines;

	private final Attempt.Parts attempts;

	BlockingAcquisition(LockBackend backend, LockEngineOptions options, ClosedState closed, ReleaseWaits waits,
			DeadlineGuard deadlines, Attempt.Parts attempts) {
		this.backend = backend;
		this.options = options;
		this.closed = closed;
		this.waits = waits;
		this.deadlines = deadlines;
		this.attempts = attempts;
	}

	/**
	 * Acquires, waiting at most {@code wait} ({@code null}: as long as it takes). A timed acquisition
	 * never blocks on an unresponsive backend much beyond its wait: it fails with
	 * {@link LockBackendException} instead.
	 * @param threadBound whether the hold belongs to the calling thread (and ends with it) rather
	 * than to a piece of work that another thread may end
	 */
	boolean acquire(LockId id, String owner, boolean threadBound, Duration requestedLease, Duration wait,
			boolean interruptible) throws InterruptedException {
		String name = id.name();
		// With the watchdog off, a lock taken without a lease gets the configured one and is never renewed.
		Duration lease = (requestedLease != null) ? requestedLease : this.options.defaultLease();
		// lock() and tryLock() do not answer interrupts (java.util.concurrent.locks.Lock): a pending one
		// must not fail them, and is kept for the caller.
		if (this.closed.isClosed()) {
			throw this.closed.exception(name);
		}
		boolean pendingInterrupt = !interruptible && Thread.interrupted();
		try {
			if (wait == null) {
				return acquireWithin(id, owner, threadBound, lease, null, interruptible);
			}
			return acquireTimed(id, owner, threadBound, lease, wait, interruptible);
		}
		catch (LockBackendException ex) {
			if (interruptible && Thread.interrupted()) {
				// The caller's interrupt cut a backend call short (a deadline's is cleared by now).
				InterruptedException interrupted = new InterruptedException("Interrupted while acquiring lock '" + name + "'");
				interrupted.initCause(ex);
				throw interrupted;
			}
			throw ex;
		}
		finally {
			if (pendingInterrupt) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private boolean acquireTimed(LockId id, String owner, boolean threadBound, Duration lease, Duration wait,
			boolean interruptible) throws InterruptedException {
		String name = id.name();
		long waitNanos = Math.max(0, LockArguments.saturatedNanos(wait));
		DeadlineGuard.Armed deadline = this.deadlines
			.arm(Math.max(waitNanos, EngineTiming.MIN_ATTEMPT_NANOS) + EngineTiming.DEADLINE_GRACE_NANOS);
		Throwable failure = null;
		try {
			return acquireWithin(id, owner, threadBound, lease, wait, interruptible);
		}
		catch (InterruptedException | RuntimeException ex) {
			if (deadline.fired()) {
				LockBackendException unanswered = new LockBackendException(name, "Lock '" + name + "': the backend ("
						+ this.backend.description() + ") did not answer within the wait of " + wait.toMillis()
						+ " ms; the lock was not acquired", ex);
				failure = unanswered;
				throw unanswered;
			}
			failure = ex;
			throw ex;
		}
		catch (Error ex) {
			failure = ex;
			throw ex;
		}
		finally {
			CleanUp.after(failure, deadline::disarm);
		}
	}

	private boolean acquireWithin(LockId id, String owner, boolean threadBound, Duration lease, Duration wait,
			boolean interruptible) throws InterruptedException {
		String name = id.name();
		if (interruptible && Thread.interrupted()) {
			throw new InterruptedException("Interrupted before acquiring lock '" + name + "'");
		}
		boolean forever = wait == null;
		boolean mayWait = forever || (!wait.isNegative() && !wait.isZero());
		long deadline = forever ? 0 : System.nanoTime() + LockArguments.saturatedNanos(wait);
		Attempt attempt = new Attempt(this.attempts, id, owner, threadBound, lease, forever && !interruptible);
		boolean acquired = false;
		Throwable failure = null;
		try {
			// Threads of this client already queued for the lock go first; only re-entry may pass them
			// (and the re-entry of a hold that was lost learns of it at once), and so does an owner with
			// another hold of the lock's family: a reader re-entering, a writer downgrading, or a reader
			// asking to upgrade (refused at once), as a local writer may be waiting for that very owner.
			if (!mayWait || !this.waits.hasWaiters(id.room()) || attempt.heldNow() != null
					|| (id.kind() != HoldKind.EXCLUSIVE && this.attempts.holds().holdsAny(name, id.kind().family(), owner))) {
				if (attempt.tryOnce(mayWait ? attempt.queueFor(forever, deadline) : 0) == null) {
					acquired = true;
					return true;
				}
				if (!mayWait) {
					return false;
				}
			}
			acquired = awaitAndAcquire(attempt, forever, deadline, interruptible);
			return acquired;
		}
		catch (Throwable ex) {
			failure = ex;
			throw ex;
		}
		finally {
			if (!acquired && attempt.mayHaveBackendState()) {
				// Also passes on a hold handed to this attempt that it did not take up.
				CleanUp.after(failure, () -> BackendCalls.leaveQueue(this.backend, id, owner, attempt.ticket, true));
			}
			if (attempt.deferredInterrupt) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private boolean awaitAndAcquire(Attempt attempt, boolean forever, long deadline, boolean interruptible)
			throws InterruptedException {
		boolean interrupted = false;
		Throwable failure = null;
		Waiter waiter = this.waits.enter(attempt.id, attempt.owner, attempt.ticket);
		try {
			// Queued on the backend before joining the room: a hand-off announced meanwhile was missed, so look.
			boolean look = attempt.queued;
			long sleep = Long.MAX_VALUE;
			long poll = EngineTiming.UNSUBSCRIBED_FIRST_SLEEP_NANOS;
			while (true) {
				long left = forever ? Long.MAX_VALUE : deadline - System.nanoTime();
				if (left <= 0) {
					return false;
				}
				ReleaseWaits.Turn turn;
				try {
					turn = waiter.awaitTurn(look ? 0 : Math.min(left, sleep));
				}
				catch (InterruptedException ex) {
					if (interruptible) {
						throw ex;
					}
					interrupted = true;
					continue;
				}
				if (turn == ReleaseWaits.Turn.GRANTED) {
					long token = waiter.grantedToken();
					waiter.forgetGrant();
					long now = System.nanoTime();
					if (this.closed.isClosed()) {
						// Given back by the caller's clean-up: a closed registry hands out nothing.
						throw this.closed.exception(attempt.name);
					}
					if (!forever && deadline - now <= 0) {
						// Too late for the caller, who may have moved on: given back by the clean-up.
						return false;
					}
					if (token <= attempt.refusedToken) {
						// Made before this attempt's last call, which found the lock someone else's: it
						// lapsed while this thread could not run, and that call queued it again.
						continue;
					}
					if (attempt.handOffStillFresh(now)) {
						attempt.granted(token);
						return true;
					}
					// This thread could not run for a while (a paused JVM, a long GC): the provisional lease
					// may have run out and the lock gone to another. Ask the backend, which also extends
					// the hold to its full lease if it is still this attempt's.
					look = true;
					continue;
				}
				if (turn == ReleaseWaits.Turn.WAIT && !look && !attempt.queued) {
					// Not the head: only a turn, a hand-off (or the deadline) ends this wait, never the holder's TTL.
					sleep = Long.MAX_VALUE;
					continue;
				}
				// The head, or queued on the backend although not the head here (threads of this client
				// that arrived together): it calls again to keep its place and to learn of a hand-off
				// whose message was lost.
				look = false;
				Duration ttl = attempt.tryOnce(attempt.queueFor(forever, deadline));
				if (ttl == null) {
					return true;
				}
				// A release message or hand-off wakes us; the holder's TTL bounds the sleep in case it is
				// lost, and a queued owner calls again before its place lapses.
				sleep = ttl.isNegative() || ttl.isZero() ? EngineTiming.RETRY_NANOS : LockArguments.saturatedNanos(ttl);
				sleep = Math.min(sleep, attempt.placeNanos / 2);
				if (!waiter.subscribed()) {
					// No release messages (yet): poll, backing off from 5 ms to 100 ms.
					sleep = Math.min(sleep, poll);
					poll = Math.min(poll * 2, EngineTiming.UNSUBSCRIBED_MAX_SLEEP_NANOS);
				}
			}
		}
		catch (Throwable ex) {
			failure = ex;
			throw ex;
		}
		finally {
			CleanUp.after(failure, () -> this.waits.leave(waiter));
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

}
