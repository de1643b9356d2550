package io.distlock.autoconfigure;

import java.util.function.Consumer;

import io.lettuce.core.ClientOptions;

import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.autoconfigure.data.redis.RedisConnectionDetails;
import org.springframework.boot.autoconfigure.data.redis.LettuceClientConfigurationBuilderCustomizer;
import org.springframework.boot.autoconfigure.data.redis.LettuceClientOptionsBuilderCustomizer;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceClientConfigurationBuilder;

/**
 * The Spring Boot classes the shared tests use whose package Spring Boot 4 moved, as Spring Boot 3.5
 * names them; lock-autoconfigure's tests get Spring Boot 4's under the same names.
 */
public final class MovedBootTypes {

	/** Spring Boot's auto-configuration of Spring Data Redis. */
	public static final Class<?> DATA_REDIS_AUTO_CONFIGURATION = RedisAutoConfiguration.class;

	/** Spring Boot's connection details of the application's Redis. */
	public static final Class<?> DATA_REDIS_CONNECTION_DETAILS = RedisConnectionDetails.class;

	/** Spring Boot's auto-configuration of a {@code DataSource}. */
	public static final Class<?> DATA_SOURCE_AUTO_CONFIGURATION = DataSourceAutoConfiguration.class;

	/** Spring Boot's auto-configuration of Micrometer's {@code ObservationRegistry} and its handlers. */
	public static final Class<?> OBSERVATION_AUTO_CONFIGURATION = ObservationAutoConfiguration.class;

	/** Spring Boot's auto-configuration of Micrometer metrics, with its default meter observation handler. */
	public static final Class<?> METRICS_AUTO_CONFIGURATION = MetricsAutoConfiguration.class;

	/** The package of Spring Boot's Spring Data Redis support, for a class loader that hides it. */
	public static final String DATA_REDIS_PACKAGE = "org.springframework.boot.autoconfigure.data.redis";

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
