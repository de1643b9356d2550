package io.distlock.autoconfigure;

import java.util.function.Consumer;

import io.lettuce.core.ClientOptions;

import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientConfigurationBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceClientConfigurationBuilder;

/**
 * The Spring Boot classes the shared tests use whose package Spring Boot 4 moved, as Spring Boot 4
 * names them; lock-autoconfigure-boot3's tests get Spring Boot 3.5's under the same names.
 */
public final class MovedBootTypes {

	/** Spring Boot's auto-configuration of Spring Data Redis. */
	public static final Class<?> DATA_REDIS_AUTO_CONFIGURATION = DataRedisAutoConfiguration.class;

	/** Spring Boot's connection details of the application's Redis. */
	public static final Class<?> DATA_REDIS_CONNECTION_DETAILS = DataRedisConnectionDetails.class;

	/** Spring Boot's auto-configuration of a {@code DataSource}. */
	public static final Class<?> DATA_SOURCE_AUTO_CONFIGURATION = DataSourceAutoConfiguration.class;

	/** Spring Boot's auto-configuration of Micrometer's {@code ObservationRegistry} and its handlers. */
	public static final Class<?> OBSERVATION_AUTO_CONFIGURATION = ObservationAutoConfiguration.class;

	/** Spring Boot's auto-configuration of Micrometer metrics, with its default meter observation handler. */
	public static final Class<?> METRICS_AUTO_CONFIGURATION = MetricsAutoConfiguration.class;

	/** The package of Spring Boot's Spring Data Redis support, for a class loader that hides it. */
	public static final String DATA_REDIS_PACKAGE = "org.springframework.boot.data.redis";

	private MovedBootTypes() {
	}

	/**
	 * @param runner the runner to add the application's Lettuce customizers to
	 * @param client what its {@code LettuceClientConfigurationBuilderCustomizer} does
	 * @param options what its {@code LettuceClientOptionsBuilderCustomizer} does
	 * @return the runner with both customizers as beans
	 */
	public static ApplicationContextRunner withLettuceCustomizers(ApplicationContextRunner runner,
			Consumer<LettuceClientConfigurationBuilder> client, Consumer<ClientOptions.Builder> options) {
		return runner.withBean(LettuceClientConfigurationBuilderCustomizer.class, () -> client::accept)
			.withBean(LettuceClientOptionsBuilderCustomizer.class, () -> options::accept);
	}

}
