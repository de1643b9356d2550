package io.distlock.aop;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names a {@code @DistributedLock} call's observations and gives their key values. To change them,
 * register an implementation that is also a {@code GlobalObservationConvention} with the
 * {@code ObservationRegistry} (Spring Boot does so for such beans), e.g. a subclass of
 * {@link DefaultDistLockObservationConvention} built for the {@linkplain DistLockObservationContext.Phase
 * phase} it names.
 */
public interface DistLockObservationConvention extends ObservationConvention<DistLockObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof DistLockObservationContext;
	}

}
