package io.distlock.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import io.distlock.testing.RedisServerExtension;

/**
 * The recipe for a {@code @Scheduled} job that must run once per tick across a cluster: three
 * instances with the same fixed-rate job, started a little apart as real instances are, over one
 * Redis. With {@code holdAtLeast} the job ran once per period and never twice at once; without it
 * (the control) a short job releases its lock in milliseconds and the later instances run it again
 * in the same period. {@link ClusterSingleton} is the first recipe under one name.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ScheduledOncePerClusterTests {

	private static final long PERIOD_MS = 1000;

	private static final int PERIODS = 6;

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	/** Every run of either job: when it started, in {@link System#nanoTime()}. */
	static final List<Long> runs = new CopyOnWriteArrayList<>();

	static final AtomicInteger running = new AtomicInteger();

	static final AtomicInteger overlaps = new AtomicInteger();

	@Test
	void withHoldAtLeastTheJobRunsOncePerPeriodAcrossThreeInstances() throws Exception {
		List<Long> starts = runInstances("kept");
		assertOncePerPeriod(starts);
	}

	@Test
	void clusterSingletonIsTheSameRecipeUnderOneName() throws Exception {
		List<Long> starts = runInstances("singleton");
		assertOncePerPeriod(starts);
	}

	@Test
	void withoutHoldAtLeastTheLaterInstancesRunItAgainInTheSamePeriod() throws Exception {
		List<Long> starts = runInstances("released");
		assertThat(overlaps).as("the lock still keeps runs apart").hasValue(0);
		// More runs than the recipe ever allows (one a period, give or take one at the edges). Not "three a
		// period": instances whose ticks fall within one run of each other still skip each other, and
		// where the ticks fall depends on how long each instance took to start.
		assertThat(starts.size()).as("runs in %d periods", PERIODS).isGreaterThan(PERIODS + 1);
	}

	private static void assertOncePerPeriod(List<Long> starts) {
		assertThat(overlaps).hasValue(0);
		assertThat(starts).hasSizeBetween(PERIODS - 1, PERIODS + 1);
		for (int i = 1; i < starts.size(); i++) {
			assertThat(Duration.ofNanos(starts.get(i) - starts.get(i - 1)))
				.as("run %d came %d ms after the one before", i, (starts.get(i) - starts.get(i - 1)) / 1_000_000)
				// The lock keeps acquisitions 800 ms apart; a run is recorded a little after its acquisition, by
				// as much as a loaded machine delays a thread (35 ms seen beside three builds). Instances tick
				// 300 ms apart, so without holdAtLeast runs come 300 ms apart or less.
				.isGreaterThanOrEqualTo(Duration.ofMillis(600));
		}
	}

	private static List<Long> runInstances(String job) throws InterruptedException {
		runs.clear();
		overlaps.set(0);
		List<ConfigurableApplicationContext> instances = new ArrayList<>();
		try {
			for (int i = 0; i < 3; i++) {
				instances.add(new SpringApplicationBuilder(LockTestApplication.class, JobConfiguration.class)
					.web(WebApplicationType.NONE)
					.properties("spring.data.redis.port=" + redis.server().port(),
							"spring.datasource.url=jdbc:h2:mem:scheduled-" + job + i + ";DB_CLOSE_DELAY=-1",
							"distlock.restart-grace=0", "spring.main.banner-mode=off", "test.lock-wait=750ms", "test.job=" + job)
					.run());
				// Instances start a little apart, so their schedulers tick a little apart.
				Thread.sleep(PERIOD_MS * 3 / 10);
			}
			runs.clear();
			Thread.sleep(PERIOD_MS * PERIODS);
			return new ArrayList<>(runs);
		}
		finally {
			instances.forEach(ConfigurableApplicationContext::close);
		}
	}

	/** One of two jobs, chosen by {@code test.job}: the same work, with and without holdAtLeast. */
	static class Jobs {

		private final String job;

		Jobs(String job) {
			this.job = job;
		}

		@Scheduled(fixedRate = PERIOD_MS)
		@DistributedLock(key = "'report-kept'", waitTime = "0s", onFailure = OnLockFailure.SKIP, holdAtLeast = "800ms")
		public void kept() {
			if ("kept".equals(this.job)) {
				work();
			}
		}

		@Scheduled(fixedRate = PERIOD_MS)
		@ClusterSingleton(holdAtLeast = "800ms")
		public void singleton() {
			if ("singleton".equals(this.job)) {
				work();
			}
		}

		@Scheduled(fixedRate = PERIOD_MS)
		@DistributedLock(key = "'report-released'", waitTime = "0s", onFailure = OnLockFailure.SKIP)
		public void released() {
			if ("released".equals(this.job)) {
				work();
			}
		}

		private static void work() {
			if (running.incrementAndGet() > 1) {
				overlaps.incrementAndGet();
			}
			runs.add(System.nanoTime());
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				running.decrementAndGet();
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class JobConfiguration {

		@Bean
		Jobs jobs(org.springframework.core.env.Environment environment) {
			return new Jobs(environment.getProperty("test.job"));
		}

	}

}
