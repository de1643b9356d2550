package io.distlock.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.WorkHold;

/**
 * Acquisitions of holds that belong to a piece of work (a future, a reactive stream) rather than to a
 * thread: each has an owner of its own, so it is not reentrant and may be released from any thread.
 */
final class WorkAcquisitions {

	private static final Logger log = LoggerFactory.getLogger(WorkAcquisitions.class);


	private final LockEngineOptions options;

	private final ClosedState closed;

	private final BlockingAcquisition blocking;

	private final Attempt.Parts attempts;

	private final AsyncAcquisition.Parts waits;

	private final EngineWorkHold.Parts workHolds;

	/** Numbers the owners of holds that belong to work. */
	private final AtomicLong owners = new AtomicLong();

	WorkAcquisitions(LockEngineOptions options, ClosedState closed,
			BlockingAcquisition blocking, Attempt.Parts attempts, AsyncAcquisition.Parts waits,
			EngineWorkHold.Parts workHolds) {
		this.options = options;
		this.closed = closed;
		this.blocking = blocking;
		this.attempts = attempts;
		this.waits = waits;
		this.workHolds = workHolds;
	}

	/**
	 * {@link io.distlock.LockRegistry#tryLockForWork}: the wait is on the calling thread.
	 * @param id the lock, its name already checked
	 */
	Optional<WorkHold> tryLock(LockId id, Duration waitTime, Duration leaseTime) throws InterruptedException {
		Duration lease = (leaseTime != null) ? LockArguments.requirePositiveLease(id.name(), leaseTime) : null;
		String owner = newOwner();
		Duration wait = (waitTime != null && !waitTime.isNegative()) ? waitTime : Duration.ZERO;
		if (!this.blocking.acquire(id, owner, false, lease, wait, true)) {
			return Optional.empty();
		}
		return Optional.of(this.workHolds.hold(id, owner));
	}

	/**
	 * {@link io.distlock.LockRegistry#tryLockForWorkAsync}: the wait holds no thread; the backend calls
	 * run on the engine's call threads, one at a time per acquisition, and the waiting between them is
	 * done by release messages, hand-offs and a timer.
	 */
	CompletableFuture<Optional<WorkHold>> tryLockAsync(LockId id, Duration waitTime, Duration leaseTime) {
		Duration wait = (waitTime != null && !waitTime.isNegative()) ? waitTime : Duration.ZERO;
		return acquireForWork(id, wait, leaseTime);
	}

	/** {@link io.distlock.LockRegistry#lockForWorkAsync}: as long as it takes, until cancelled. */
	CompletableFuture<WorkHold> lockAsync(LockId id, Duration leaseTime) {
		String name = id.name();
		CompletableFuture<Optional<WorkHold>> acquisition = acquireForWork(id, null, leaseTime);
		// A future of the caller's own, tied both ways: cancelling it (or timing it out) must reach the
		// acquisition, which a dependent stage's cancel does not, or the hold it wins is nobody's.
		CompletableFuture<WorkHold> returned = new CompletableFuture<>();
		acquisition.whenComplete((hold, error) -> {
			if (error != null) {
				returned.completeExceptionally(error);
			}
			else if (hold.isEmpty()) {
				returned.completeExceptionally(new CancellationException());
			}
			else if (!returned.complete(hold.get())) {
				hold.get().releaseAsync().whenComplete((ignored, failure) -> {
					if (failure != null) {
						log.debug("Could not give back lock '{}' won after its acquisition was cancelled", name, failure);
					}
				});
			}
		});
		// However the caller ends its future (cancel, a timeout, complete), the acquisition ends.
		returned.whenComplete((hold, error) -> acquisition.cancel(false));
		return returned;
	}

	private CompletableFuture<Optional<WorkHold>> acquireForWork(LockId id, Duration wait, Duration leaseTime) {
		String name = id.name();
		Duration lease = (leaseTime != null) ? LockArguments.requirePositiveLease(name, leaseTime) : null;
		if (this.closed.isClosed()) {
			return CompletableFuture.failedFuture(this.closed.exception(name));
		}
		Attempt attempt = new Attempt(this.attempts, id, newOwner(), false,
				(lease != null) ? lease : this.options.defaultLease(), false);
		return new AsyncAcquisition(this.waits, attempt, wait).start();
	}

	/**
	 * An owner of its own, never a thread's: the work may end on any thread, and the thread that took
	 * the hold may take the lock again meanwhile (then it waits like any other owner).
	 */
	private String newOwner() {
		return this.options.clientId() + ":w" + Long.toString(this.owners.incrementAndGet(), 36);
	}

}
