package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * distlock's starter for one Spring Boot generation stops an application of the other at start-up,
 * naming the starter to use; on its own generation it passes. This class runs in both builds, so
 * each proves its own generation passes.
 */
class SpringBootGenerationCheckTests {

	@Test
	void theBuildKnowsTheGenerationItRunsOn() {
		assertThat(SpringBootVersion.getVersion()).startsWith(SpringBootGenerationCheck.BUILT_FOR_BOOT_MAJOR + ".");
	}

	@Test
	void everySpringApplicationRunsTheCheckAndItPassesOnItsOwnGeneration() {
		assertThat(new SpringApplication(Object.class).getInitializers())
			.hasAtLeastOneElementOfType(SpringBootGenerationCheck.class);
		new ApplicationContextRunner().withInitializer(new SpringBootGenerationCheck())
			.withConfiguration(AutoConfigurations.of(DistLockAutoConfiguration.class))
			.withPropertyValues("distlock.enabled=false")
			.run(context -> assertThat(context).hasNotFailed());
	}

	@Test
	void theBootFourStarterOnBootThreeNamesTheBootThreeStarter() {
		FailureAnalysis analysis = analysis(4, "3.5.16");
		assertThat(analysis.getDescription()).contains(
				"distlock's io.distlock:lock-starter is built for Spring Boot 4; this application runs Spring Boot 3.5.16");
		assertThat(analysis.getAction())
			.startsWith("Use io.distlock:lock-starter-boot3 instead of io.distlock:lock-starter")
			.contains("io.distlock:lock-autoconfigure-boot3 instead of io.distlock:lock-autoconfigure");
	}

	@Test
	void theBootThreeStarterOnBootFourNamesTheBootFourStarter() {
		FailureAnalysis analysis = analysis(3, "4.1.1");
		assertThat(analysis.getDescription()).contains(
				"distlock's io.distlock:lock-starter-boot3 is built for Spring Boot 3; this application runs Spring Boot 4.1.1");
		assertThat(analysis.getAction()).startsWith("Use io.distlock:lock-starter instead of io.distlock:lock-starter-boot3");
	}

	@Test
	void aGenerationDistlockHasNoStarterForNamesBoth() {
		assertThat(analysis(4, "2.7.18").getAction()).contains("Spring Boot 3.5 with io.distlock:lock-starter-boot3",
				"Spring Boot 4 with io.distlock:lock-starter");
	}

	@Test
	void theSameGenerationOrAnUnknownVersionPasses() {
		assertThatNoException().isThrownBy(() -> SpringBootGenerationCheck.check(4, "4.1.1"));
		assertThatNoException().isThrownBy(() -> SpringBootGenerationCheck.check(3, "3.5.16"));
		assertThatNoException().isThrownBy(() -> SpringBootGenerationCheck.check(4, "4.2.0-SNAPSHOT"));
		assertThatNoException().isThrownBy(() -> SpringBootGenerationCheck.check(4, null));
		assertThatNoException().isThrownBy(() -> SpringBootGenerationCheck.check(4, "unknown"));
	}

	private static FailureAnalysis analysis(int builtFor, String running) {
		WrongSpringBootGenerationException failure = catchThrowableOfType(WrongSpringBootGenerationException.class,
				() -> SpringBootGenerationCheck.check(builtFor, running));
		assertThat(failure).as("failure on %s for Spring Boot %s", running, builtFor).isNotNull();
		FailureAnalysis analysis = new WrongSpringBootGenerationFailureAnalyzer()
			.analyze(new IllegalStateException("start-up failed", failure));
		assertThat(analysis).isNotNull();
		return analysis;
	}

}
