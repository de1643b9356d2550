package io.distlock.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import io.distlock.LockBackendException;
import io.distlock.LockOrigin;
import io.distlock.WorkHold;
import io.micrometer.observation.Observation;

/**
 * Takes every lock of a deferred call without blocking a thread: one after another in the call's
 * order, within one wait, all or none, through {@link io.distlock.LockRegistry#tryLockForWorkAsync}.
 * The non-blocking twin of the deferred paths' blocking acquisition: the same outcomes (the holds, or a
 * failure for the method's policy, or an exception), the same observations.
 *
 * <p>Cancelling the returned future ends the acquisition: the lock being waited for is given up,
 * and the holds taken so far are released, off the cancelling thread (an event loop, maybe).
 */
final class DeferredAcquisition {

	private final LockAspectSupport support;

	private final LockedCall call;

	private final LockObservation observation;

	private final long start = System.nanoTime();

	/** Holds taken so far; only the chain's current step adds to it, after the previous one completed. */
	private final List<WorkHold> held;

	private final CompletableFuture<WorkHolds> result = new CompletableFuture<>();

	/** The acquisition under way, to cancel with the whole. */
	private volatile CompletableFuture<Optional<WorkHold>> current;

	private DeferredAcquisition(LockAspectSupport support, LockedCall call, Observation parent) {
		this.support = support;
		this.call = call;
		this.held = new ArrayList<>(call.names().size());
		this.observation = support.startObservation(call, parent);
	}

	/**
	 * @param parent the caller's observation (a subscriber's, say), or {@code null}
	 * @return the call's holds to come, or its failure; cancel it to give up
	 */
	static CompletableFuture<WorkHolds> start(LockAspectSupport support, LockedCall call, Observation parent) {
		DeferredAcquisition acquisition = new DeferredAcquisition(support, call, parent);
		acquisition.result.whenComplete((acquired, error) -> {
			if (acquisition.result.isCancelled()) {
				CompletableFuture<Optional<WorkHold>> current = acquisition.current;
				if (current != null) {
					current.cancel(false);
				}
				acquisition.observation.acquisitionCancelled();
			}
		});
		acquisition.next();
		return acquisition.result;
	}

	private void next() {
		List<String> names = this.call.names();
		if (this.held.size() == names.size()) {
			acquired();
			return;
		}
		String name = names.get(this.held.size());
		Duration left = this.call.waitTime().minusNanos(System.nanoTime() - this.start);
		LockAttribute attribute = this.call.attribute();
		CompletableFuture<Optional<WorkHold>> step;
		try {
			// The registry records the origin for diagnostics from the calling thread.
			step = LockOrigin.during(attribute.logicalName(), attribute.description(),
					() -> this.call.tryLockForWorkAsync(name, left.isNegative() ? Duration.ZERO : left));
		}
		catch (IllegalArgumentException refused) {
			fail(LockAspectSupport.refusedName(attribute, refused));
			return;
		}
		catch (RuntimeException | Error ex) {
			fail(ex);
			return;
		}
		this.current = step;
		if (this.result.isDone()) {
			step.cancel(false);
		}
		step.whenComplete((hold, error) -> {
			if (error != null) {
				Throwable cause = (error instanceof CompletionException && error.getCause() != null) ? error.getCause()
						: error;
				if (cause instanceof LockBackendException) {
					stopShort(cause);
				}
				else if (cause instanceof CancellationException && this.result.isCancelled()) {
					releaseHeld();
				}
				else {
					fail(cause);
				}
				return;
			}
			if (hold.isEmpty()) {
				stopShort(null);
				return;
			}
			this.held.add(hold.get());
			if (this.result.isDone()) {
				// Cancelled while this lock was being taken.
				releaseHeld();
				return;
			}
			next();
		});
	}

	private void acquired() {
		this.support.observeAcquisition(this.call, this.observation, DistributedLockObserver.Outcome.ACQUIRED,
				LockAspectSupport.waitedSince(this.start), null);
		WorkHolds acquired = WorkHolds.taken(this.held, this.observation);
		if (!this.result.complete(acquired)) {
			releaseHeld();
			this.observation.released(null);
		}
	}

	/** Not acquired within the wait ({@code cause == null}), or the backend failed: the method's policy answers. */
	private void stopShort(Throwable cause) {
		Duration waited = LockAspectSupport.waitedSince(this.start);
		releaseHeld();
		this.support.observeAcquisition(this.call, this.observation, (cause == null)
				? DistributedLockObserver.Outcome.TIMED_OUT : DistributedLockObserver.Outcome.FAILED, waited, cause);
		this.result.complete(WorkHolds.notTaken(LockAspectSupport.failure(this.call, waited, cause)));
	}

	/** Anything else (a closed registry, a refused name, an Error) reaches the subscriber as it is. */
	private void fail(Throwable ex) {
		Duration waited = LockAspectSupport.waitedSince(this.start);
		releaseHeld();
		this.support.observeAcquisition(this.call, this.observation, DistributedLockObserver.Outcome.FAILED, waited, ex);
		this.result.completeExceptionally(ex);
	}

	private void releaseHeld() {
		if (this.held.isEmpty()) {
			return;
		}
		List<WorkHold> taken = List.copyOf(this.held);
		this.held.clear();
		WorkHolds.RELEASES.execute(() -> WorkHolds.giveBack(this.call, taken));
	}

}
