package io.distlock.autoconfigure;

/**
 * The Spring Boot generation these classes are built for, 3, and the names of the Spring Boot
 * classes the shared sources refer to by name, in the packages Spring Boot 3.5 keeps them in
 * ({@code spring-boot-autoconfigure} and {@code spring-boot-actuator}); lock-autoconfigure compiles
 * the same shared sources with its Spring Boot 4 copy of this class.
 */
final class BootGeneration {

	/** The major version of Spring Boot these classes are compiled against. */
	static final int MAJOR = 3;

	static final String DATA_REDIS_AUTO_CONFIGURATION =
			"org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration";

	static final String DATA_SOURCE_AUTO_CONFIGURATION =
			"org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration";

	static final String LETTUCE_CLIENT_CONFIGURATION_CUSTOMIZER =
			"org.springframework.boot.autoconfigure.data.redis.LettuceClientConfigurationBuilderCustomizer";

	static final String HEALTH_INDICATOR = "org.springframework.boot.actuate.health.HealthIndicator";

	private BootGeneration() {
	}

}
