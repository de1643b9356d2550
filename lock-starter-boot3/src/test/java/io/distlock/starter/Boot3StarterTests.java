package io.distlock.starter;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.distlock.LockRegistry;
import io.distlock.annotation.DistributedLock;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.testing.RedisServerExtension;

/**
 * The Spring Boot 3.5 starter as an application gets it: only the starter's dependencies, Spring
 * Boot's own auto-configuration, and two instances of an application whose locked method would lose
 * updates to a shared count without the lock (the control runs the same method unlocked).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class Boot3StarterTests {

	private static final int THREADS_PER_INSTANCE = 4;

	private static final int CALLS_PER_THREAD = 25;

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	@Test
	void twoInstancesOnSpringBoot35NeverRunTheLockedMethodAtOnce() throws Exception {
		assertThat(SpringBootVersion.getVersion()).startsWith("3.5.");
		Counter.reset();
		try (ConfigurableApplicationContext first = instance(); ConfigurableApplicationContext second = instance()) {
			assertThat(first.getBean(LockRegistry.class)).isInstanceOf(RedisLockRegistry.class);
			run(first.getBean(CountingService.class), second.getBean(CountingService.class), true);
		}
		assertThat(Counter.value).isEqualTo(2 * THREADS_PER_INSTANCE * CALLS_PER_THREAD);
	}

	@Test
	void theSameMethodWithoutTheLockLosesUpdates() throws Exception {
		Counter.reset();
		try (ConfigurableApplicationContext first = instance(); ConfigurableApplicationContext second = instance()) {
			run(first.getBean(CountingService.class), second.getBean(CountingService.class), false);
		}
		assertThat(Counter.value).isLessThan(2 * THREADS_PER_INSTANCE * CALLS_PER_THREAD);
	}

	private static void run(CountingService first, CountingService second, boolean locked) throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(2 * THREADS_PER_INSTANCE);
		try {
			List<Future<?>> calls = new ArrayList<>();
			for (int i = 0; i < 2 * THREADS_PER_INSTANCE; i++) {
				CountingService service = (i % 2 == 0) ? first : second;
				calls.add(threads.submit(() -> {
					for (int call = 0; call < CALLS_PER_THREAD; call++) {
						if (locked) {
							service.incrementLocked();
						}
						else {
							service.increment();
						}
					}
					return null;
				}));
			}
			for (Future<?> call : calls) {
				call.get(90, TimeUnit.SECONDS);
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	private static ConfigurableApplicationContext instance() {
		return new SpringApplicationBuilder(Instance.class).web(WebApplicationType.NONE)
			.properties("spring.data.redis.port=" + redis.server().port(), "distlock.restart-grace=0",
					"distlock.wait-time=30s")
			.run();
	}

	/** One application instance: Spring Boot's auto-configuration and the service. */
	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class Instance {

		@Bean
		CountingService countingService() {
			return new CountingService();
		}

	}

	/** A read-modify-write of a shared count, with a pause that lets a second caller in. */
	static class CountingService {

		@DistributedLock(key = "'count'")
		public void incrementLocked() throws InterruptedException {
			increment();
		}

		public void increment() throws InterruptedException {
			int seen = Counter.value;
			Thread.sleep(1);
			Counter.value = seen + 1;
		}

	}

	/** The count both instances share, as a database row would be. */
	static final class Counter {

		static volatile int value;

		static void reset() {
			value = 0;
		}

	}

}
