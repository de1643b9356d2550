package io.distlock.annotation;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.distlock.LockRegistry;

/**
 * The beans whose annotated methods the annotation tests call.
 */
final class LockedServices {

	private LockedServices() {
	}

	/** A non-atomic read-modify-write of a Redis counter: loses updates unless locked. */
	static class Counter {

		private final StringRedisTemplate redis;

		Counter(StringRedisTemplate redis) {
			this.redis = redis;
		}

		@DistributedLock(key = "'counter:' + #name", waitTime = "30s")
		public void increment(String name) {
			String key = "test:counter:" + name;
			String value = this.redis.opsForValue().get(key);
			long next = ((value != null) ? Long.parseLong(value) : 0) + 1;
			this.redis.opsForValue().set(key, Long.toString(next));
		}

	}

	/** Supplies a key prefix to expressions as a bean reference. */
	static class KeyParts {

		public String tenant() {
			return "tenant-7";
		}

	}

	/** The forms a key expression may take; each method returns the locks it ran under. */
	static class KeyForms {

		@DistributedLock(key = "#id")
		public Set<String> byName(String id) {
			return LockContext.lockNames();
		}

		@DistributedLock(key = "'p:' + #p0 + ':a:' + #a1")
		public Set<String> byPosition(String first, int second) {
			return LockContext.lockNames();
		}

		@DistributedLock(key = "#root.method.name + ':' + #root.target.getClass().getSimpleName()")
		public Set<String> byRoot() {
			return LockContext.lockNames();
		}

		@DistributedLock(key = "@keyParts.tenant() + ':' + #id")
		public Set<String> byBean(String id) {
			return LockContext.lockNames();
		}

		@DistributedLock(key = "'fixed'")
		public Set<String> constant() {
			return LockContext.lockNames();
		}

		@DistributedLock(name = "orders", key = "#id")
		public Set<String> named(String id) {
			return LockContext.lockNames();
		}

		@DistributedLock
		public Set<String> methodWide() {
			return LockContext.lockNames();
		}

		@DistributedLock(key = "#order.id")
		public Set<String> property(Order order) {
			return LockContext.lockNames();
		}

		@DistributedLock(key = "'fenced'")
		public long fencingToken() {
			return LockContext.fencingToken();
		}

		@DistributedLock(key = "'wait'", waitTime = "${test.lock-wait}")
		public Set<String> placeholderWait() {
			return LockContext.lockNames();
		}

	}

	/** An argument with a property to lock on. */
	record Order(String id) {
	}

	/** Calls another locked bean on the same key. */
	static class Outer {

		private final Inner inner;

		Outer(Inner inner) {
			this.inner = inner;
		}

		@DistributedLock(key = "'re:' + #id", waitTime = "0")
		public int outer(String id, LockRegistry registry) {
			return this.inner.inner(id, registry);
		}

	}

	/** The inner half of a reentrant call: waits not at all, so only reentrancy lets it in. */
	static class Inner {

		@DistributedLock(key = "'re:' + #id", waitTime = "0")
		public int inner(String id, LockRegistry registry) {
			return registry.getLock("re:" + id).getHoldCount();
		}

	}

	/** A locked method that asserts its lock, called through the proxy and around it (through {@code this}). */
	static class Restocking {

		@DistributedLock(key = "'restock:' + #sku", waitTime = "0")
		public String restock(String sku) {
			LockContext.assertLocked();
			LockContext.assertLocked("restock:" + sku);
			return sku;
		}

		public String restockThroughThis(String sku) {
			return restock(sku);
		}

		@DistributedLock(key = "'restock:' + #sku", waitTime = "0")
		public void assertsAnotherLock(String sku) {
			LockContext.assertLocked("restock:other");
		}

	}

	/** Two-key transfers: both accounts, all or nothing. */
	static class Bank {

		private final AtomicInteger transfers = new AtomicInteger();

		public int transfers() {
			return this.transfers.get();
		}

		@DistributedLock(key = { "'acct:' + #from", "'acct:' + #to" }, waitTime = "10s")
		public Set<String> transfer(String from, String to) {
			this.transfers.incrementAndGet();
			return LockContext.lockNames();
		}

	}

	/** Methods that meet a held lock; {@code runs} counts bodies that ran. */
	static class Busy {

		private final AtomicInteger runs = new AtomicInteger();

		public int runs() {
			return this.runs.get();
		}

		@DistributedLock(key = "'busy'", waitTime = "150ms")
		public String throwing() {
			this.runs.incrementAndGet();
			return "ran";
		}

