package io.distlock.docs;

import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;

import io.distlock.LostHold;
import io.distlock.aop.DistLockObservationContext;
import io.distlock.autoconfigure.LockLostEvent;
import io.micrometer.observation.ObservationPredicate;

/**
 * The code of {@code docs/operations.md}, compiled; see {@link DocsSnippetsTests}.
 */
@SuppressWarnings("unused")
class OperationsSnippets {

	interface Alerts {

		void raise(String message);

	}

	private final Alerts alerts = message -> {
	};

	// tag::lost-event[]
	@EventListener
	void onLost(LockLostEvent event) {
		LostHold lost = event.getLostHold();
		alerts.raise("lock " + lost.lockName() + " lost: " + lost.reason());
	}
	// end::lost-event[]

	// tag::observation-predicate[]
	@Bean
	ObservationPredicate noLockObservations() {
		return (name, context) -> !(context instanceof DistLockObservationContext);
	}
	// end::observation-predicate[]

}
