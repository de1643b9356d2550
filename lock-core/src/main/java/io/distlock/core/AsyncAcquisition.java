package io.distlock.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.LockBackendException;
import io.distlock.LockOrigin;
import io.distlock.WorkHold;

/**
 * A work-bound acquisition that waits without a thread: the blocking wait of {@link LockEngine}
 * turned into steps. A step runs on the engine's call threads whenever something would have woken
 * a waiting thread (a hand-off, its turn to try, a release message, its own timer, a cancel), makes
 * the backend call a waiting thread would make, and either completes the future or leaves the
 * next wake-up to its room and its timer. A thread is taken only for the length of one backend
 * call, so a thousand waiting subscriptions take none while they wait.
 *
 * <p>Steps never overlap: wake-ups that arrive while one runs make it run once more, never twice at
 * once (the work-in-progress counter of reactive operators), so the fields below need no lock.
 */
final class AsyncAcquisition {

	private static final Logger log = LoggerFactory.getLogger(AsyncAcquisition.class);

	private final LockEngine engine;

	private final Attempt attempt;

	private final boolean forever;

	/** When the wait ends ({@code System.nanoTime()}), unless {@link #forever}. */
	private final long deadline;

	/** When a backend call of a timed wait is cut off, like the blocking wait's deadline guard. */
	private final long callDeadline;

	private final Duration wait;

	/** The caller's lock origin, for the hold's diagnostics: steps run on other threads. */
	private final String origin;

	private final String logicalName;

	private final CompletableFuture<Optional<WorkHold>> result = new CompletableFuture<>();

	private final AtomicInteger wakeUps = new AtomicInteger();

	private ReleaseWaits.Waiter waiter;

	private boolean look;

	private long sleep = Long.MAX_VALUE;

	private long poll = LockEngine.UNSUBSCRIBED_FIRST_SLEEP_NANOS;

	/** Whether the wait is sleeping until {@link #sleepUntil} or a wake-up. */
	private boolean sleeping;

	private long sleepUntil;

	private ScheduledFuture<?> timer;

	private boolean finished;

	AsyncAcquisition(LockEngine engine, Attempt attempt, Duration wait) {
		this.engine = engine;
		this.attempt = attempt;
		this.wait = wait;
		this.forever = wait == null;
		long now = System.nanoTime();
		long waitNanos = this.forever ? 0 : Math.max(0, LockEngine.saturatedNanos(wait));
		this.deadline = now + waitNanos;
		this.callDeadline = now + Math.max(waitNanos, LockEngine.MIN_ATTEMPT_NANOS) + LockEngine.DEADLINE_GRACE_NANOS;
		this.origin = LockOrigin.current();
		this.logicalName = LockOrigin.currentLockName();
	}

	/**
	 * Starts the acquisition on the engine's call threads, never on the caller's (an event loop).
	 * Cancelling the returned future ends the wait: the attempt leaves the backend's queue, and a
	 * hold it won meanwhile is released.
	 */
	CompletableFuture<Optional<WorkHold>> start() {
		// A cancel (or any completion by the caller) wakes the steps, which then clean up.
		this.result.whenComplete((hold, error) -> wake());
		wake();
		return this.result;
	}

	/** Asks for a step; never runs one on the calling thread and never blocks. */
	private void wake() {
		if (this.wakeUps.getAndIncrement() != 0) {
			return;
		}
		try {
			this.engine.calls.execute(this::drain);
		}
		catch (RejectedExecutionException closed) {
			// The registry closed: its backend is gone, and what was queued there lapses by itself.
			this.result.completeExceptionally(this.engine.closedException(this.attempt.name));
		}
	}

	private void drain() {
		int missed = 1;
		do {
			if (this.origin != null || this.logicalName != null) {
				LockOrigin.during(this.logicalName, this.origin, () -> {
					step();
					return null;
				});
			}
			else {
				step();
			}
			missed = this.wakeUps.addAndGet(-missed);
		}
		while (missed != 0);
	}

	private void step() {
		if (this.finished) {
			return;
		}
		DeadlineGuard.Armed guard = null;
		try {
			if (this.result.isDone()) {
				// Cancelled by the caller while waiting.
				finish();
				return;
			}
			if (!this.forever) {
				guard = this.engine.deadlines.arm(Math.max(1, this.callDeadline - System.nanoTime()));
			}
			if (this.waiter == null) {
				begin();
			}
			else {
				proceed();
			}
		}
		catch (RuntimeException | Error ex) {
			fail((guard != null && guard.fired()) ? new LockBackendException(this.attempt.name,
					"Lock '" + this.attempt.name + "': the backend (" + this.engine.backend.description()
							+ ") did not answer within the wait of " + this.wait.toMillis() + " ms; the lock was not acquired",
					ex) : ex);
		}
		finally {
			if (guard != null) {
				guard.disarm();
			}
		}
	}