		@DistributedLock(key = "'busy'", waitTime = "0", onFailure = OnLockFailure.SKIP, fallback = "'skipped:' + #p0")
		public String skipping(String caller) {
			this.runs.incrementAndGet();
			return "ran";
		}

		@DistributedLock(key = "'busy'", waitTime = "0", onFailure = OnLockFailure.SKIP)
		public int skippingPrimitive() {
			this.runs.incrementAndGet();
			return 42;
		}

		@DistributedLock(key = "'busy'", waitTime = "0", failureHandler = "busyHandler")
		public String handled() {
			this.runs.incrementAndGet();
			return "ran";
		}

		@DistributedLock(key = "#id")
		public String nullable(String id) {
			this.runs.incrementAndGet();
			return "ran";
		}

	}

	/** Declared on the interface only. */
	interface Shipping {

		@DistributedLock(key = "'ship:' + #id")
		Set<String> ship(String id);

	}

	static class ShippingImpl implements Shipping {

		@Override
		public Set<String> ship(String id) {
			return LockContext.lockNames();
		}

	}

	/** Every public method locked by the class-level annotation. */
	@DistributedLock(name = "reports")
	static class Reports {

		public Set<String> daily() {
			return LockContext.lockNames();
		}

	}

	/** A team's own annotation, meta-annotated. */
	@DistributedLock(key = "'inventory:' + #sku", waitTime = "1s")
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.METHOD)
	@interface InventoryLock {

	}

	static class Inventory {

		@InventoryLock
		public Set<String> reserve(String sku) {
			return LockContext.lockNames();
		}

	}

	/**
	 * A transactional read-modify-write of a row; records, at commit, whether its lock was still
	 * held.
	 */
	static class Accounts {

		private final JdbcTemplate jdbc;

		private final LockRegistry registry;

		private final List<Boolean> heldAtCommit = new CopyOnWriteArrayList<>();

		public List<Boolean> heldAtCommit() {
			return this.heldAtCommit;
		}

		Accounts(JdbcTemplate jdbc, LockRegistry registry) {
			this.jdbc = jdbc;
			this.registry = registry;
		}

		@DistributedLock(key = "'acct:' + #id", waitTime = "30s")
		@Transactional
		public void deposit(long id) {
			addOne(id);
		}

		@DistributedLock(key = "'acct:' + #id", waitTime = "30s")
		public void depositInCallersTransaction(long id) {
			addOne(id);
		}

		/** The hand-written mistake: the lock is released inside the transaction, before commit. */
		@Transactional
		public void depositLockingByHand(long id) {
			io.distlock.DistLock lock = this.registry.getLock("acct:" + id);
			lock.lock();
			try {
				addOne(id);
			}
			finally {
				lock.unlock();
			}
		}

		private void addOne(long id) {
			Long balance = this.jdbc.queryForObject("select balance from account where id = ?", Long.class, id);
			this.jdbc.update("update account set balance = ? where id = ?", balance + 1, id);
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
				@Override
				public void afterCommit() {
					Accounts.this.heldAtCommit.add(Accounts.this.registry.getLock("acct:" + id).isHeldByCurrentThread());
				}
			});
		}

	}

	/** Opens a transaction and calls a locked method inside it. */
	static class Teller {

		private final Accounts accounts;

		Teller(Accounts accounts) {
			this.accounts = accounts;
		}

		@Transactional
		public void depositTwice(long id) {
			this.accounts.depositInCallersTransaction(id);
			this.accounts.depositInCallersTransaction(id);
		}

	}

	/** Holds its lock until the caller's latch opens. */
	static class Blocking {

		@DistributedLock(key = "'report:' + #id", waitTime = "30s")
		public void hold(String id, java.util.concurrent.CountDownLatch entered, java.util.concurrent.CountDownLatch release)
				throws InterruptedException {
			entered.countDown();
			release.await();
		}

	}

	/** Collects the lock events the application publishes. */
	static class LockEvents {

		final List<io.distlock.autoconfigure.LockLostEvent> lost = new CopyOnWriteArrayList<>();

		@org.springframework.context.event.EventListener
		public void on(io.distlock.autoconfigure.LockLostEvent event) {
			this.lost.add(event);
		}

		public List<io.distlock.autoconfigure.LockLostEvent> lost() {
			return this.lost;
		}

	}

	/** A key that does not parse: the application must not start. */
	static class BadKey {

		@DistributedLock(key = "#id +")
		public void run(String id) {
		}

	}

}
