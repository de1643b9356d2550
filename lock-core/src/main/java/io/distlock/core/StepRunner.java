package io.distlock.core;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the steps of one acquisition that waits without a thread: on the engine's pool, one at a
 * time, never on the thread that asks for one (an event loop, the timer, a room's wake-up). Asks that
 * arrive while a step runs add one more run rather than a second runner.
 */
final class StepRunner {

	private static final Logger log = LoggerFactory.getLogger(StepRunner.class);

	private static final String STRANDED = "A step of a lock wait without a thread could not be handed to the registry's"
			+ " pool; the wait goes on at its next wake-up or cancel";

	/** Asks not yet answered by a run; the ask that raises it from 0 hands a run on. */
	private final AtomicInteger asks = new AtomicInteger();

	/** A run neither the asking thread nor the timer could hand on; the next ask hands it on again. */
	private final AtomicReference<Run> stranded = new AtomicReference<>();

	private final Executor pool;

	private final DeadlineGuard timer;

	private final Runnable step;

	private final Runnable refused;

	/**
	 * @param pool where the steps run
	 * @param timer hands a run on where the asking thread could not
	 * @param step one step
	 * @param refused run instead when the pool refuses the run (it is shut down)
	 */
	StepRunner(Executor pool, DeadlineGuard timer, Runnable step, Runnable refused) {
		this.pool = pool;
		this.timer = timer;
		this.step = step;
		this.refused = refused;
	}

	/**
	 * Asks for a step; never runs one on the calling thread, and never throws: the asker may be a room
	 * waking its waiters one after the other, or a cancel.
	 */
	void ask() {
		if (this.asks.getAndIncrement() != 0) {
			Run again = this.stranded.getAndSet(null);
			if (again != null && !again.taken.get()) {
				handOnOrStrand(again);
			}
			return;
		}
		handOnOrStrand(new Run());
	}

	private void handOnOrStrand(Run run) {
		try {
			handOn(run);
		}
		catch (RuntimeException | Error ex) {
			// Raised where this thread would have parked: a fork-join pool (JDK 21+) may park a thread
			// that submits, and BlockHound throws there on an event loop. Else the count stayed raised
			// with no run on its way, and every later ask, a cancel's included, would be lost. The run
			// is stranded at once, for the next ask, and the timer's thread takes it from there unless
			// an ask was first; a timer that drops the task (closing) still leaves it for the next ask.
			strand(run);
			try {
				this.timer.schedule(() -> {
					if (this.stranded.compareAndSet(run, null)) {
						handOnFromTimer(run);
					}
				}, 1);
			}
			catch (RuntimeException | Error timerFailed) {
				ex.addSuppressed(timerFailed);
				log.warn(STRANDED, ex);
			}
		}
	}

	private void handOn(Run run) {
		try {
			this.pool.execute(run);
		}
		catch (RejectedExecutionException closed) {
			this.refused.run();
		}
	}

	private void handOnFromTimer(Run run) {
		if (run.taken.get()) {
			// The pool had queued it after all, before it threw.
			return;
		}
		try {
			handOn(run);
		}
		catch (RuntimeException | Error ex) {
			strand(run);
			log.warn(STRANDED, ex);
		}
	}

	/**
	 * Leaves {@code run} for the next ask. At most one run that has not run is about at a time: a run
	 * stranded late, which ran meanwhile, never displaces it.
	 */
	private void strand(Run run) {
		this.stranded.getAndUpdate(current -> (current != null && current != run && !current.taken.get()) ? current : run);
	}

	/**
	 * One hand-off's run, which runs once however often it was handed on: a pool may queue a task
	 * and then throw (a fork-join pool that fails to start a worker), and the timer hands the same
	 * run on again.
	 */
	private final class Run implements Runnable {

		private final AtomicBoolean taken = new AtomicBoolean();

		@Override
		public void run() {
			if (!this.taken.compareAndSet(false, true)) {
				return;
			}
			int missed = 1;
			do {
				try {
					StepRunner.this.step.run();
				}
				catch (RuntimeException | Error ex) {
					// Counted down all the same, or no ask after it would ever run a step again.
					log.warn("A step of a lock wait without a thread failed", ex);
				}
				missed = StepRunner.this.asks.addAndGet(-missed);
			}
			while (missed != 0);
		}

	}

}
