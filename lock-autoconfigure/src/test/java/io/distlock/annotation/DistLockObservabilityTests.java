package io.distlock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import io.distlock.DistLock;
import io.distlock.DistReadWriteLock;
import io.distlock.DistSemaphore;
import io.distlock.annotation.LockAcquisitionException;
import io.distlock.LockRegistry;
import io.distlock.annotation.LockedServices.Blocking;
import io.distlock.annotation.LockedServices.Busy;
import io.distlock.annotation.LockedServices.KeyForms;
import io.distlock.annotation.LockedServices.LockEvents;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.RedisServerExtension;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * What an operator sees: Micrometer meters, the Actuator endpoint and health over real HTTP, and
 * lost holds as events and warnings, with a real Redis.
 */
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DistLockObservabilityTests {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private final HttpClient http = HttpClient.newHttpClient();

	@AfterEach
	void close() {
		this.threads.shutdownNow();
		this.contexts.forEach(ConfigurableApplicationContext::close);
	}

	private ConfigurableApplicationContext startWeb(String... extra) {
		List<String> properties = new ArrayList<>(List.of("spring.data.redis.port=" + redis.server().port(),
				"spring.datasource.url=jdbc:h2:mem:observability;DB_CLOSE_DELAY=-1", "test.lock-wait=750ms",
				// Each test flushes Redis, which a restart grace would rightly treat as lost data.
				"distlock.restart-grace=0",
				"spring.main.banner-mode=off", "server.port=0",
				"management.endpoints.web.exposure.include=distlock,health",
				"management.endpoint.health.show-details=always"));
		properties.addAll(List.of(extra));
		ConfigurableApplicationContext context = new SpringApplicationBuilder(LockTestApplication.class)
			.web(WebApplicationType.SERVLET)
			.properties(properties.toArray(String[]::new))
			.run();
		this.contexts.add(context);
		return context;
	}

	private String get(ConfigurableApplicationContext context, String path) throws Exception {
		int port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
		HttpResponse<String> response = this.http.send(
				HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).GET().build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as("GET %s: %s", path, response.body()).isEqualTo(200);
		return response.body();
	}

	@Test
	void metersAreTaggedByLockNameNeverByKey() throws Exception {
		ConfigurableApplicationContext context = startWeb();
		KeyForms forms = context.getBean(KeyForms.class);
		forms.named("42");
		forms.named("43");
		forms.byName("x");
		Busy busy = context.getBean(Busy.class);
		DistLock held = context.getBean(LockRegistry.class).getLock("busy");
		assertThat(this.threads.submit(() -> held.tryLock()).get(10, TimeUnit.SECONDS)).isTrue();
		assertThatThrownBy(busy::throwing).isInstanceOf(LockAcquisitionException.class);

		MeterRegistry meters = context.getBean(MeterRegistry.class);
		assertThat(meters.get("distlock.acquire").tags("lock", "orders", "outcome", "acquired").timer().count()).isEqualTo(2);
		assertThat(meters.get("distlock.held").tags("lock", "orders").timer().count()).isEqualTo(2);
		assertThat(meters.get("distlock.acquire").tags("lock", "KeyForms.byName", "outcome", "acquired").timer().count())
			.isEqualTo(1);
		assertThat(meters.get("distlock.acquire").tags("lock", "Busy.throwing", "outcome", "timed_out").timer().count())
			.isEqualTo(1);
		assertThat(meters.find("distlock.acquire").meters())
			.allSatisfy(meter -> assertThat(meter.getId().getTag("lock")).doesNotContain("42", "43", "x"));
		assertThat(meters.get("distlock.holds.active").gauge().value()).isEqualTo(1);
		assertThat(meters.get("distlock.watchdog.renewals").functionCounter()).isNotNull();
		assertThat(meters.get("distlock.holds.lost").functionCounter().count()).isZero();
	}

	@Test
	void endpointListsReadHoldsWriteHoldsAndPermitsWithTheirKind() throws Exception {
		ConfigurableApplicationContext context = startWeb();
		LockRegistry registry = context.getBean(LockRegistry.class);
		DistReadWriteLock report = registry.getReadWriteLock("report");
		report.writeLock().lock();
		// A downgrade: this thread holds the write lock and the read lock.
		report.readLock().lock();
		DistSemaphore payments = registry.getSemaphore("payments", 3);
		payments.acquire();
		try {
			String body = get(context, "/actuator/distlock");
			assertThat(body).contains("\"lock\":\"report\"")
				.contains("\"kind\":\"write\"")
				.contains("\"kind\":\"read\"")
				.contains("\"lock\":\"payments\"")
				.contains("\"kind\":\"permit\"")
				.doesNotContain("\"kind\":\"exclusive\"");
		}
		finally {
			payments.release();
			report.readLock().unlock();
			report.writeLock().unlock();
		}
	}

	@Test
	void endpointShowsHoldsWithTheirMethodAndWaitersOverHttp() throws Exception {
		ConfigurableApplicationContext context = startWeb();
		Blocking blocking = context.getBean(Blocking.class);
		CountDownLatch entered = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		this.threads.submit(() -> {
			blocking.hold("7", entered, release);
			return null;
		});
		assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
		CountDownLatch secondEntered = new CountDownLatch(1);
		this.threads.submit(() -> {
			blocking.hold("7", secondEntered, new CountDownLatch(0));
			return null;
		});
		LockRegistry registry = context.getBean(LockRegistry.class);
		await().atMost(Duration.ofSeconds(10))
			.until(() -> ((io.distlock.LockRegistryStats) registry).waiters().getOrDefault("report:7", 0) == 1);

		String body = get(context, "/actuator/distlock");
		assertThat(body).contains("\"name\":\"Blocking.hold\"")
			.contains("\"lock\":\"report:7\"")
			.contains("Blocking.hold(String, CountDownLatch, CountDownLatch)")
			.contains("\"fencingToken\":")
			.contains("\"leaseLeft\":")
			.contains("\"kind\":\"exclusive\"")
			.contains("\"waiters\":{\"report:7\":1}")
			.contains("\"restartGrace\":{}");

		release.countDown();
		assertThat(secondEntered.await(10, TimeUnit.SECONDS)).isTrue();
		await().atMost(Duration.ofSeconds(10)).until(() -> registry.heldLocks().isEmpty());
		assertThat(get(context, "/actuator/distlock")).contains("\"holds\":[]");
	}

	@Test
	void aRestartGraceTheServerServesIsShownByAGaugeAndTheEndpoint() throws Exception {
		// The test's server started less than an hour ago and holds no fencing counter: it serves the grace.
		ConfigurableApplicationContext context = startWeb("distlock.restart-grace=1h");
		MeterRegistry meters = context.getBean(MeterRegistry.class);
		assertThat(meters.get("distlock.restart.grace").tags("registry", "default").gauge().value()).isZero();

		assertThatThrownBy(context.getBean(Busy.class)::throwing).isInstanceOf(LockAcquisitionException.class)
			.hasMessageContaining("restart grace");

		assertThat(meters.get("distlock.restart.grace").tags("registry", "default").gauge().value())
			.isBetween(60.0, 3600.0);
		assertThat(get(context, "/actuator/distlock")).contains("\"restartGrace\":{\"default\":\"");
	}

	@Test
	void healthReportsTheBackendWithoutTakingLocks() throws Exception {
		ConfigurableApplicationContext context = startWeb();
		String health = get(context, "/actuator/health/distlock");
		assertThat(health).contains("\"status\":\"UP\"").contains("\"ping\":\"PONG\"");
		assertThat(redis.server().query("KEYS", "distlock:*")).isBlank();
	}

	@Test
	void healthAnswersWithinItsTimeoutWhenRedisIsFrozen() throws Exception {
		RedisServerProcess frozen = RedisServerProcess.start();
		try {
			ConfigurableApplicationContext context = startWeb("spring.data.redis.port=" + frozen.port(),
					"distlock.health.timeout=500ms");
			int port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
			HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/actuator/health/distlock"))
				.GET().build();
			// The first check opens the connection, which on a loaded machine may take longer than the bound.
			await().atMost(Duration.ofSeconds(30))
				.until(() -> this.http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
			frozen.pause();
			long start = System.nanoTime();
			HttpResponse<String> down = this.http.send(request, HttpResponse.BodyHandlers.ofString());
			// Lettuce would wait 60 s; the bound is 500 ms, with room for a loaded machine.
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
			assertThat(down.statusCode()).isEqualTo(503);
			assertThat(down.body()).contains("\"status\":\"DOWN\"").contains("did not answer within 500ms");
			// A probe while the first check still hangs does not start another one, and answers as fast.
			assertThat(this.http.send(request, HttpResponse.BodyHandlers.ofString()).body()).contains("did not answer");
			frozen.resume();
			await().atMost(Duration.ofSeconds(30))
				.until(() -> this.http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
		}
		finally {
			frozen.close();
		}
	}

	@Test
	void aLostHoldIsPublishedAsAnEventAndWarnedAboutWithItsMethod(CapturedOutput output) throws Exception {
		ConfigurableApplicationContext context = startWeb("distlock.watchdog.timeout=300ms");
		Blocking blocking = context.getBean(Blocking.class);
		CountDownLatch entered = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		var call = this.threads.submit(() -> {
			blocking.hold("9", entered, release);
			return null;
		});
		assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
		redis.server().command("DEL", "distlock:{report:9}");

		LockEvents events = context.getBean(LockEvents.class);
		await().atMost(Duration.ofSeconds(5)).until(() -> !events.lost().isEmpty());
		assertThat(events.lost().get(0).getLostHold().lockName()).isEqualTo("report:9");
		assertThat(output).contains("Lock 'report:9'").contains("in Blocking.hold(String, CountDownLatch, CountDownLatch)")
			.contains("was lost");
		release.countDown();
		// The method's caller learns that its exclusivity was in doubt.
		assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(io.distlock.LockLostException.class);
	}

}
