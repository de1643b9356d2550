package io.distlock.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.embedded.RedisServerProcess;

/**
 * The auto-configuration on a test's own Redis, through a connection factory bean rather than
 * Spring Boot's Redis auto-configuration (whose package differs between the two generations), with
 * no restart grace (the test's server starts empty).
 */
final class OwnRedis {

	private OwnRedis() {
	}

	static ApplicationContextRunner runner(RedisServerProcess server) {
		return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistLockAutoConfiguration.class))
			.withPropertyValues("distlock.restart-grace=0")
			.withBean(RedisConnectionFactory.class,
					() -> new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port())));
	}

}
