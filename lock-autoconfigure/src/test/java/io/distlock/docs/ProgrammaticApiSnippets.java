package io.distlock.docs;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;

import javax.sql.DataSource;

import org.apache.curator.framework.CuratorFramework;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.distlock.DistLock;
import io.distlock.LockRegistry;
import io.distlock.LockWatchdog;
import io.distlock.LostHold;
import io.distlock.WorkHold;
import io.distlock.jdbc.JdbcLockRegistry;
import io.distlock.reactor.ReactiveLocks;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.redlock.RedlockLockRegistry;
import io.distlock.redlock.RedlockSettings;
import io.distlock.zookeeper.ZooKeeperLockRegistry;
import reactor.core.publisher.Mono;

/**
 * The code of {@code docs/programmatic-api.md}, compiled; see {@link DocsSnippetsTests}.
 */
@SuppressWarnings("unused")
class ProgrammaticApiSnippets {

	record Order(String id) {
	}

	record Receipt(String orderId) {
	}

	private LockRegistry lockRegistry;

	private final Order order = new Order("42");

	void ship(Order order) {
	}

	Receipt invoice(Order order) {
		return new Receipt(order.id());
	}

	void move(long cents) {
	}

	void tryLockBlock() throws InterruptedException {
		// tag::try-lock[]
		DistLock lock = lockRegistry.getLock("order:42");   // inject io.distlock.LockRegistry
		if (lock.tryLock(Duration.ofSeconds(2))) {           // watchdog-renewed; or tryLock(wait, lease)
			try {
				ship(order);
			} finally {
				lock.unlock();
			}
		}
		// end::try-lock[]
	}

	// tag::execute-locked-void[]
	void shipLocked(Order order) throws InterruptedException {
		lockRegistry.executeLocked("order:" + order.id(), Duration.ofSeconds(2), () -> {
			ship(order);
			return null;
		});
	}
	// end::execute-locked-void[]

	Receipt executeLockedValue() throws InterruptedException {
		// tag::execute-locked-value[]
		Receipt receipt = lockRegistry.executeLocked("order:" + order.id(), Duration.ofSeconds(2),
				() -> invoice(order));
		// end::execute-locked-value[]
		return receipt;
	}

	void executeLockedMany() throws InterruptedException {
		// tag::execute-locked-many[]
		lockRegistry.executeLocked(List.of("account:1", "account:2"), Duration.ofSeconds(2), () -> {
			move(100);
			return null;
		});
		// end::execute-locked-many[]
	}

	void alert(LostHold lost) {
	}

	void builders(RedisConnectionFactory connectionFactory, DataSource dataSource, RedisConnectionFactory node1,
			RedisConnectionFactory node2, RedisConnectionFactory node3, CuratorFramework curator) {
		// tag::builders[]
		RedisLockRegistry locks = RedisLockRegistry.builder(connectionFactory)   // Spring Data Redis' factory
				.keyPrefix("orders")
				.options(options -> options.watchdogTimeout(Duration.ofSeconds(10)).listener(lost -> alert(lost)))
				.build();
		JdbcLockRegistry tableLocks = JdbcLockRegistry.builder(dataSource).tableName("job_locks").createSchema().build();
		RedlockLockRegistry redlock = RedlockLockRegistry.builder(List.of(node1, node2, node3))
				.settings(RedlockSettings.builder().nodeTimeout(Duration.ofMillis(250)).build()).build();
		ZooKeeperLockRegistry zk = ZooKeeperLockRegistry.builder(curator).basePath("/orders/locks").build();
		// end::builders[]
	}

	static class WatchdogSnippet {

		// tag::watchdog-bean[]
		@Bean(destroyMethod = "close")
		LockWatchdog distLockWatchdog() {
			return LockWatchdog.on(Executors.newScheduledThreadPool(2));
		}
		// end::watchdog-bean[]

	}

	static class WithoutBlocking {

		private LockRegistry lockRegistry;

		private final Order order = new Order("42");

		Mono<Receipt> ship(Order order) {
			return Mono.just(new Receipt(order.id()));
		}

		CompletableFuture<Receipt> work() {
			return CompletableFuture.completedFuture(new Receipt("42"));
		}

		void withoutBlocking() {
			// tag::without-blocking[]
			ReactiveLocks locks = ReactiveLocks.of(lockRegistry);                  // io.distlock.reactor, needs Reactor
			Mono<Receipt> shipped = locks.withLock("order:42", Duration.ofSeconds(2), null, ship(order));

			lockRegistry.tryLockForWorkAsync("order:42", Duration.ofSeconds(2), null)   // no Reactor needed
				.thenCompose(hold -> hold.isEmpty() ? CompletableFuture.completedFuture(null)  // busy: skipped
						: work().whenComplete((result, error) -> hold.get().releaseAsync()));
			// end::without-blocking[]
		}

	}

}
