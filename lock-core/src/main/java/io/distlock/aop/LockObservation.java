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
		Observation acquisition = started(call, () -> DistLockObservationDocumentation.ACQUIRE
			.observation(null, DefaultDistLockObservationConvention.ACQUIRE, () -> context, registry)
			.parentObservation(parent));
		if (acquisition == null) {
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
		this.acquisitionContext.setOutcome(outcome);
		end(this.call, this.acquisition, error);
		if (outcome == DistributedLockObserver.Outcome.ACQUIRED) {
			DistLockObservationContext context = context(Phase.HOLD, this.call);
			this.hold = started(this.call, () -> DistLockObservationDocumentation.HOLD
				.observation(null, DefaultDistLockObservationConvention.HOLD, () -> context, this.registry)
				.parentObservation(this.parent));
		}
	}

	/** Ends {@code distlock.acquire} of a wait given up before it ended (a cancelled subscription). */
	void acquisitionCancelled() {
		if (this == NONE || !this.acquisitionEnded.compareAndSet(false, true)) {
			return;
		}
		this.acquisitionContext.setCancelled(true);
		end(this.call, this.acquisition, null);
	}

	/**
	 * @return the hold's observation in scope on this thread, for the method's own observations to be
	 * its children; closed on this thread
	 */
	HoldScope openHoldScope() {
		Observation hold = this.hold;
		if (hold == null || hold.isNoop()) {
			return HoldScope.NONE;
		}
		// A handler that throws while the scope opens or closes must not leave the hold current on
		// this (pooled) thread, for unrelated work to take as its parent.
		Observation.Scope previous = this.registry.getCurrentObservationScope();
		try {
			return new HoldScope(this.registry, hold.openScope(), previous, this.call);
		}
		catch (RuntimeException ex) {
			failed(this.call, "open the scope of", ex);
			this.registry.setCurrentObservationScope(previous);
			return HoldScope.NONE;
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
		end(this.call, hold, error);
	}

	/**
	 * @return the observation made and started, or {@code null} if a handler failed; one that failed
	 * part of the way is stopped, so that the handlers it did start (a long-task sample, a span) end
	 */
	private static Observation started(LockedCall call, java.util.function.Supplier<Observation> made) {
		Observation observation;
		try {
			observation = made.get();
		}
		catch (RuntimeException ex) {
			failed(call, "make", ex);
			return null;
		}
		try {
			return observation.start();
		}
		catch (RuntimeException ex) {
			failed(call, "start", ex);
			end(call, observation, null);
			return null;
		}
	}

	/** Records the error and stops, each whatever the other's handlers do. */
	private static void end(LockedCall call, Observation observation, Throwable error) {
		if (error != null) {
			try {
				observation.error(error);
			}
			catch (RuntimeException ex) {
				failed(call, "record the error of", ex);
			}
		}
		try {
			observation.stop();
		}
		catch (RuntimeException ex) {
			failed(call, "stop", ex);
		}
	}

	/** The hold's scope on one thread, restored on close whatever the handlers do. */
	static final class HoldScope implements AutoCloseable {

		static final HoldScope NONE = new HoldScope(null, null, null, null);

		private final ObservationRegistry registry;

		private final Observation.Scope scope;

		private final Observation.Scope previous;

		private final LockedCall call;

		private HoldScope(ObservationRegistry registry, Observation.Scope scope, Observation.Scope previous,
				LockedCall call) {
			this.registry = registry;
			this.scope = scope;
			this.previous = previous;
			this.call = call;
		}

		@Override
		public void close() {
			if (this.scope == null) {
				return;
			}
			try {
				this.scope.close();
			}
			catch (RuntimeException ex) {
				failed(this.call, "close the scope of", ex);
				this.registry.setCurrentObservationScope(this.previous);
			}
		}

	}

	private static void failed(LockedCall call, String step, RuntimeException ex) {
		log.warn("Could not {} an observation of @DistributedLock {}: an ObservationHandler failed", step,
				call.attribute().description(), ex);
	}

}
