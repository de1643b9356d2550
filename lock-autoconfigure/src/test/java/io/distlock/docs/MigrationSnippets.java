package io.distlock.docs;

import java.time.Duration;

import org.springframework.scheduling.annotation.Scheduled;

import io.distlock.DistLock;
import io.distlock.LockRegistry;
import io.distlock.annotation.ClusterSingleton;
import io.distlock.annotation.DistributedLock;

/**
 * The code of {@code docs/migration.md}, compiled; see {@link DocsSnippetsTests}.
 */
@SuppressWarnings("unused")
class MigrationSnippets {

	record Order(String id) {
	}

	private LockRegistry lockRegistry;

	private final Order order = new Order("42");

	void ship(Order order) {
	}

	void fromRedisson() throws InterruptedException {
		// tag::from-redisson[]
		DistLock lock = lockRegistry.getLock("order:42");                    // was: redisson.getLock("order:42")
		if (lock.tryLock(Duration.ofSeconds(100), Duration.ofSeconds(10))) {  // was: tryLock(100, 10, TimeUnit.SECONDS)
			try {
				ship(order);
			} finally {
				lock.unlock();
			}
		}
		// end::from-redisson[]
	}

	// tag::from-spring-integration[]
	void shipLocked(Order order) throws InterruptedException {   // was: executeLocked(key, Duration, callable)
		lockRegistry.executeLocked("order:" + order.id(), Duration.ofSeconds(2), () -> {
			ship(order);
			return null;
		});
	}
	// end::from-spring-integration[]

	// tag::from-shedlock[]
	@Scheduled(cron = "0 * * * * *")
	@ClusterSingleton(name = "report", holdAtLeast = "50s")   // was: @SchedulerLock(name = "report", lockAtLeastFor = "50s", lockAtMostFor = "10m")
	public void report() {
		// ...
	}
	// end::from-shedlock[]

	// tag::from-lock4j[]
	@DistributedLock(name = "order", key = "#order.id", waitTime = "3s")   // was: @Lock4j(name = "order", keys = {"#order.id"}, acquireTimeout = 3000)
	public void confirm(Order order) {
		// ...
	}
	// end::from-lock4j[]

}