	/** The first step: as the blocking acquisition, one call unless this client's owners already queue. */
	private void begin() {
		if (this.engine.closed) {
			throw this.engine.closedException(this.attempt.name);
		}
		boolean mayWait = this.forever || this.deadline - System.nanoTime() > 0;
		if (!mayWait || !this.engine.waits.hasWaiters(this.attempt.name)) {
			if (this.attempt.tryOnce(mayWait ? this.attempt.queueFor(this.forever, this.deadline) : 0) == null) {
				succeed();
				return;
			}
			if (!mayWait) {
				finish();
				return;
			}
		}
		this.waiter = this.engine.waits.enter(this.attempt.name, this.attempt.owner, this.attempt.ticket, this::wake);
		// Queued on the backend before joining the room: a hand-off announced meanwhile was missed, so look.
		this.look = this.attempt.queued;
		proceed();
	}

	/** The blocking wait's loop, where each wait for a turn returns here when something happens. */
	private void proceed() {
		while (true) {
			long now = System.nanoTime();
			long left = this.forever ? Long.MAX_VALUE : this.deadline - now;
			if (left <= 0) {
				finish();
				return;
			}
			if (!this.look) {
				if (!this.sleeping) {
					long nap = Math.min(left, this.sleep);
					this.sleeping = true;
					this.sleepUntil = (nap == Long.MAX_VALUE) ? Long.MAX_VALUE : now + nap;
				}
				if (!this.waiter.woken() && (this.sleepUntil == Long.MAX_VALUE || this.sleepUntil - now > 0)) {
					sleepUntilWoken(now);
					return;
				}
				this.sleeping = false;
			}
			cancelTimer();
			ReleaseWaits.Turn turn = this.waiter.turnNow();
			if (turn == ReleaseWaits.Turn.GRANTED) {
				long token = this.waiter.grantedToken();
				this.waiter.forgetGrant();
				if (this.engine.closed) {
					// Given back by the clean-up: a closed registry hands out nothing.
					throw this.engine.closedException(this.attempt.name);
				}
				long at = System.nanoTime();
				if (!this.forever && this.deadline - at <= 0) {
					finish();
					return;
				}
				if (token <= this.attempt.refusedToken) {
					// Made before this attempt's last call, which found the lock someone else's.
					this.look = false;
					continue;
				}
				if (this.attempt.handOffStillFresh(at)) {
					this.attempt.granted(token);
					succeed();
					return;
				}
				// The steps could not run for a while: ask the backend, which extends the hold if still ours.
				this.look = true;
				continue;
			}
			if (turn == ReleaseWaits.Turn.WAIT && !this.look && !this.attempt.queued) {
				// Not the head: only a turn, a hand-off (or the deadline) ends this wait.
				this.sleep = Long.MAX_VALUE;
				continue;
			}
			this.look = false;
			Duration ttl = this.attempt.tryOnce(this.attempt.queueFor(this.forever, this.deadline));
			if (ttl == null) {
				succeed();
				return;
			}
			long nextSleep = ttl.isNegative() || ttl.isZero() ? LockEngine.RETRY_NANOS : LockEngine.saturatedNanos(ttl);
			nextSleep = Math.min(nextSleep, this.attempt.placeNanos / 2);
			if (!this.waiter.subscribed()) {
				nextSleep = Math.min(nextSleep, this.poll);
				this.poll = Math.min(this.poll * 2, LockEngine.UNSUBSCRIBED_MAX_SLEEP_NANOS);
			}
			this.sleep = nextSleep;
		}
	}

	private void sleepUntilWoken(long now) {
		cancelTimer();
		if (this.sleepUntil != Long.MAX_VALUE) {
			this.timer = this.engine.deadlines.schedule(this::wake, Math.max(1, this.sleepUntil - now));
		}
	}

	private void cancelTimer() {
		if (this.timer != null) {
			this.timer.cancel(false);
			this.timer = null;
		}
	}

	private void succeed() {
		leaveRoom();
		this.finished = true;
		EngineWorkHold hold = new EngineWorkHold(this.engine, this.attempt.name, this.attempt.owner);
		if (!this.result.complete(Optional.of(hold))) {
			// The caller cancelled while the lock was being won: nobody will use or release it.
			try {
				hold.release();
			}
			catch (RuntimeException ex) {
				log.debug("Could not give back lock '{}' won after its acquisition was cancelled", this.attempt.name, ex);
			}
		}
	}

	private void finish() {
		cleanUp();
		this.result.complete(Optional.empty());
	}

	private void fail(Throwable ex) {
		cleanUp();
		this.result.completeExceptionally(ex);
	}

	/** As the blocking acquisition's clean-up: out of the room, then out of the backend's queue. */
	private void cleanUp() {
		if (this.finished) {
			return;
		}
		this.finished = true;
		leaveRoom();
		if (this.attempt.mayHaveBackendState()) {
			// Also passes on a hold handed to this attempt that it did not take up.
			this.engine.leaveQueue(this.attempt.name, this.attempt.owner, this.attempt.ticket, true);
		}
	}

	private void leaveRoom() {
		cancelTimer();
		if (this.waiter != null) {
			this.engine.waits.leave(this.waiter);
			this.waiter = null;
		}
	}

}
