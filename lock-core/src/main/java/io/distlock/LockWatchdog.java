package io.distlock;

import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads that renew the leases of locks held without one: one watchdog for every registry of
 * an application (Spring Boot makes it a bean, {@code distLockWatchdog}), instead of a thread per
 * registry. Each registry renews its holds in a few batched calls every third of its watchdog
 * timeout; those calls run on these threads, one at a time per registry and in order, so that a
 * lease that must get shorter is never overwritten by a renewal already under way.
 *
 * <p>Two kinds of threads: a {@linkplain #timer() timer} that only says when a registry's renewal
 * is due, and {@linkplain #workers() workers} that make the calls. A registry whose lock server
 * stalls holds up one worker for at most its renewal's bound, never the timer or another
 * registry's renewals, as long as there are workers enough: {@link #create()} starts them on demand
 * and lets idle ones go.
 *
 * <p>Close the registries first, then the watchdog (Spring does, in that order); a registry still
 * open when its watchdog closes stops renewing, and its holds expire after their lease.
 */
public final class LockWatchdog implements AutoCloseable {

	private final ScheduledExecutorService timer;

	private final Executor workers;

	private final boolean owned;

	/** What to tell the registries still attached when this watchdog closes before them. */
	private final Set<Runnable> attached = ConcurrentHashMap.newKeySet();

	private volatile boolean closed;

	private LockWatchdog(ScheduledExecutorService timer, Executor workers, boolean owned) {
		this.timer = timer;
		this.workers = workers;
		this.owned = owned;
	}

	/**
	 * A watchdog with threads of its own, stopped by {@link #close()}: one timer thread,
	 * {@code distlock-watchdog-timer}, and daemon workers {@code distlock-watchdog-<n>} started as
	 * renewals need them and ended after five minutes idle.
	 * @return the watchdog
	 */
	public static LockWatchdog create() {
		ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, daemon("distlock-watchdog-timer", false));
		// Cancelled ticks of closed registries do not pile up in the timer's queue.
		timer.setRemoveOnCancelPolicy(true);
		// Idle workers stay a while, so that registries renewing every minute or so do not start a thread per tick.
		ThreadPoolExecutor workers = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 5, TimeUnit.MINUTES,
				new SynchronousQueue<>(), daemon("distlock-watchdog-", true));
		return new LockWatchdog(timer, workers, true);
	}

	/**
	 * A watchdog on the application's own threads, which {@link #close()} leaves running: timing and
	 * calls both on {@code scheduler}. Give it more threads than there are registries whose lock
	 * servers may stall at the same time, or a stalled renewal delays the others' (not a one-thread
	 * scheduler shared with {@code @Scheduled} jobs). It must run every task it accepts.
	 * @param scheduler the application's scheduler
	 * @return the watchdog
	 */
	public static LockWatchdog on(ScheduledExecutorService scheduler) {
		Objects.requireNonNull(scheduler, "scheduler");
		return new LockWatchdog(scheduler, scheduler, false);
	}

	/**
	 * A watchdog on the application's own threads, which {@link #close()} leaves running.
	 * @param timer says when renewals are due; its tasks only hand work to {@code workers}
	 * @param workers make the renewal calls; must run every task it accepts (a discarding policy
	 * would stop a registry's renewals for good)
	 * @return the watchdog
	 */
	public static LockWatchdog on(ScheduledExecutorService timer, Executor workers) {
		return new LockWatchdog(Objects.requireNonNull(timer, "timer"), Objects.requireNonNull(workers, "workers"), false);
	}

	/** @return the scheduler that says when renewals are due */
	public ScheduledExecutorService timer() {
		return this.timer;
	}

	/** @return the threads that make the renewal calls */
	public Executor workers() {
		return this.workers;
	}

	/**
	 * For lock registries: {@code onEarlyClose} runs if this watchdog closes while the registry still
	 * uses it, so that the registry can say its locks are no longer renewed.
	 * @param onEarlyClose told of an early close
	 * @return what the registry runs when it closes first
	 * @throws IllegalStateException if this watchdog is closed already
	 */
	public Runnable attach(Runnable onEarlyClose) {
		this.attached.add(onEarlyClose);
		if (this.closed) {
			this.attached.remove(onEarlyClose);
			throw new IllegalStateException("The distlock watchdog is closed; a lock registry cannot renew its leases on it");
		}
		return () -> this.attached.remove(onEarlyClose);
	}

	/**
	 * Stops the threads this watchdog started ({@link #create()}); threads given to it are the
	 * application's to stop. Registries still open are told, and stop renewing.
	 */
	@Override
	public void close() {
		this.closed = true;
		for (Runnable onEarlyClose : this.attached) {
			onEarlyClose.run();
		}
		this.attached.clear();
		if (!this.owned) {
			return;
		}
		this.timer.shutdownNow();
		if (this.workers instanceof ExecutorService service) {
			// A renewal under way ends within its own bound; nothing waits for it here.
			service.shutdown();
		}
	}

	private static ThreadFactory daemon(String name, boolean numbered) {
		AtomicInteger count = new AtomicInteger();
		return runnable -> {
			Thread thread = new Thread(runnable, numbered ? name + count.incrementAndGet() : name);
			thread.setDaemon(true);
			return thread;
		};
	}

}
