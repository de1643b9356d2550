package io.distlock.aop;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The Micrometer observations of {@code @DistributedLock} calls, their names and key names, as
 * Spring's own instrumentations document theirs. {@link DefaultDistLockObservationConvention} gives
 * them their values.
 *
 * <p>The meters {@code distlock.acquire} and {@code distlock.held} are not recorded from these
 * observations (their names and tags predate them, and dashboards query them): distlock records
 * them itself, and its auto-configuration keeps Spring Boot's default meter handler from recording
 * the observations a second time.
 */
public enum DistLockObservationDocumentation implements ObservationDocumentation {

	/**
	 * The wait for a call's locks: started before the first lock is asked for, stopped when all are
	 * taken or the wait ends, with its outcome; an exception from the lock's backend is its error.
	 */
	ACQUIRE {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultDistLockObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return LowCardinalityKeyNames.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return HighCardinalityKeyNames.values();
		}

	},

	/**
	 * The hold of a call's locks, from their acquisition to their release: around the method's work,
	 * until the future or the {@code Mono}/{@code Flux} of a method whose work ends later ends. An
	 * exception of the method, or the loss of a hold reported at release, is its error. Its parent is
	 * the caller's observation, as the acquisition's is; on a blocking or future-returning method it
	 * is the current observation while the method runs, so the spans the method starts are its children.
	 */
	HOLD {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultDistLockObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return new KeyName[] { LowCardinalityKeyNames.LOCK, LowCardinalityKeyNames.REGISTRY };
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return HighCardinalityKeyNames.values();
		}

	};

	/** Key names with few values: safe as metrics tags. */
	public enum LowCardinalityKeyNames implements KeyName {

		/** The logical lock name: the annotation's {@code name}, or {@code SimpleClassName.method}. */
		LOCK {
			@Override
			public String asString() {
				return "distlock.lock";
			}
		},

		/** The registry's bean name, or {@code default} for the application's default registry. */
		REGISTRY {
			@Override
			public String asString() {
				return "distlock.registry";
			}
		},

		/**
		 * How the wait ended: {@code acquired}, {@code timed_out} or {@code failed} as the
		 * {@code distlock.acquire} timer's {@code outcome} tag, {@code cancelled} for a subscription
		 * cancelled while it waited, {@code unknown} while it lasts.
		 */
		OUTCOME {
			@Override
			public String asString() {
				return "distlock.outcome";
			}
		}

	}

	/** Key names with a value per call: for traces, never metrics tags. */
	public enum HighCardinalityKeyNames implements KeyName {

		/** The resolved lock names, comma-separated in the order they are taken. */
		KEYS {
			@Override
			public String asString() {
				return "distlock.keys";
			}
		}

	}

}
