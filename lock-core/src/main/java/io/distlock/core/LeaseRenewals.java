package io.distlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.LockWatchdog;

/**
 * Renews the leases of a client's watchdog holds every third of the lease, all of them in a few
 * batched round trips, instead of a timer per lock. Its work runs in a {@link SerialLane} of the
 * application's {@link LockWatchdog} (or of one of its own), one task at a time.
 *
 * <p>Which holds are due is the engine's call (it drops holds of dead threads and explicit leases
 * that ran out); renewal stops for all holds when the client closes. A renewal that finds the hold
 * gone, or that cannot reach the backend until the last confirmed lease has run out, marks the hold
 * lost.
 */
final class LeaseRenewals implements AutoCloseable {

	private static final Logger log = LoggerFactory.getLogger(LeaseRenewals.class);

	/** Keys per renewal round trip: large enough to amortise, small enough not to stall the server. */
	static final int BATCH_SIZE = 256;

	private final LockBackend backend;

	private final Duration lease;

	/** The holds due for renewal now: watchdog holds of live threads, not lost, not being released. */
	private final Supplier<? extends Collection<Hold>> holds;

	private final LostHandler onLost;

	private final SerialLane lane;

	private final long periodMillis;

	/** The next renewal, once scheduled. */
	private volatile ScheduledFuture<?> tick;

	private volatile boolean closed;

	/** Takes this watchdog off its {@link LockWatchdog}'s list of users. */
	private final Runnable detach;

	private final AtomicLong renewals = new AtomicLong();

	private final AtomicLong failedRenewals = new AtomicLong();

	/** Whether the last renewal failed: an outage is warned about once, not at every tick. */
	private volatile boolean failing;

	private final BiConsumer<List<Hold>, RuntimeException> onRenewalFailure;

	LeaseRenewals(LockWatchdog threads, LockBackend backend, Duration lease, Supplier<? extends Collection<Hold>> holds,
			LostHandler onLost, BiConsumer<List<Hold>, RuntimeException> onRenewalFailure) {
		this.onRenewalFailure = onRenewalFailure;
		this.backend = backend;
		this.lease = lease;
		this.holds = holds;
		this.onLost = onLost;
		this.lane = new SerialLane(threads);
		this.periodMillis = Math.max(1, lease.toMillis() / 3);
		this.detach = threads.attach(this::closedFirst);
		scheduleTick();
	}

	/** The application closed the {@link LockWatchdog} while this registry was still open. */
	private void closedFirst() {
		if (!this.closed) {
			log.warn("The distlock watchdog was closed before a lock registry that uses it; that registry's locks are "
					+ "no longer renewed and expire after their lease. Close lock registries first.");
			close();
		}
	}

	/** With a fixed delay: a renewal that takes long is not followed by a burst of late ones. */
	private void scheduleTick() {
		if (this.closed) {
			return;
		}
		try {
			ScheduledFuture<?> next = this.lane.schedule(this::tick, Duration.ofMillis(this.periodMillis));
			this.tick = next;
			if (this.closed) {
				// close() ran between the check and the assignment, and cancelled the previous tick.
				next.cancel(false);
			}
		}
		catch (RejectedExecutionException stopped) {
			closedFirst();
		}
	}

	private void tick() {
		if (this.closed) {
			return;
		}
		renewAllSafely();
		scheduleTick();
	}

	/** @return how many holds have been renewed so far */
	long renewals() {
		return this.renewals.get();
	}

	/** @return how many hold renewals failed because the backend could not be reached */
	long failedRenewals() {
		return this.failedRenewals.get();
	}

	private void renewAllSafely() {
		try {
			renewAll();
		}
		catch (Throwable ex) {
			if (this.closed) {
				// The registry closed (and its backend with it) while this renewal ran.
				log.debug("distlock watchdog renewal ended by the registry's close: {}", ex.toString());
			}
			else {
				// Caught here so that the next tick is still scheduled.
				log.error("distlock watchdog failed; will retry at the next tick", ex);
			}
		}
	}

	void renewAll() {
		List<Hold> due = new ArrayList<>(this.holds.get());
		for (int from = 0; from < due.size() && !this.closed; from += BATCH_SIZE) {
			renewBatch(due.subList(from, Math.min(due.size(), from + BATCH_SIZE)));
		}
	}

	private void renewBatch(List<Hold> batch) {
		long start = System.nanoTime();
		List<LockBackend.HoldRef> refs = new ArrayList<>(batch.size());
		for (Hold hold : batch) {
			// Before the call: a re-entry sent while it is on its way must not ask for less.
			hold.askedAtLeastUntil(start + this.lease.toNanos());
			refs.add(hold.ref());
		}
		List<Boolean> renewed;
		try {
			renewed = this.backend.renew(refs, this.lease, Hold.waitWithin(batch, start));
		}
		catch (RuntimeException ex) {
			if (this.closed) {
				// The registry closed meanwhile (its backend perhaps with it): nothing is lost by that.
				log.debug("distlock watchdog renewal ended by the registry's close: {}", ex.toString());
				return;
			}
			List<String> named = batch.stream()
				.limit(5)
				.map(hold -> (hold.origin() != null) ? "'" + hold.name + "' (" + hold.origin() + ")" : "'" + hold.name + "'")
				.toList();
			if (!this.failing) {
				this.failing = true;
				log.warn("distlock watchdog could not renew {} lock(s) {}: {}; retrying every {} ms", batch.size(), named,
						this.backend.explain(ex), Math.max(1, this.lease.toMillis() / 3));
			}
			else {
				log.debug("distlock watchdog still cannot renew {} lock(s) {}: {}", batch.size(), named,
						this.backend.explain(ex));
			}
			this.failedRenewals.addAndGet(batch.size());
			this.onRenewalFailure.accept(batch, ex);
			long now = System.nanoTime();
			for (Hold hold : batch) {
				if (!hold.confirmedAt(now) && !hold.releasing()) {
					this.onLost.lost(hold, "the watchdog could not reach the backend before the lease of "
							+ this.lease + " ran out (" + ex + ")");
				}
			}
			return;
		}
		if (this.failing) {
			this.failing = false;
			log.info("distlock watchdog reaches the backend again");
		}
		long confirmedUntil = start + this.backend.renewalValidity(this.lease).toNanos();
		for (int i = 0; i < batch.size(); i++) {
			Hold hold = batch.get(i);
			if (renewed.get(i)) {
				hold.confirmedUntil(confirmedUntil);
				hold.renewed();
				this.renewals.incrementAndGet();
			}
			else if (!hold.releasing()) {
				this.onLost.lost(hold, "the watchdog found the lock no longer held by its owner");
			}
		}
	}

