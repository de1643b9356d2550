package io.distlock.core;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the steps of one acquisition that waits without a thread: on the engine's pool, one at a
 * time, never on the thread that asks for one (an event loop, the timer, a room's wake-up). Asks that
 * arrive while a step runs add one more run rather than a second runner.
 */
final class StepRunner {

	private static final Logger log = LoggerFactory.getLogger(StepRunner.class);

	/** Asks not yet answered by a run; the ask that raises it from 0 hands a run on. */
	private final AtomicInteger asks = new AtomicInteger();

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
	 * Asks for a step; never runs one on the calling thread. Throws only if neither the calling
	 * thread nor the timer could hand a run on.
	 */
	void ask() {
		if (this.asks.getAndIncrement() != 0) {
			return;
		}
		Run run = new Run();
		try {
			handOn(run);
		}
		catch (RuntimeException | Error ex) {
			// Raised where this thread would have parked: a fork-join pool (JDK 21+) may park a thread
			// that submits, and BlockHound throws there on an event loop. The timer's thread hands the
			// run on instead; else the count stayed raised with no run on its way, and every later ask,
			// a cancel's included, would be lost. The asker (a room waking its waiters one after the
			// other, say) goes on as if the hand-off had worked, which it will have.
			try {
				this.timer.schedule(() -> handOnFromTimer(run, ex), 1);
			}
			catch (RuntimeException | Error timerFailed) {
				ex.addSuppressed(timerFailed);
				throw ex;
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

	private void handOnFromTimer(Run run, Throwable first) {
		try {
			handOn(run);
		}
		catch (RuntimeException | Error ex) {
			ex.addSuppressed(first);
			log.warn("A step of a lock wait without a thread could not be handed to the registry's pool; the wait"
					+ " ends at its deadline or when cancelled", ex);
		}
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
				StepRunner.this.step.run();
				missed = StepRunner.this.asks.addAndGet(-missed);
			}
			while (missed != 0);
		}

	}

}
