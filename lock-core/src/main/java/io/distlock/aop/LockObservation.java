package io.distlock.aop;

import java.util.concurrent.atomic.AtomicBoolean;

import io.distlock.aop.DistLockObservationContext.Phase;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * One locked call's two observations: {@code distlock.acquire} while it waits for its locks, then
 * {@code distlock.hold} while it holds them. Both are children of the observation that was current
 * when the call was made, given explicitly: the wait may end, and the hold begin, on a thread of the
 * lock's client, where another observation (or none) is current.
 *
 * <p>Each ends once, whichever path ends it first: a cancel can race the acquisition's own end.
 */
final class LockObservation {

	/** For a registry that observes nothing: no context, no observation, no allocation per call. */
	static final LockObservation NONE = new LockObservation(ObservationRegistry.NOOP, null, null, Observation.NOOP,
			null);

	private final ObservationRegistry registry;

	private final LockedCall call;

	private final Observation parent;

	private final Observation acquisition;

	private final DistLockObservationContext acquisitionContext;

	private final AtomicBoolean acquisitionEnded = new AtomicBoolean();

	private final AtomicBoolean released = new AtomicBoolean();

	/** Started when the locks are taken; {@code null} until then, and if they never are. */
	private volatile Observation hold;

	private LockObservation(ObservationRegistry registry, LockedCall call, Observation parent, Observation acquisition,
			DistLockObservationContext acquisitionContext) {
		this.registry = registry;
		this.call = call;
		this.parent = parent;
		this.acquisition = acquisition;
		this.acquisitionContext = acquisitionContext;
	}

	/**
	 * Starts the call's {@code distlock.acquire}, before its first lock is asked for.
	 * @param parent the caller's observation, or {@code null}
	 */
	static LockObservation start(ObservationRegistry registry, LockedCall call, Observation parent) {
		if (registry.isNoop()) {
			return NONE;
		}
		DistLockObservationContext context = context(Phase.ACQUIRE, call);
		Observation acquisition = DistLockObservationDocumentation.ACQUIRE
			.observation(null, DefaultDistLockObservationConvention.ACQUIRE, () -> context, registry)
			.parentObservation(parent)
			.start();
		return new LockObservation(registry, call, parent, acquisition, context);
	}

	private static DistLockObservationContext context(Phase phase, LockedCall call) {
		LockAttribute attribute = call.attribute();
		return new DistLockObservationContext(phase, attribute.logicalName(), attribute.registryName(), call.names(),
				attribute.method());
	}

	/**
	 * Ends {@code distlock.acquire} with the wait's outcome and, if the locks were taken, starts
	 * {@code distlock.hold}. Once: a later call (the wait ended after its subscriber cancelled) does nothing.
	 * @param error why the backend could not be asked, or the interrupt; {@code null} for a timeout
	 */
	void acquisitionEnded(DistributedLockObserver.Outcome outcome, Throwable error) {
		if (this == NONE || !this.acquisitionEnded.compareAndSet(false, true)) {
			return;
		}
		this.acquisitionContext.setOutcome(outcome);
		if (error != null) {
			this.acquisition.error(error);
		}
		this.acquisition.stop();
		if (outcome == DistributedLockObserver.Outcome.ACQUIRED) {
			DistLockObservationContext context = context(Phase.HOLD, this.call);
			this.hold = DistLockObservationDocumentation.HOLD
				.observation(null, DefaultDistLockObservationConvention.HOLD, () -> context, this.registry)
				.parentObservation(this.parent)
				.start();
		}
	}

	/** Ends {@code distlock.acquire} of a wait given up before it ended (a cancelled subscription). */
	void acquisitionCancelled() {
		if (this == NONE || !this.acquisitionEnded.compareAndSet(false, true)) {
			return;
		}
		this.acquisitionContext.setCancelled(true);
		this.acquisition.stop();
	}

	/** @return the hold's observation in scope on this thread, for the method's own observations to be its children */
	Observation.Scope openHoldScope() {
		Observation hold = this.hold;
		return (hold != null) ? hold.openScope() : Observation.Scope.NOOP;
	}

	/** @return the hold's observation, or {@code null} if there is none */
	Observation hold() {
		return this.hold;
	}

	/**
	 * Ends {@code distlock.hold}, once, when the locks are released.
	 * @param error the method's exception or the work's error, or a hold lost meanwhile; or {@code null}
	 */
	void released(Throwable error) {
		Observation hold = this.hold;
		if (hold == null || !this.released.compareAndSet(false, true)) {
			return;
		}
		if (error != null) {
			hold.error(error);
		}
		hold.stop();
	}

}
