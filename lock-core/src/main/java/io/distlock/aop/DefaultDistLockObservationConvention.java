package io.distlock.aop;

import java.util.Locale;

import io.distlock.aop.DistLockObservationContext.Phase;
import io.distlock.aop.DistLockObservationDocumentation.HighCardinalityKeyNames;
import io.distlock.aop.DistLockObservationDocumentation.LowCardinalityKeyNames;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;

/**
 * distlock's own names and key values for a {@code @DistributedLock} call's observations:
 * {@code distlock.acquire} with {@code distlock.lock}, {@code distlock.registry} and
 * {@code distlock.outcome}, {@code distlock.hold} with the first two, and both with the
 * high-cardinality {@code distlock.keys}. The span names are {@code "acquire <lock>"} and
 * {@code "hold <lock>"}, with the logical lock name.
 *
 * <p>One instance names one phase: an {@code ObservationConvention} has one name for all the
 * contexts it supports.
 */
public class DefaultDistLockObservationConvention implements DistLockObservationConvention {

	/** The convention of {@code distlock.acquire}. */
	public static final DefaultDistLockObservationConvention ACQUIRE = new DefaultDistLockObservationConvention(
			Phase.ACQUIRE);

	/** The convention of {@code distlock.hold}. */
	public static final DefaultDistLockObservationConvention HOLD = new DefaultDistLockObservationConvention(
			Phase.HOLD);

	private final Phase phase;

	/** @param phase the observation this convention names */
	public DefaultDistLockObservationConvention(Phase phase) {
		this.phase = phase;
	}

	@Override
	public boolean supportsContext(Observation.Context context) {
		return context instanceof DistLockObservationContext lock && lock.getPhase() == this.phase;
	}

	@Override
	public String getName() {
		return (this.phase == Phase.ACQUIRE) ? "distlock.acquire" : "distlock.hold";
	}

	@Override
	public String getContextualName(DistLockObservationContext context) {
		return ((this.phase == Phase.ACQUIRE) ? "acquire " : "hold ") + context.getLockName();
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(DistLockObservationContext context) {
		KeyValues values = KeyValues.of(LowCardinalityKeyNames.LOCK.withValue(context.getLockName()),
				LowCardinalityKeyNames.REGISTRY.withValue(context.getRegistry()));
		return (this.phase == Phase.ACQUIRE) ? values.and(LowCardinalityKeyNames.OUTCOME.withValue(outcome(context)))
				: values;
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(DistLockObservationContext context) {
		return KeyValues.of(HighCardinalityKeyNames.KEYS.withValue(String.join(",", context.getKeys())));
	}

	/** @return the outcome as the {@code distlock.acquire} timer tags it, once the wait has ended */
	private static String outcome(DistLockObservationContext context) {
		if (context.isCancelled()) {
			return "cancelled";
		}
		DistributedLockObserver.Outcome outcome = context.getOutcome();
		return (outcome != null) ? outcome.name().toLowerCase(Locale.ROOT) : "unknown";
	}

}
