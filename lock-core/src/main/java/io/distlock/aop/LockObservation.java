package io.distlock.aop;

import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.aop.DistLockObservationContext.Phase;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * One locked call's two observations: {@code distlock.acquire} while it waits for its locks, then
 * {@code distlock.hold} while it holds them. Both are children of the observation that was current
 * when the call was made, given explicitly: the wait may end, and the hold begin, on a thread of the
 * lock's client, where another observation (or none) is current.
 *
 * <p>Each ends once, whichever path ends it first: a cancel can race the acquisition's own end. A
 * handler that throws is logged, not let through: between the acquisition and the release it would
 * leave the locks held, renewed by the watchdog, with nobody to release them.
 */
final class LockObservation {

	private static final Logger log = LoggerFactory.getLogger(LockObservation.class);

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
		Observation acquisition;
		try {
			acquisition = DistLockObservationDocumentation.ACQUIRE
				.observation(null, DefaultDistLockObservationConvention.ACQUIRE, () -> context, registry)
				.parentObservation(parent)
				.start();
		}
		catch (RuntimeException ex) {
			failed(call, "start", ex);
			return NONE;
		}
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
		try {
			this.acquisitionContext.setOutcome(outcome);
			if (error != null) {
				this.acquisition.error(error);
			}
			this.acquisition.stop();
		}
		catch (RuntimeException ex) {
			failed(this.call, "stop", ex);
		}
		if (outcome == DistributedLockObserver.Outcome.ACQUIRED) {
			DistLockObservationContext context = context(Phase.HOLD, this.call);
			try {
				this.hold = DistLockObservationDocumentation.HOLD
					.observation(null, DefaultDistLockObservationConvention.HOLD, () -> context, this.registry)
					.parentObservation(this.parent)
					.start();
			}
			catch (RuntimeException ex) {
				failed(this.call, "start", ex);
			}
		}
	}

	/** Ends {@code distlock.acquire} of a wait given up before it ended (a cancelled subscription). */
	void acquisitionCancelled() {
		if (this == NONE || !this.acquisitionEnded.compareAndSet(false, true)) {
			return;
		}
		this.acquisitionContext.setCancelled(true);
		try {
			this.acquisition.stop();
		}
		catch (RuntimeException ex) {
			failed(this.call, "stop", ex);
		}
	}

	/** @return the hold's observation in scope on this thread, for the method's own observations to be its children */
	Observation.Scope openHoldScope() {
		Observation hold = this.hold;
		if (hold == null) {
			return Observation.Scope.NOOP;
		}
		try {
			return hold.openScope();
		}
		catch (RuntimeException ex) {
			failed(this.call, "open the scope of", ex);
			return Observation.Scope.NOOP;
		}
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
		try {
			if (error != null) {
				hold.error(error);
			}
			hold.stop();
		}
		catch (RuntimeException ex) {
			failed(this.call, "stop", ex);
		}
	}

	private static void failed(LockedCall call, String step, RuntimeException ex) {
		log.warn("Could not {} an observation of @DistributedLock {}: an ObservationHandler failed", step,
				call.attribute().description(), ex);
	}

}
