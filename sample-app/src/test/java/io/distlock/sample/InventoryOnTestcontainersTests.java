package io.distlock.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

import io.distlock.embedded.RedisContainerImage;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * The sample as a Spring Boot team tests theirs: Redis in a container, wired by
 * {@code @ServiceConnection}, with nothing under {@code spring.data.redis.*}. Threads sell one item's
 * stock through the locked method and sell exactly what there is; the same threads without the lock
 * oversell it, which shows the test can fail. Skipped where no Docker engine runs.
 */
@Testcontainers(disabledWithoutDocker = true)
@SpringBootTest(properties = { "sample.embedded-redis.enabled=false", "inventory.lock-wait=30s" })
class InventoryOnTestcontainersTests {

	@Container
	@ServiceConnection(name = "redis")
	static final GenericContainer<?> redis = RedisContainerImage.container();

	private static final int THREADS = 16;

	private static final int STOCK = 100;

	@Autowired
	private InventoryService inventory;

	@Test
	void lockedSalesSellExactlyTheStockOnTheContainersRedis() throws Exception {
		this.inventory.reset("container-item", STOCK);
		long sold = sellConcurrently(() -> this.inventory.sellOne("container-item").sold());
		assertThat(sold).isEqualTo(STOCK);
		assertThat(this.inventory.stock("container-item")).isZero();
		// The stock and the lock's fencing counter live in the container's Redis, asked directly.
		RedisClient client = RedisClient.create("redis://" + redis.getHost() + ":" + redis.getMappedPort(6379));
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			assertThat(connection.sync().keys("*")).anyMatch(key -> key.contains("container-item"))
				.anyMatch(key -> key.startsWith("distlock:fencing"));
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void withoutTheLockTheSameSalesOversell() throws Exception {
		this.inventory.reset("unprotected-item", STOCK);
		long sold = sellConcurrently(() -> this.inventory.sellOneUnprotected("unprotected-item").sold());
		assertThat(sold).as("units sold of %d", STOCK).isGreaterThan(STOCK);
	}

	private static long sellConcurrently(Callable<Boolean> sale) throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(THREADS);
		try {
			List<Future<Integer>> sellers = new ArrayList<>();
			for (int i = 0; i < THREADS; i++) {
				sellers.add(threads.submit(() -> {
					int mine = 0;
					// Each thread tries more than its share, so that all of the stock is contended for.
					for (int attempt = 0; attempt < 2 * STOCK / THREADS; attempt++) {
						if (sale.call()) {
							mine++;
						}
					}
					return mine;
				}));
			}
			long sold = 0;
			for (Future<Integer> seller : sellers) {
				sold += seller.get();
			}
			return sold;
		}
		finally {
			threads.shutdownNow();
		}
	}

}
