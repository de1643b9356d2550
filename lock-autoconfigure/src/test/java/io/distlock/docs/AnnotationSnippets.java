package io.distlock.docs;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.LocalDate;
import java.util.concurrent.CompletableFuture;

import javax.sql.DataSource;

import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Service;

import io.distlock.annotation.ClusterSingleton;
import io.distlock.annotation.DistributedLock;
import io.distlock.annotation.LockMode;
import io.distlock.annotation.LockContext;
import io.distlock.annotation.LockFailureHandler;
import io.distlock.annotation.OnLockFailure;
import io.distlock.jdbc.JdbcLockRegistry;
import reactor.core.publisher.Mono;

/**
 * The code of {@code docs/annotation.md}, {@code docs/getting-started.md} and the README's quick
 * start, compiled; {@link DocsSnippetsTests} checks that each java block there is in a tagged region
 * of a file like this one.
 */
@SuppressWarnings("unused")
class AnnotationSnippets {

	/** What the fencing example writes to. */
	interface StockStore {

		void decrement(String sku, long fencingToken);

		default void add(String sku, int units) {
		}

	}

	static class Order {

		private final String id;

		Order(String id) {
			this.id = id;
		}

		public String getId() {
			return this.id;
		}

	}

	private final StockStore stock = (sku, token) -> {
	};

	// tag::quick-start[]
	@DistributedLock(key = "'order:' + #order.id", waitTime = "2s")
	public void ship(Order order) {
		// runs on one instance at a time per order id
	}
	// end::quick-start[]

	// tag::getting-started[]
	@Service
	public class OrderService {

		@DistributedLock(key = "'order:' + #order.id", waitTime = "2s")
		public void ship(Order order) {
			// runs on one instance at a time per order id
		}

	}
	// end::getting-started[]

	// tag::examples[]
	@DistributedLock(key = "#p0")                          // the first argument
	public void reserve(String sku) {
		// ...
	}

	@DistributedLock(key = "'report'", leaseTime = "5m")   // a constant key, a fixed lease
	public void rebuildReport() {
		// ...
	}

	@DistributedLock(name = "nightly-export")              // one lock for the method
	public void export() {
		// ...
	}

	@DistributedLock(key = {"'acct:' + #from", "'acct:' + #to"})   // both locks or none
	public void transfer(String from, String to, long cents) {
		// ...
	}
	// end::examples[]

	record Report(String day) {
	}

	record Receipt(String orderId) {
	}

	// tag::modes[]
	@DistributedLock(key = "'report:' + #day", mode = LockMode.READ)    // any number at once
	public Report report(LocalDate day) {
		// ...
		return new Report(day.toString());
	}

	@DistributedLock(key = "'report:' + #day", mode = LockMode.WRITE)   // alone, once the readers have left
	public void rebuild(LocalDate day) {
		// ...
	}

	@DistributedLock(key = "'payment-provider'", permits = 3)            // at most 3, across all instances
	public Receipt pay(Order order) {
		// ...
		return new Receipt(order.getId());
	}
	// end::modes[]

	// tag::meta-annotation[]
	@DistributedLock(key = "'inventory:' + #sku", waitTime = "1s")
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.METHOD)
	public @interface InventoryLock {
	}
	// end::meta-annotation[]

	// tag::skip[]
	@DistributedLock(key = "'order:' + #orderId", waitTime = "0s",
			onFailure = OnLockFailure.SKIP, fallback = "'busy'")
	public String process(String orderId) {
		return "processed " + orderId;
	}
	// end::skip[]

	static class FailureHandlerSnippet {

		// tag::failure-handler[]
		@Bean
		LockFailureHandler ordersBusyHandler() {
			return failure -> "queued " + failure.lockNames();
		}

		@DistributedLock(key = "'order:' + #orderId", failureHandler = "ordersBusyHandler")
		public String ship(String orderId) {
			return "shipped " + orderId;
		}
		// end::failure-handler[]

	}

	// tag::fencing[]
	@DistributedLock(key = "'stock:' + #sku")
	public void sell(String sku) {
		long token = LockContext.fencingToken();
		stock.decrement(sku, token);   // the store rejects a token below the last one it saw
	}
	// end::fencing[]

	// tag::assert-locked[]
	@DistributedLock(key = "'stock:' + #sku")
	public void restock(String sku, int units) {
		LockContext.assertLocked();   // called through 'this', it throws, naming this method
		stock.add(sku, units);
	}
	// end::assert-locked[]

	// tag::scheduled[]
	@Scheduled(cron = "0 * * * * *")                          // every minute, on every instance
	@DistributedLock(key = "'nightly-report'", waitTime = "0s", onFailure = OnLockFailure.SKIP,
			holdAtLeast = "50s")                              // a bit less than the period
	public void report() {
		// ...
	}
	// end::scheduled[]

	// tag::cluster-singleton[]
	@Scheduled(cron = "0 * * * * *")
	@ClusterSingleton(holdAtLeast = "50s")
	public void hourlyCleanup() {
		// ...
	}
	// end::cluster-singleton[]

	static class PerMethodRegistrySnippet {

		// tag::per-method-registry[]
		@Bean(defaultCandidate = false, destroyMethod = "close")
		JdbcLockRegistry tableLocks(DataSource dataSource) {
			return JdbcLockRegistry.builder(dataSource).createSchema().build();
		}

		@DistributedLock(key = "'settlement:' + #day", registry = "tableLocks")
		public void settle(LocalDate day) {
			// ...
		}
		// end::per-method-registry[]

	}

	// tag::deferred[]
	@DistributedLock(key = "'invoice:' + #id")
	public CompletableFuture<String> render(String id) {
		return CompletableFuture.supplyAsync(() -> "invoice " + id);   // held until this completes
	}

	@DistributedLock(key = "'invoice:' + #id")
	public Mono<String> send(String id) {
		return Mono.fromCallable(() -> "sent " + id);                   // taken on subscription
	}
	// end::deferred[]

}
