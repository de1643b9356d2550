package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.LockBackendException;
import io.distlock.LockRegistry;
import io.distlock.embedded.RedisServerProcess;

/**
 * {@code distlock.redis.replica-acks} reaches the registry on the application's Redis, and a value
 * no registry can keep stops start-up naming the property.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReplicaAcksAutoConfigurationTests {

	private static RedisServerProcess server;

	@BeforeAll
	static void startServer() {
		server = RedisServerProcess.start();
	}

	@AfterAll
	static void stopServer() {
		server.close();
	}

	private ApplicationContextRunner runner() {
		return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistLockAutoConfiguration.class))
			.withPropertyValues("distlock.restart-grace=0")
			.withBean(RedisConnectionFactory.class,
					() -> new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port())));
	}

	@Test
	void anAcquisitionNoReplicaAcknowledgesFailsNamingTheProperty() {
		runner().withPropertyValues("distlock.redis.replica-acks=1", "distlock.redis.replica-ack-timeout=200ms")
			.run(context -> {
				assertThat(context).hasNotFailed();
				assertThatThrownBy(() -> context.getBean(LockRegistry.class).getLock("acked").tryLock(Duration.ZERO))
					.isInstanceOf(LockBackendException.class)
					.hasMessageContaining("only 0 of 1 replicas acknowledged it within 200 ms")
					.hasMessageContaining("distlock.redis.replica-acks=1");
			});
	}

	@Test
	void withoutReplicaAcksTheSameServerGrantsAtOnce() {
		runner().run(context -> {
			assertThat(context.getBean(LockRegistry.class).getLock("not-acked").tryLock(Duration.ZERO)).isTrue();
		});
	}

	@Test
	void aNegativeCountStopsStartUpNamingTheProperty() {
		runner().withPropertyValues("distlock.redis.replica-acks=-1").run(context -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			while (failure != null && !(failure instanceof InvalidDistLockPropertyException)) {
				failure = failure.getCause();
			}
			assertThat(failure).as("the failure naming the property")
				.isInstanceOf(InvalidDistLockPropertyException.class)
				.hasMessageContaining("Invalid value '-1' for property 'distlock.redis.replica-acks'")
				.hasMessageContaining("must be zero or positive");
		});
	}

}
