package io.distlock.core;

import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.LockWatchdog;

/**
 * One registry's share of a {@link LockWatchdog}: its tasks run on the watchdog's workers one at a
 * time, in the order they were given, as on a thread of its own; other registries' lanes run beside
 * it. A task runs to its end (nothing interrupts a shared worker); {@link #close()} drops what has
 * not started and cancels it if it is a {@link Future}, so that nobody waits for it.
 */
final class SerialLane {

	private static final Logger log = LoggerFactory.getLogger(SerialLane.class);

	private final LockWatchdog threads;

	private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();

	/** Whether a worker is draining the queue (or has been asked to). */
	private final AtomicBoolean draining = new AtomicBoolean();

	/** The worker running this lane's task now, or {@code null}. */
	private volatile Thread runner;

	private volatile boolean closed;

	SerialLane(LockWatchdog threads) {
		this.threads = threads;
	}

	/** @return whether the calling thread is running one of this lane's tasks */
	boolean inLane() {
		return Thread.currentThread() == this.runner;
	}

	/**
	 * Runs {@code task} after every task given before it.
	 * @throws RejectedExecutionException if the lane or its watchdog is closed
	 */
	void execute(Runnable task) {
		if (this.closed) {
			throw new RejectedExecutionException("closed");
		}
		this.queue.add(task);
		if (this.closed) {
			// close() may have emptied the queue just before the add.
			dropQueued();
			throw new RejectedExecutionException("closed");
		}
		kick();
	}

	/**
	 * Runs {@code task} in this lane after {@code delay}; nothing happens if the lane is closed by then.
	 * @return what cancels it
	 * @throws RejectedExecutionException if the watchdog's timer is stopped
	 */
	ScheduledFuture<?> schedule(Runnable task, Duration delay) {
		return this.threads.timer().schedule(() -> {
			try {
				execute(task);
			}
			catch (RejectedExecutionException closedMeanwhile) {
				log.debug("Watchdog lane closed; a scheduled task is dropped");
			}
		}, Math.max(0, delay.toNanos()), TimeUnit.NANOSECONDS);
	}

	/** Stops taking tasks and drops those not started; one under way runs to its end. */
	void close() {
		this.closed = true;
		dropQueued();
	}

	private void kick() {
		if (!this.draining.compareAndSet(false, true)) {
			return;
		}
		try {
			this.threads.workers().execute(this::drain);
		}
		catch (RejectedExecutionException stopped) {
			this.draining.set(false);
			this.closed = true;
			dropQueued();
			throw stopped;
		}
	}

	private void drain() {
		this.runner = Thread.currentThread();
		try {
			Runnable task;
			while ((task = this.queue.poll()) != null) {
				if (this.closed) {
					drop(task);
					continue;
				}
				try {
					task.run();
				}
				catch (Throwable ex) {
					// Tasks report their own failures; one that escapes must not end the lane.
					log.error("distlock watchdog task failed", ex);
				}
			}
		}
		finally {
			this.runner = null;
			this.draining.set(false);
		}
		// A task given after the last poll but before draining was cleared found the lane busy.
		if (!this.queue.isEmpty() && !this.closed) {
			try {
				kick();
			}
			catch (RejectedExecutionException stopped) {
				log.debug("Watchdog stopped; {} task(s) dropped", this.queue.size());
			}
		}
	}

	private void dropQueued() {
		Runnable task;
		while ((task = this.queue.poll()) != null) {
			drop(task);
		}
	}

	private static void drop(Runnable task) {
		if (task instanceof Future<?> future) {
			future.cancel(false);
		}
	}

}
