package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.distlock.LockRegistryStats;

/**
 * The {@code distlock} health indicator on either Spring Boot generation: Spring Boot's
 * {@code management.health.*} switches turn it off, and what the backend check finds, or fails to
 * find in time, reaches Spring Boot's health as UP or DOWN with its details. This class runs in both
 * builds, so each proves its own generation's health seam.
 */
class DistLockHealthContributorAutoConfigurationTests {

	private static final AtomicInteger databases = new AtomicInteger();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(MovedBootTypes.DATA_SOURCE_AUTO_CONFIGURATION,
				DistLockAutoConfiguration.class, DistLockHealthContributorAutoConfiguration.class))
		.withPropertyValues("spring.datasource.url=jdbc:h2:mem:health-" + databases.incrementAndGet()
				+ ";DB_CLOSE_DELAY=-1", "distlock.backend=jdbc", "distlock.jdbc.create-schema=true");

	@Test
	void aTableLockThatAnswersIsUp() {
		this.runner.run(context -> {
			DistLockHealthIndicator indicator = context.getBean("distlockHealthIndicator", DistLockHealthIndicator.class);
			assertThat(indicator.health().getStatus().getCode()).isEqualTo("UP");
		});
	}

	@Test
	void managementHealthDistlockEnabledFalseTurnsTheIndicatorOff() {
		this.runner.withPropertyValues("management.health.distlock.enabled=false")
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("distlockHealthIndicator"));
	}

	@Test
	void theIndicatorFollowsManagementHealthDefaultsUnlessEnabledByName() {
		this.runner.withPropertyValues("management.health.defaults.enabled=false")
			.run(context -> assertThat(context).doesNotHaveBean("distlockHealthIndicator"));
		this.runner.withPropertyValues("management.health.defaults.enabled=false", "management.health.distlock.enabled=true")
			.run(context -> assertThat(context).hasBean("distlockHealthIndicator"));
	}

	@Test
	void aBackendThatDoesNotAnswerInTimeIsDownWithTheTimeout() {
		DistLockHealthIndicator indicator = new DistLockHealthIndicator(registries(mock(LockRegistryStats.class)),
				Duration.ofMillis(50), check -> {
					// Never runs: the backend hangs.
				});
		assertThat(indicator.health().getStatus().getCode()).isEqualTo("DOWN");
		assertThat(indicator.health().getDetails()).containsEntry("error",
				"the lock backend did not answer within 50ms");
	}

	@Test
	void aCheckThatFailsIsDownWithItsFailureAsSpringBootWordsIt() {
		LockRegistryStats stats = mock(LockRegistryStats.class);
		given(stats.backendHealth()).willThrow(new IllegalStateException("no route to the lock backend"));
		DistLockHealthIndicator indicator = new DistLockHealthIndicator(registries(stats), Duration.ofSeconds(5),
				Runnable::run);
		assertThat(indicator.health().getStatus().getCode()).isEqualTo("DOWN");
		assertThat(indicator.health().getDetails()).containsEntry("error",
				"java.lang.IllegalStateException: no route to the lock backend");
	}

	private static LockRegistries registries(LockRegistryStats stats) {
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerSingleton("lockRegistry", stats);
		return new LockRegistries(beanFactory, beanFactory.getBeanProvider(LockRegistryStats.class));
	}

}
