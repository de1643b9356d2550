package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.distlock.annotation.DistributedLock;
import io.distlock.aop.DistLockObservationContext;
import io.distlock.testing.RedisServerExtension;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.ObservationContextAssert;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * With Spring Boot's observation and metrics auto-configurations, a locked call is observed (a
 * tracer's handler gets {@code distlock.acquire} and {@code distlock.hold}) while its meters keep
 * their names and tags: Boot's default meter handler records no second {@code distlock.acquire}
 * series, under other tags, that would count every acquisition twice.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DistLockMetricsObservationTests {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	private final ApplicationContextRunner runner = OwnRedis.runner(redis.server())
		.withConfiguration(AutoConfigurations.of(DistLockAopAutoConfiguration.class,
				DistLockMetricsAutoConfiguration.class, MovedBootTypes.OBSERVATION_AUTO_CONFIGURATION,
				MovedBootTypes.METRICS_AUTO_CONFIGURATION))
		.withBean(PrometheusMeterRegistry.class, () -> new PrometheusMeterRegistry(PrometheusConfig.DEFAULT))
		.withBean(RecordingHandler.class)
		.withBean(Orders.class);

	@Test
	void aLockedCallKeepsItsMetersAndReachesTheApplicationsObservationHandlers() {
		this.runner.run(context -> {
			assertThat(context.getBean(ObservationRegistry.class).isNoop()).isFalse();
			context.getBean(Orders.class).place("42");

			PrometheusMeterRegistry meters = context.getBean(PrometheusMeterRegistry.class);
			assertThat(meters.find("distlock.acquire").meters()).singleElement()
				.satisfies(acquire -> assertThat(tagKeys(acquire)).containsExactlyInAnyOrder("lock", "registry",
						"outcome"));
			assertThat(meters.get("distlock.acquire")
				.tags("lock", "orders", "registry", "default", "outcome", "acquired")
				.timer()
				.count()).isEqualTo(1);
			assertThat(meters.find("distlock.held").meters()).singleElement()
				.satisfies(held -> assertThat(tagKeys(held)).containsExactlyInAnyOrder("lock", "registry"));
			assertThat(meters.getMeters()).extracting(meter -> meter.getId().getName())
				.doesNotContain("distlock.hold", "distlock.acquire.active", "distlock.hold.active");
			assertThat(meters.scrape()).containsOnlyOnce("# TYPE distlock_acquire_seconds ")
				.contains("distlock_acquire_seconds_count{lock=\"orders\",outcome=\"acquired\",registry=\"default\"}");

			RecordingHandler handler = context.getBean(RecordingHandler.class);
			assertThat(handler.stopped).extracting(Observation.Context::getName)
				.containsExactly("distlock.acquire", "distlock.hold");
			ObservationContextAssert.assertThat(handler.stopped.poll())
				.hasLowCardinalityKeyValue("distlock.lock", "orders")
				.hasLowCardinalityKeyValue("distlock.registry", "default")
				.hasLowCardinalityKeyValue("distlock.outcome", "acquired")
				.hasHighCardinalityKeyValue("distlock.keys", "orders:order:42");
			ObservationContextAssert.assertThat(handler.stopped.poll())
				.hasLowCardinalityKeyValue("distlock.lock", "orders")
				.hasLowCardinalityKeyValue("distlock.registry", "default");
		});
	}

	@Test
	void observationsTurnedOffByBootsPropertyLeaveTheMeters() {
		this.runner.withPropertyValues("management.observations.enable.distlock=false").run(context -> {
			context.getBean(Orders.class).place("42");

			assertThat(context.getBean(RecordingHandler.class).stopped).isEmpty();
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("distlock.acquire").tags("lock", "orders", "outcome", "acquired").timer().count())
				.isEqualTo(1);
			assertThat(meters.get("distlock.held").tags("lock", "orders").timer().count()).isEqualTo(1);
		});
	}

	private static List<String> tagKeys(Meter meter) {
		return meter.getId().getTags().stream().map(Tag::getKey).toList();
	}

	/** What a tracer's handler would be given: every context of distlock's observations. */
	static class RecordingHandler implements ObservationHandler<DistLockObservationContext> {

		final Queue<DistLockObservationContext> stopped = new ConcurrentLinkedQueue<>();

		@Override
		public void onStop(DistLockObservationContext context) {
			this.stopped.add(context);
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			return context instanceof DistLockObservationContext;
		}

	}

	static class Orders {

		@DistributedLock(name = "orders", key = "'order:' + #id")
		public String place(String id) {
			return id;
		}

	}

}
