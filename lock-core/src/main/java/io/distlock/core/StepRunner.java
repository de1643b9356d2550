package io.distlock.core;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs the steps of one acquisition that waits without a thread: on the engine's pool, one at a
 * time, never on the thread that asks for one (an event loop, the timer, a room's wake-up). Asks that
 * arrive while a step runs add one more run rather than a second runner.
 */
final class StepRunner {

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

	/** Asks for a step; never runs one on the calling thread. */
	void ask() {
		if (this.asks.getAndIncrement() != 0) {
			return;
		}
		try {
			handOn();
		}
		catch (RuntimeException | Error ex) {
			// Raised where this thread would have parked: a fork-join pool (JDK 21+) may park a thread
			// that submits, and BlockHound throws there on an event loop. The timer's thread hands the
			// run on instead; else the count stayed raised with no run on its way, and every later ask,
			// a cancel's included, would be lost.
			CleanUp.after(ex, () -> this.timer.schedule(this::handOn, 1));
			throw ex;
		}
	}

	private void handOn() {
		try {
			this.pool.execute(this::run);
		}
		catch (RejectedExecutionException closed) {
			this.refused.run();
		}
	}

	private void run() {
		int missed = 1;
		do {
			this.step.run();
			missed = this.asks.addAndGet(-missed);
		}
		while (missed != 0);
	}

}
