package io.distlock.autoconfigure.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

import io.distlock.DistLock;
import io.distlock.LockRegistry;
import io.distlock.autoconfigure.DistLockAutoConfiguration;
import io.distlock.autoconfigure.ImportDataRedisAutoConfiguration;
import io.distlock.autoconfigure.MovedBootTypes;
import io.distlock.autoconfigure.RedlockConnectionDetails;
import io.distlock.embedded.RedisContainerImage;
import io.distlock.redlock.RedlockLockRegistry;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * Redlock configured the way Spring Boot teams configure their Redis in tests: three containers are
 * the masters through one {@link RedlockConnectionDetails} bean, with no
 * {@code distlock.redlock.nodes}; a fourth, {@code @ServiceConnection}, stays the application's own
 * Redis. Skipped where no Docker engine runs.
 */
@Testcontainers(disabledWithoutDocker = true)
@SpringBootTest(classes = RedlockOnTestcontainersTests.Application.class, properties = "distlock.restart-grace=0")
class RedlockOnTestcontainersTests {

	@Container
	static final GenericContainer<?> node1 = RedisContainerImage.container();

	@Container
	static final GenericContainer<?> node2 = RedisContainerImage.container();

	@Container
	static final GenericContainer<?> node3 = RedisContainerImage.container();

	@Container
	@ServiceConnection(name = "redis")
	static final GenericContainer<?> applicationRedis = RedisContainerImage.container();

	@Autowired
	private ApplicationContext context;

	@Autowired
	private LockRegistry registry;

	@Test
	void containersAnnotatedAsRedlockNodesAreTheMastersAndTheApplicationsRedisStaysItsOwn() throws Exception {
		assertThat(this.registry).isInstanceOf(RedlockLockRegistry.class);
		assertThat(this.context.getBeansOfType(MovedBootTypes.DATA_REDIS_CONNECTION_DETAILS)).hasSize(1);

		DistLock lock = this.registry.getLock("on-containers");
		lock.lock();
		try {
			long holding = List.of(node1, node2, node3).stream().filter(node -> holds(node, "distlock:{on-containers}")).count();
			assertThat(holding).as("masters holding the lock").isGreaterThanOrEqualTo(2);
			assertThat(holds(applicationRedis, "distlock:{on-containers}")).as("the application's own Redis").isFalse();
		}
		finally {
			lock.unlock();
		}
		StringRedisTemplate template = this.context.getBean(StringRedisTemplate.class);
		template.opsForValue().set("application-key", "kept apart");
		assertThat(holds(applicationRedis, "application-key")).isTrue();
	}

	private static boolean holds(GenericContainer<?> container, String key) {
		RedisClient client = RedisClient.create("redis://" + container.getHost() + ":" + container.getMappedPort(6379));
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return connection.sync().exists(key) == 1;
		}
		finally {
			client.shutdown();
		}
	}

	@SpringBootConfiguration
	@ImportDataRedisAutoConfiguration
	@ImportAutoConfiguration(DistLockAutoConfiguration.class)
	static class Application {

		@Bean
		RedlockConnectionDetails redlockMasters() {
			return RedlockContainers.connectionDetails(node1, node2, node3);
		}

	}

}
