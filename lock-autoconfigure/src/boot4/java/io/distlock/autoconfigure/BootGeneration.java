package io.distlock.autoconfigure;

/**
 * The Spring Boot generation these classes are built for, and the names of the Spring Boot classes
 * the shared sources refer to by name whose package that generation decides. Spring Boot 4 moved
 * them out of {@code spring-boot-autoconfigure} and {@code spring-boot-actuator} into modules of
 * their own; lock-autoconfigure-boot3 compiles the same shared sources with its own copy of this
 * class.
 */
final class BootGeneration {

	/** The major version of Spring Boot these classes are compiled against. */
	static final int MAJOR = 4;

	static final String DATA_REDIS_AUTO_CONFIGURATION =
			"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration";

	static final String DATA_SOURCE_AUTO_CONFIGURATION =
			"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration";

	static final String LETTUCE_CLIENT_CONFIGURATION_CUSTOMIZER =
			"org.springframework.boot.data.redis.autoconfigure.LettuceClientConfigurationBuilderCustomizer";

	static final String HEALTH_INDICATOR = "org.springframework.boot.health.contributor.HealthIndicator";

	private BootGeneration() {
	}

}
