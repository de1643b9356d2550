package io.distlock.core;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Bounds how long a timed acquisition may block on the backend. Redis clients queue commands while
 * they reconnect and answer only at their own command timeout (a minute by default in Lettuce), which
 * would turn {@code tryLock(2s)} into a one-minute hang; at the deadline this guard interrupts the
 * blocked thread, and the engine reports the backend failure instead.
 *
 * <p>One timer thread serves the whole client; cancelled deadlines are removed at once, so nothing
 * accumulates.
 */
final class DeadlineGuard implements AutoCloseable {

	private final ScheduledThreadPoolExecutor timer;

	DeadlineGuard(String clientId) {
		this.timer = new ScheduledThreadPoolExecutor(1, runnable -> {
			Thread thread = new Thread(runnable, "distlock-deadline-" + clientId.substring(0, Math.min(8, clientId.length())));
			thread.setDaemon(true);
			return thread;
		});
		this.timer.setRemoveOnCancelPolicy(true);
	}

	/**
	 * Arms a deadline for the calling thread.
	 * @param nanos from now
	 * @return the armed deadline; {@link Armed#disarm()} it in a finally block
	 */
	Armed arm(long nanos) {
		Armed armed = new Armed(Thread.currentThread());
		armed.future = this.timer.schedule(armed::fire, nanos, TimeUnit.NANOSECONDS);
		return armed;
	}

	/**
	 * Runs a short task on the timer thread after a while: the wake-up of an acquisition that waits
	 * without a thread. The task must only hand work on.
	 * @return the scheduled task, to cancel
	 */
	ScheduledFuture<?> schedule(Runnable task, long nanos) {
		return this.timer.schedule(task, nanos, TimeUnit.NANOSECONDS);
	}

	@Override
	public void close() {
		this.timer.shutdownNow();
	}

	/** One armed deadline. */
	static final class Armed {

		private final Thread thread;

		private ScheduledFuture<?> future;

		private boolean fired;

		private boolean done;

		Armed(Thread thread) {
			this.thread = thread;
		}

		private synchronized void fire() {
			if (!this.done) {
				this.fired = true;
				this.thread.interrupt();
			}
		}

		/** @return whether the deadline passed while armed */
		synchronized boolean fired() {
			return this.fired;
		}

		/**
		 * Disarms; if the deadline fired, clears the interrupt it caused, so that it does not leak
		 * into the caller's code.
		 * @return whether the deadline fired
		 */
		boolean disarm() {
			boolean wasFired;
			synchronized (this) {
				this.done = true;
				wasFired = this.fired;
				if (wasFired) {
					Thread.interrupted();
				}
			}
			// Done before the cancel: should the cancel throw, the deadline no longer interrupts anyone.
			this.future.cancel(false);
			return wasFired;
		}

	}

}
