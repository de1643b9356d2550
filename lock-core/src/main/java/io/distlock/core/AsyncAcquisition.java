package io.distlock.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.LockBackendException;
import io.distlock.LockOrigin;
import io.distlock.WorkHold;

/**
 * A work-bound acquisition that waits without a thread: the blocking wait of {@link BlockingAcquisition}
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

	/** The first and the longest pause before a wait without end asks a backend that did not answer again. */
	private static final long FIRST_RETRY_NANOS = Duration.ofMillis(100).toNanos();

	private static final long MAX_RETRY_NANOS = Duration.ofSeconds(2).toNanos();

	/**
	 * What the waits without a thread of one engine work with, built once by the engine.
	 * @param calls where the steps run: the engine's pool for backend calls
	 * @param workHolds makes the hold a won acquisition completes with
	 */
	record Parts(LockBackend backend, ClosedState closed, ReleaseWaits waits, HoldTable holds, DeadlineGuard deadlines,
			ExecutorService calls, EngineWorkHold.Parts workHolds) {
	}

	private final LockBackend backend;

	private final ClosedState closed;

	private final ReleaseWaits waits;

	private final HoldTable holds;

	private final DeadlineGuard deadlines;

	private final EngineWorkHold.Parts workHolds;

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

	private final StepRunner steps;

	private Waiter waiter;

	private boolean look;

	private long sleep = Long.MAX_VALUE;

	private long poll = EngineTiming.UNSUBSCRIBED_FIRST_SLEEP_NANOS;

	/** Whether the wait is sleeping until {@link #sleepUntil} or a wake-up. */
	private boolean sleeping;

	private long sleepUntil;

	private ScheduledFuture<?> timer;

	/** When a wait without end asks a backend that did not answer again, or 0. */
	private long retryAt;

	private long retryNanos = FIRST_RETRY_NANOS;

	private boolean finished;

	AsyncAcquisition(Parts parts, Attempt attempt, Duration wait) {
		this.backend = parts.backend();
		this.closed = parts.closed();
		this.waits = parts.waits();
		this.holds = parts.holds();
		this.deadlines = parts.deadlines();
		this.workHolds = parts.workHolds();
		this.attempt = attempt;
		this.wait = wait;
		this.forever = wait == null;
		long now = System.nanoTime();
		long waitNanos = this.forever ? 0 : Math.max(0, LockArguments.saturatedNanos(wait));
		this.deadline = now + waitNanos;
		this.callDeadline = now + Math.max(waitNanos, EngineTiming.MIN_ATTEMPT_NANOS) + EngineTiming.DEADLINE_GRACE_NANOS;
		this.origin = LockOrigin.current();
		this.logicalName = LockOrigin.currentLockName();
		// A closed registry refuses the steps: its backend is gone, and what was queued there lapses by
		// itself. The future completes elsewhere: the refused ask may come under a room's guard or on a
		// subscriber's thread.
		this.steps = new StepRunner(parts.calls(), this.deadlines, this::runStep, () -> ForkJoinPool.commonPool()
			.execute(() -> this.result.completeExceptionally(this.closed.exception(this.attempt.name))));
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
		this.steps.ask();
	}

	/** One step and how it ends the acquisition, if it does: run by {@link #steps}. */
	private void runStep() {
		// A pool thread carries no interrupt of an earlier task into this one.
		Thread.interrupted();
		Outcome outcome;
		try {
			outcome = (this.origin != null || this.logicalName != null)
					? LockOrigin.during(this.logicalName, this.origin, this::step) : step();
		}
		catch (RuntimeException | Error ex) {
			// Thrown outside the step's own handling (an Error where it arms or disarms its
			// deadline, a timer refused by a closing registry): the wait still ends, cleaned up,
			// with the caller answered, and a hold the step had won already is given back.
			outcome = this.finished ? null : new Outcome(false, (ex instanceof RejectedExecutionException && this.closed.isClosed())
					? this.closed.exception(this.attempt.name) : ex);
			giveBackIfWon();
		}
		if (outcome != null) {
			try {
				settle(outcome);
			}
			catch (RuntimeException | Error ex) {
				// Whatever happens on the way out, the caller is answered.
				this.finished = true;
				this.result.completeExceptionally(ex);
			}
		}
	}

	/** How a step ended the acquisition. */
	private record Outcome(boolean acquired, Throwable failure) {

		static final Outcome ACQUIRED = new Outcome(true, null);

		static final Outcome NOT_ACQUIRED = new Outcome(false, null);

	}

	/**
	 * One step, its backend calls bounded by a deadline as the blocking wait's are.
	 * @return how the acquisition ended, or {@code null} if it waits on (or had ended before)
	 */
	private Outcome step() {
		if (this.finished) {
			return null;
		}
		if (this.result.isDone()) {
			// Cancelled by the caller while waiting.
			return Outcome.NOT_ACQUIRED;
		}
		if (this.closed.isClosed()) {
			return new Outcome(false, this.closed.exception(this.attempt.name));
		}
		long now = System.nanoTime();
		if (this.retryAt != 0) {
			if (this.retryAt - now > 0 && (this.waiter == null || !this.waiter.woken())) {
				schedule(this.retryAt - now);
				return null;
			}
			this.retryAt = 0;
		}
		// Every step's calls are bounded, so that none holds a pool thread for a client's whole
		// command timeout: a timed wait's by its wait, as the blocking wait's are (its first call gets
		// at least as long as the blocking one would, however late the step runs); a wait without end
		// by a second or its place time.
		long bound = this.forever ? Math.max(this.attempt.placeNanos, EngineTiming.MIN_ATTEMPT_NANOS)
				: Math.max(this.callDeadline - now, (this.waiter == null) ? EngineTiming.MIN_ATTEMPT_NANOS : 1);
		bound += this.forever ? EngineTiming.DEADLINE_GRACE_NANOS : 0;
		DeadlineGuard.Armed guard;
		try {
			guard = this.deadlines.arm(bound);
		}
		catch (RejectedExecutionException closed) {
			return new Outcome(false, this.closed.exception(this.attempt.name));
		}
		try {
			return (this.waiter == null) ? begin() : proceed();
		}
		catch (Error ex) {
			// Never taken for a slow backend or a closing registry: it reaches the caller as itself.
			return new Outcome(false, ex);
		}
		catch (RuntimeException ex) {
			if (this.closed.isClosed()) {
				IllegalStateException closed = this.closed.exception(this.attempt.name);
				closed.initCause(ex);
				return new Outcome(false, closed);
			}
			if (!guard.fired()) {
				return new Outcome(false, ex);
			}
			if (this.forever) {
				// A wait without end outlasts a slow backend, as a parked lock() does: it asks again later,
				// keeping its place in the room (the backend keeps the rest for its place time).
				log.debug("Lock '{}': the backend did not answer within {} ms; asking again", this.attempt.name,
						Duration.ofNanos(bound).toMillis());
				this.look = true;
				this.retryAt = System.nanoTime() + this.retryNanos;
				this.retryNanos = Math.min(this.retryNanos * 2, MAX_RETRY_NANOS);
				schedule(this.retryAt - System.nanoTime());
				return null;
			}
			return new Outcome(false, new LockBackendException(this.attempt.name, "Lock '" + this.attempt.name
					+ "': the backend (" + this.backend.description() + ") did not answer within the wait of "
					+ this.wait.toMillis() + " ms; the lock was not acquired", ex));
		}
		finally {
			guard.disarm();
		}
	}

	/** The first step: as the blocking acquisition, one call unless this client's owners already queue. */
	private Outcome begin() {
		boolean mayWait = this.forever || this.deadline - System.nanoTime() > 0;
		if (!mayWait || !this.waits.hasWaiters(this.attempt.id.room())) {
			if (this.attempt.tryOnce(mayWait ? this.attempt.queueFor(this.forever, this.deadline) : 0) == null) {
				return Outcome.ACQUIRED;
			}
			if (!mayWait) {
				return Outcome.NOT_ACQUIRED;
			}
		}
		this.waiter = this.waits.enter(this.attempt.id, this.attempt.owner, this.attempt.ticket, this::wake);
		// Queued on the backend before joining the room: a hand-off announced meanwhile was missed, so look.
		this.look = this.attempt.queued;
		return proceed();
	}

	/** The blocking wait's loop, where each wait for a turn returns here when something happens. */
	private Outcome proceed() {
		while (true) {
			long now = System.nanoTime();
			long left = this.forever ? Long.MAX_VALUE : this.deadline - now;
			if (left <= 0) {
				return Outcome.NOT_ACQUIRED;
			}
			if (!this.look) {
				if (!this.sleeping) {
					long nap = Math.min(left, this.sleep);
					this.sleeping = true;
					this.sleepUntil = (nap == Long.MAX_VALUE) ? Long.MAX_VALUE : now + nap;
				}
				if (!this.waiter.woken() && (this.sleepUntil == Long.MAX_VALUE || this.sleepUntil - now > 0)) {
					sleepUntilWoken(now);
					return null;
				}
				this.sleeping = false;
			}
			cancelTimer();
			ReleaseWaits.Turn turn = this.waiter.turnNow();
			if (turn == ReleaseWaits.Turn.GRANTED) {
				long token = this.waiter.grantedToken();
				this.waiter.forgetGrant();
				if (this.closed.isClosed()) {
					// Given back by the clean-up: a closed registry hands out nothing.
					throw this.closed.exception(this.attempt.name);
				}
				long at = System.nanoTime();
				if (!this.forever && this.deadline - at <= 0) {
					return Outcome.NOT_ACQUIRED;
				}
				if (token <= this.attempt.refusedToken) {
					// Made before this attempt's last call, which found the lock someone else's.
					this.look = false;
					continue;
				}
				if (this.attempt.handOffStillFresh(at)) {
					this.attempt.granted(token);
					return Outcome.ACQUIRED;
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
				return Outcome.ACQUIRED;
			}
			long nextSleep = ttl.isNegative() || ttl.isZero() ? EngineTiming.RETRY_NANOS : LockArguments.saturatedNanos(ttl);
			nextSleep = Math.min(nextSleep, this.attempt.placeNanos / 2);
			if (!this.waiter.subscribed()) {
				nextSleep = Math.min(nextSleep, this.poll);
				this.poll = Math.min(this.poll * 2, EngineTiming.UNSUBSCRIBED_MAX_SLEEP_NANOS);
			}
			this.sleep = nextSleep;
		}
	}

	private void sleepUntilWoken(long now) {
		if (this.sleepUntil != Long.MAX_VALUE) {
			schedule(this.sleepUntil - now);
		}
		else {
			cancelTimer();
		}
	}

	/** Wakes the acquisition after a while (the timer thread only hands the step on). */
	private void schedule(long nanos) {
		cancelTimer();
		this.timer = this.deadlines.schedule(this::wake, Math.max(1, nanos));
	}

	private void cancelTimer() {
		if (this.timer != null) {
			this.timer.cancel(false);
			this.timer = null;
		}
	}

	/**
	 * Ends the acquisition as its last step found, after that step's deadline was disarmed (a
	 * clean-up must not be cut off by it, nor the caller's dependent stages, which run here).
	 */
	private void settle(Outcome outcome) {
		if (outcome.acquired()) {
			leaveRoom();
			this.finished = true;
			EngineWorkHold hold = this.workHolds.hold(this.attempt.id, this.attempt.owner);
			if (!this.result.complete(Optional.of(hold))) {
				// The caller cancelled while the lock was being won: nobody will use or release it.
				hold.releaseAsync().whenComplete((ignored, error) -> {
					if (error != null) {
						log.debug("Could not give back lock '{}' won after its acquisition was cancelled",
								this.attempt.name, error);
					}
				});
			}
			return;
		}
		cleanUp(outcome.failure());
		if (outcome.failure() != null) {
			this.result.completeExceptionally(outcome.failure());
		}
		else {
			this.result.complete(Optional.empty());
		}
	}

	/**
	 * As the blocking acquisition's clean-up: out of the room, then out of the backend's queue.
	 * @param failure what the acquisition ends with, or null: what the clean-up runs into is added to
	 * it, never thrown in its place
	 */
	private void cleanUp(Throwable failure) {
		this.finished = true;
		CleanUp.after(failure, this::leaveRoom);
		if (this.attempt.mayHaveBackendState()) {
			CleanUp.after(failure, this::leaveQueue);
		}
	}

	/**
	 * Also passes on a hold handed to this attempt that it did not take up. Bounded apart from the
	 * acquisition's deadline, which may have passed; a place left behind lapses by itself.
	 */
	private void leaveQueue() {
		DeadlineGuard.Armed guard = null;
		try {
			guard = this.deadlines.arm(EngineTiming.RELEASE_MIN_WAIT.toNanos());
		}
		catch (RejectedExecutionException closed) {
			// Closing: the leave is still sent, unbounded as the close's own are.
		}
		try {
			BackendCalls.leaveQueue(this.backend, this.attempt.id, this.attempt.owner, this.attempt.ticket, true);
		}
		finally {
			if (guard != null) {
				guard.disarm();
			}
		}
	}

	/** After a step failed on its way out: a hold it had won meanwhile is nobody's to release but ours. */
	private void giveBackIfWon() {
		if (this.holds.count(this.attempt.name, this.attempt.id.kind(), this.attempt.owner) > 0) {
			this.workHolds.hold(this.attempt.id, this.attempt.owner).releaseAsync()
				.whenComplete((ignored, error) -> {
					if (error != null) {
						log.debug("Could not give back lock '{}' won by a step that then failed", this.attempt.name, error);
					}
				});
		}
	}

	private void leaveRoom() {
		cancelTimer();
		if (this.waiter != null) {
			this.waits.leave(this.waiter);
			this.waiter = null;
		}
	}

}
