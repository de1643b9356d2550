package io.distlock.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;

import io.distlock.aop.DistLockObservationContext;
import io.distlock.aop.DistributedLockObserver;
import io.distlock.LockRegistry;
import io.distlock.LockRegistryStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import io.micrometer.observation.Observation;

/**
 * Micrometer meters for distlock, when Micrometer is present:
 * <ul>
 * <li>{@code distlock.acquire} (timer; tags {@code lock}, {@code outcome} = acquired, timed_out,
 * failed): how long {@code @DistributedLock} calls took to get their locks;</li>
 * <li>{@code distlock.held} (timer; tag {@code lock}): how long they held them;</li>
 * <li>{@code distlock.holds.active}, {@code distlock.waiters} (gauges): holds and waiting threads
 * of this instance now;</li>
 * <li>{@code distlock.watchdog.renewals}, {@code distlock.watchdog.failures},
 * {@code distlock.holds.lost} (counters);</li>
 * <li>{@code distlock.restart.grace} (gauge, seconds): what is left of a restart grace the lock server
 * refused this instance's acquisitions for, 0 when none.</li>
 * </ul>
 * The {@code lock} tag is the annotation's {@code name}, or {@code SimpleClassName.method}: never
 * the resolved key, so per-order keys cannot explode the number of series. Every meter is also
 * tagged {@code registry}: {@code default} for the application's registry, the bean name for the
 * others ({@code @DistributedLock(registry = ...)}).
 *
 * <p>The two timers are the meters of the {@code distlock.acquire} and {@code distlock.hold}
 * observations: {@code distlock.acquire} with their key values {@code distlock.lock},
 * {@code distlock.registry} and {@code distlock.outcome} as the tags {@code lock}, {@code registry} and
 * {@code outcome}, and {@code distlock.held}. They are recorded here, with the names and tags they had
 * before the observations existed and dashboards query; Spring Boot's default meter handler would
 * time the observations again: every acquisition a second time in {@code distlock.acquire}, under
 * other tags (which Prometheus' older client refuses, and which sums over the timer count twice), and
 * {@code distlock.hold} besides. So a meter handler of distlock's, which records nothing, takes them first.
 */
@AutoConfiguration(after = DistLockAutoConfiguration.class)
@ConditionalOnClass(MeterRegistry.class)
public class DistLockMetricsAutoConfiguration {

	@Bean
	@ConditionalOnBean(LockRegistryStats.class)
	MeterBinder distLockRegistryMeters(ListableBeanFactory beanFactory, ObjectProvider<LockRegistryStats> defaultStats) {
		LockRegistries registries = new LockRegistries(beanFactory, defaultStats);
		return meters -> registries.all().forEach((name, stats) -> {
			Gauge.builder("distlock.holds.active", stats, LockRegistryStats::activeHolds)
				.description("Locks held by this instance's threads now")
				.tag("registry", name)
				.register(meters);
			Gauge.builder("distlock.waiters", stats, LockRegistryStats::waitingThreads)
				.description("Threads of this instance waiting for a lock now")
				.tag("registry", name)
				.register(meters);
			FunctionCounter.builder("distlock.watchdog.renewals", stats, LockRegistryStats::watchdogRenewals)
				.description("Leases renewed by the watchdog")
				.tag("registry", name)
				.register(meters);
			FunctionCounter.builder("distlock.watchdog.failures", stats, LockRegistryStats::watchdogRenewalFailures)
				.description("Lease renewals that failed because the backend could not be reached")
				.tag("registry", name)
				.register(meters);
			FunctionCounter.builder("distlock.holds.lost", stats, LockRegistryStats::lostHolds)
				.description("Holds lost before their owner released them")
				.tag("registry", name)
				.register(meters);
			if (stats instanceof LockRegistry locks) {
				Gauge.builder("distlock.restart.grace", locks, DistLockMetricsAutoConfiguration::restartGraceLeft)
					.description("Seconds left of the restart grace the lock server served this instance's last "
							+ "refused acquisition; 0 when none")
					.baseUnit("seconds")
					.tag("registry", name)
					.register(meters);
			}
		});
	}


	private static double restartGraceLeft(LockRegistry locks) {
		return locks.restartGraceEnds()
			.map(ends -> Math.max(0, Duration.between(Instant.now(), ends).toMillis()) / 1000.0)
			.orElse(0.0);
	}

	@Bean
	DistributedLockObserver distLockMetricsObserver(ObjectProvider<MeterRegistry> registries) {
		return new MicrometerObserver(registries);
	}

	/**
	 * Spring Boot gives each observation to the first of the application's {@link MeterObservationHandler}s
	 * that supports it, in bean order (Boot 4's {@code ObservationHandlerGroup} of meter handlers, Boot
	 * 3.5's {@code ObservationHandlerGrouping}: a {@code FirstMatchingCompositeObservationHandler}, whose
	 * members tracing only wraps); this one, first, takes distlock's, so the default one never times them.
	 * It needs no {@code MeterRegistry} bean, and is inert where nothing collects observation handlers.
	 */
	@Bean
	DistLockMeterObservationHandler distLockMeterObservationHandler() {
		return new DistLockMeterObservationHandler();
	}

	/**
	 * The meter handler of distlock's observations, which records nothing: their meters are
	 * {@link MicrometerObserver}'s, with the names and tags dashboards know.
	 */
	static final class DistLockMeterObservationHandler
			implements MeterObservationHandler<DistLockObservationContext>, Ordered {

		@Override
		public boolean supportsContext(Observation.Context context) {
			return context instanceof DistLockObservationContext;
		}

		@Override
		public int getOrder() {
			return Ordered.HIGHEST_PRECEDENCE;
		}

	}

	/** Records {@code @DistributedLock} timings into every meter registry. */
	static final class MicrometerObserver implements DistributedLockObserver {

		private final ObjectProvider<MeterRegistry> registries;

		MicrometerObserver(ObjectProvider<MeterRegistry> registries) {
			this.registries = registries;
		}

		@Override
		public void acquisition(String logicalName, Outcome outcome, Duration waited) {
			acquisition(logicalName, LockRegistries.DEFAULT, outcome, waited);
		}

		@Override
		public void acquisition(String logicalName, String lockRegistry, Outcome outcome, Duration waited) {
			this.registries.forEach(registry -> Timer.builder("distlock.acquire")
				.description("Time @DistributedLock methods took to acquire their locks")
				.tag("lock", logicalName)
				.tag("registry", lockRegistry)
				.tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
				.register(registry)
				.record(waited));
		}

		@Override
		public void released(String logicalName, Duration heldFor) {
			released(logicalName, LockRegistries.DEFAULT, heldFor);
		}

		@Override
		public void released(String logicalName, String lockRegistry, Duration heldFor) {
			this.registries.forEach(registry -> Timer.builder("distlock.held")
				.description("Time @DistributedLock methods held their locks")
				.tag("lock", logicalName)
				.tag("registry", lockRegistry)
				.register(registry)
				.record(heldFor));
		}

	}

}