	/**
	 * A hold was handed over with a provisional lease (see {@link LockBackend#QUEUE_PLACE}): extends
	 * it to the hold's own lease a quarter of that lease later, on the watchdog's thread, if it is
	 * still held then. Most critical sections under contention are over by then and cost no call;
	 * the rest have three quarters of the provisional lease left for the extension to land.
	 * An explicit lease counts from the take-up, not from the extension: it asks for what is left of
	 * it then, so that a crashed holder keeps the lock no longer than it asked for.
	 * @param hold the hold handed over
	 * @param ownLease its own lease (the watchdog timeout, or the explicit lease it asked for)
	 */
	void extendHandedOver(Hold hold, Duration ownLease) {
		if (ownLease.compareTo(LockBackend.QUEUE_PLACE) <= 0) {
			return;
		}
		long takenUpAt = System.nanoTime();
		try {
			this.lane.schedule(() -> {
				if (this.closed || hold.releasing() || hold.lost() != null) {
					return;
				}
				long start = System.nanoTime();
				// Whole milliseconds, rounded down: backends count leases in them, and never more than asked.
				Duration lease = hold.watchdog ? ownLease
						: Duration.ofMillis(TimeUnit.NANOSECONDS.toMillis(ownLease.toNanos() - (start - takenUpAt)));
				hold.askedAtLeastUntil(start + lease.toNanos());
				try {
					boolean extended = this.backend
						.renew(List.of(hold.ref()), lease, Hold.waitWithin(List.of(hold), start))
						.get(0);
					if (extended) {
						hold.confirmedUntil(start + this.backend.renewalValidity(lease).toNanos());
					}
					else if (!hold.releasing() && hold.lost() == null) {
						this.onLost.lost(hold, "the hold handed over was gone before its lease could be extended");
					}
				}
				catch (RuntimeException ex) {
					if (!hold.confirmedAt(System.nanoTime()) && !hold.releasing()) {
						this.onLost.lost(hold, "its lease could not be extended after the hand-off (" + ex + ")");
					}
					else {
						// The regular renewal retries; an explicit lease stays provisional and is lost if it runs out.
						log.warn("Could not extend the lease of lock '{}' handed to {}: {}", hold.name, hold.owner, ex.toString());
					}
				}
			}, LockBackend.QUEUE_PLACE.dividedBy(4));
		}
		catch (RejectedExecutionException closed) {
			log.debug("Watchdog closed; the lease of lock '{}' handed to {} is not extended", hold.name, hold.owner);
		}
	}

	/**
	 * Runs {@code call} in the watchdog's lane, after any renewal in flight: a lease that must get
	 * shorter (a hold kept for a while after its owner is done) is set after the last renewal, never
	 * overwritten by one that was already under way.
	 * @param call what to run; its failure is rethrown here
	 * @param within how long to wait for it to end, queue included
	 * @return what it returned
	 */
	<T> T serially(Callable<T> call, Duration within) {
		if (this.lane.inLane()) {
			try {
				return call.call();
			}
			catch (RuntimeException ex) {
				throw ex;
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}
		FutureTask<T> result = new FutureTask<>(call);
		try {
			this.lane.execute(result);
		}
		catch (RejectedExecutionException closed) {
			throw new IllegalStateException("The lock registry is closed", closed);
		}
		long deadline = System.nanoTime() + LockArguments.saturatedNanos(within);
		boolean interrupted = false;
		try {
			while (true) {
				try {
					return result.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
				}
				catch (InterruptedException ex) {
					// Like a release, this must reach the backend whatever the caller's interrupt status.
					interrupted = true;
				}
				catch (TimeoutException ex) {
					result.cancel(false);
					throw new IllegalStateException("The backend did not answer within " + within.toMillis() + " ms");
				}
				catch (CancellationException ex) {
					throw new IllegalStateException("The lock registry was closed", ex);
				}
				catch (ExecutionException ex) {
					if (ex.getCause() instanceof RuntimeException runtime) {
						throw runtime;
					}
					if (ex.getCause() instanceof Error error) {
						throw error;
					}
					throw new IllegalStateException(ex.getCause());
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Stops renewing. Tasks not started are dropped (a caller of {@link #serially} waiting for one is
	 * told it will never run); one under way ends within its own bound.
	 */
	@Override
	public void close() {
		this.closed = true;
		this.detach.run();
		ScheduledFuture<?> next = this.tick;
		if (next != null) {
			next.cancel(false);
		}
		this.lane.close();
	}

	/** Marks a hold lost. */
	@FunctionalInterface
	interface LostHandler {

		void lost(Hold hold, String reason);

	}

}
