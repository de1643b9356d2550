package io.distlock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.EnableTransactionManagement;

import io.distlock.DistLock;
import io.distlock.annotation.LockAcquisitionException;
import io.distlock.LockBackendException;
import io.distlock.LockRegistry;
import io.distlock.annotation.LockedServices.Accounts;
import io.distlock.annotation.LockedServices.Bank;
import io.distlock.annotation.LockedServices.Busy;
import io.distlock.annotation.LockedServices.Counter;
import io.distlock.annotation.LockedServices.Inventory;
import io.distlock.annotation.LockedServices.KeyForms;
import io.distlock.annotation.LockedServices.Order;
import io.distlock.annotation.LockedServices.Outer;
import io.distlock.annotation.LockedServices.Reports;
import io.distlock.annotation.LockedServices.Restocking;
import io.distlock.annotation.LockedServices.Shipping;
import io.distlock.annotation.LockedServices.Teller;
import io.distlock.aop.InvalidLockAnnotationException;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.RedisServerExtension;

/**
 * {@code @DistributedLock} in real Spring Boot applications against a real Redis; two application
 * contexts stand for two instances of a service.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DistributedLockAnnotationTests {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

	private final ExecutorService threads = Executors.newCachedThreadPool();



	@BeforeEach
	void flush() {
	}

	@AfterEach
	void closeContexts() {
		this.threads.shutdownNow();
		this.contexts.forEach(ConfigurableApplicationContext::close);
	}

	private ConfigurableApplicationContext start(String... properties) {
		return start(new Class<?>[0], properties);
	}

	private ConfigurableApplicationContext start(Class<?>[] extraSources, String... properties) {
		List<String> all = new ArrayList<>(List.of("spring.data.redis.port=" + redis.server().port(),
				"spring.datasource.url=jdbc:h2:mem:distlock;DB_CLOSE_DELAY=-1", "test.lock-wait=750ms",
				// Each test flushes Redis, which a restart grace would rightly treat as lost data.
				"distlock.restart-grace=0",
				"spring.main.banner-mode=off"));
		all.addAll(List.of(properties));
		ConfigurableApplicationContext context = new SpringApplicationBuilder(LockTestApplication.class)
			.sources(extraSources)
			.web(WebApplicationType.NONE)
			.properties(all.toArray(String[]::new))
			.run();
		this.contexts.add(context);
		return context;
	}

	@Test
	void twoInstancesNeverRunTheSameKeyAtOnce() throws Exception {
		List<Counter> counters = List.of(start().getBean(Counter.class), start().getBean(Counter.class));
		CountDownLatch go = new CountDownLatch(1);
		List<Future<?>> workers = new ArrayList<>();
		for (Counter counter : counters) {
			for (int t = 0; t < 4; t++) {
				workers.add(this.threads.submit(() -> {
					go.await();
					for (int i = 0; i < 150; i++) {
						counter.increment("shared");
					}
					return null;
				}));
			}
		}
		go.countDown();
		for (Future<?> worker : workers) {
			worker.get(100, TimeUnit.SECONDS);
		}
		assertThat(redis.server().command("GET", "test:counter:shared")).isEqualTo("$4");
		assertThat(start().getBean(org.springframework.data.redis.core.StringRedisTemplate.class).opsForValue()
			.get("test:counter:shared")).isEqualTo("1200");
	}

	@Test
	void keyExpressionsInEveryForm() {
		KeyForms forms = start().getBean(KeyForms.class);
		assertThat(forms.byName("42")).containsExactly("42");
		assertThat(forms.byPosition("x", 7)).containsExactly("p:x:a:7");
		assertThat(forms.byRoot()).containsExactly("byRoot:KeyForms");
		assertThat(forms.byBean("9")).containsExactly("tenant-7:9");
		assertThat(forms.constant()).containsExactly("fixed");
		assertThat(forms.named("42")).containsExactly("orders:42");
		assertThat(forms.methodWide()).containsExactly("KeyForms.methodWide");
		assertThat(forms.property(new Order("o-1"))).containsExactly("o-1");
		assertThat(forms.placeholderWait()).containsExactly("wait");
	}

	@Test
	void interfaceClassLevelAndMetaAnnotationsApply() {
		ConfigurableApplicationContext context = start();
		assertThat(context.getBean(Shipping.class).ship("s1")).containsExactly("ship:s1");
		assertThat(context.getBean(Reports.class).daily()).containsExactly("reports");
		assertThat(context.getBean(Inventory.class).reserve("sku-3")).containsExactly("inventory:sku-3");
	}

	@Test
	void placeholderWaitTimeIsResolvedFromTheEnvironment() throws Exception {
		ConfigurableApplicationContext context = start();
		DistLock held = otherClientHolds(context, "wait");
		long start = System.nanoTime();
		assertThatThrownBy(() -> context.getBean(KeyForms.class).placeholderWait()).isInstanceOf(LockAcquisitionException.class);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(700), Duration.ofSeconds(5));
		release(held);
	}

	@Test
	void fencingTokenIsReadableAndGrows() {
		KeyForms forms = start().getBean(KeyForms.class);
		long first = forms.fencingToken();
		long second = forms.fencingToken();
		assertThat(first).isPositive();
		assertThat(second).isGreaterThan(first);
		assertThatThrownBy(LockContext::fencingToken).isInstanceOf(IllegalStateException.class);
	}

	@Test
	void assertLockedPassesThroughTheProxyAndNamesTheMethodCalledAroundIt() {
		Restocking restocking = start().getBean(Restocking.class);
		assertThat(restocking.restock("7")).isEqualTo("7");
		assertThatThrownBy(() -> restocking.restockThroughThis("7")).isInstanceOf(IllegalStateException.class)
			.hasMessageStartingWith("Restocking.restock runs without its lock: the thread holds no @DistributedLock lock")
			.hasMessageContaining("bypasses the Spring proxy");
		assertThatThrownBy(() -> restocking.assertsAnotherLock("7")).isInstanceOf(IllegalStateException.class)
			.hasMessageStartingWith("Restocking.assertsAnotherLock runs without its lock")
			.hasMessageContaining("does not hold lock 'restock:other' (it holds [restock:7])");
	}

	@Test
	void annotatedMethodCallingAnotherOnTheSameKeyReenters() {
		ConfigurableApplicationContext context = start();
		LockRegistry registry = context.getBean(LockRegistry.class);
		assertThat(context.getBean(Outer.class).outer("r1", registry)).isEqualTo(2);
		assertThat(registry.heldLocks()).isEmpty();
	}

	@Test
	void opposingMultiKeyTransfersNeitherDeadlockNorOverlap() throws Exception {
		List<Bank> banks = List.of(start().getBean(Bank.class), start().getBean(Bank.class));
		CountDownLatch go = new CountDownLatch(1);
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			Bank bank = banks.get(t % 2);
			boolean forward = t < 2;
			workers.add(this.threads.submit(() -> {
				go.await();
				for (int i = 0; i < 100; i++) {
					assertThat(forward ? bank.transfer("a", "b") : bank.transfer("b", "a")).containsExactly("acct:a", "acct:b");
				}
				return null;
			}));
		}
		go.countDown();
		for (Future<?> worker : workers) {
			worker.get(60, TimeUnit.SECONDS);
		}
		assertThat(banks.get(0).transfers() + banks.get(1).transfers()).isEqualTo(400);
	}

	@Test
	void lockIsHeldUntilTheTransactionHasCommitted() throws Exception {
		List<ConfigurableApplicationContext> instances = List.of(start(), start());
		JdbcTemplate jdbc = instances.get(0).getBean(JdbcTemplate.class);
		newAccount(jdbc, 1);
		CountDownLatch go = new CountDownLatch(1);
		List<Future<?>> workers = new ArrayList<>();
		for (ConfigurableApplicationContext instance : instances) {
			Accounts accounts = instance.getBean(Accounts.class);
			for (int t = 0; t < 3; t++) {
				workers.add(this.threads.submit(() -> {
					go.await();
					for (int i = 0; i < 50; i++) {
						accounts.deposit(1);
					}
					return null;
				}));
			}
		}
		go.countDown();
		for (Future<?> worker : workers) {
			worker.get(100, TimeUnit.SECONDS);
		}
		assertThat(jdbc.queryForObject("select balance from account where id = 1", Long.class)).isEqualTo(300);
		for (ConfigurableApplicationContext instance : instances) {
			assertThat(instance.getBean(Accounts.class).heldAtCommit()).hasSize(150).containsOnly(true);
		}
	}

	@Test
	void insideACallersTransactionTheLockOutlivesItsCommit() {
		ConfigurableApplicationContext context = start();
		JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
		newAccount(jdbc, 2);
		context.getBean(Teller.class).depositTwice(2);
		assertThat(context.getBean(Accounts.class).heldAtCommit()).containsExactly(true, true);
		assertThat(context.getBean(LockRegistry.class).heldLocks()).isEmpty();
	}

	@Test
	void evenWithTheTransactionAdvisorOutsideTheLockIsReleasedOnlyAfterCommit() {
		ConfigurableApplicationContext context = start(new Class<?>[] { TransactionOutsideLock.class },
				"distlock.advisor-order=0");
		JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
		newAccount(jdbc, 3);
		context.getBean(Accounts.class).deposit(3);
		assertThat(context.getBean(Accounts.class).heldAtCommit()).containsExactly(true);
	}

	@Test
	void controlALockReleasedInsideTheTransactionIsSeenFreeAtCommit() {
		// Shows that the check above can fail: the hand-written pattern releases before the commit.
		ConfigurableApplicationContext context = start();
		JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
		newAccount(jdbc, 4);
		context.getBean(Accounts.class).depositLockingByHand(4);
		assertThat(context.getBean(Accounts.class).heldAtCommit()).containsExactly(false);
	}

	@Test
	void busyLockThrowsNamingTheLockAndTheMethodWithoutRunningIt() throws Exception {
		ConfigurableApplicationContext context = start();
		Busy busy = context.getBean(Busy.class);
		DistLock held = otherClientHolds(context, "busy");
		assertThatThrownBy(busy::throwing).isInstanceOfSatisfying(LockAcquisitionException.class, ex -> {
			assertThat(ex.getLockNames()).containsExactly("busy");
			assertThat(ex.getMethod().getName()).isEqualTo("throwing");
			assertThat(ex.getWaited()).isGreaterThanOrEqualTo(Duration.ofMillis(150));
			assertThat(ex.getMessage()).contains("'busy'", "Busy.throwing", "waitTime");
		});
		assertThat(busy.skipping("me")).isEqualTo("skipped:me");
		assertThat(busy.skippingPrimitive()).isZero();
		assertThat(busy.handled()).isEqualTo("handled:[busy]");
		assertThat(busy.runs()).isEqualTo(0);
		release(held);
		assertThat(busy.throwing()).isEqualTo("ran");
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aSkipForcedByAFailedBackendIsLoggedOncePerIntervalAndABusyLockIsNot(CapturedOutput output) throws Exception {
		String warning = "Busy.skipping(String) was skipped (onFailure = SKIP) for a reason other than another holder";
		ConfigurableApplicationContext context = start();
		Busy busy = context.getBean(Busy.class);
		DistLock held = otherClientHolds(context, "busy");
		assertThat(busy.skipping("me")).isEqualTo("skipped:me");
		// Another holder is what SKIP is for: not worth a warning.
		assertThat(output.getOut()).doesNotContain(warning);
		release(held);

		RedisServerProcess doomed = RedisServerProcess.start();
		try {
			Busy cut = start("spring.data.redis.port=" + doomed.port()).getBean(Busy.class);
			assertThat(cut.skipping("first")).isEqualTo("ran");
			doomed.kill();
			assertThat(cut.skipping("a")).isEqualTo("skipped:a");
			assertThat(cut.skipping("b")).isEqualTo("skipped:b");
			assertThat(cut.runs()).isEqualTo(1);
			String out = output.getOut();
			assertThat(out).contains(warning).contains(":" + doomed.port());
			// Once per method and minute, however many calls are skipped.
			assertThat(out.split(java.util.regex.Pattern.quote(warning), -1)).hasSize(2);
		}
		finally {
			doomed.close();
		}
	}

	@Test
	void nullKeyIsRejectedAndTheMethodDoesNotRun() {
		Busy busy = start().getBean(Busy.class);
		assertThatThrownBy(() -> busy.nullable(null)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("'#id'")
			.hasMessageContaining("Busy.nullable(String)")
			.hasMessageContaining("null");
		assertThat(busy.runs()).isEqualTo(0);
	}

	@Test
	void keyThatDoesNotParseStopsStartUpNamingMethodAndExpression() {
		assertThatThrownBy(() -> start(new Class<?>[] { BadKeyConfiguration.class }))
			.rootCause()
			.isInstanceOf(org.springframework.expression.ParseException.class);
		assertThatThrownBy(() -> start(new Class<?>[] { BadKeyConfiguration.class }))
			.hasStackTraceContaining("BadKey.run(String)")
			.hasStackTraceContaining("'#id +'")
			.satisfies(ex -> assertThat(findCause(ex, InvalidLockAnnotationException.class)).isNotNull());
	}

	@Test
	void unreachableRedisFailsWithinTheWaitAndNeverRunsTheMethod() throws Exception {
		RedisServerProcess doomed = RedisServerProcess.start();
		try {
			ConfigurableApplicationContext context = start("spring.data.redis.port=" + doomed.port());
			Busy busy = context.getBean(Busy.class);
			assertThat(busy.throwing()).isEqualTo("ran");
			doomed.kill();
			long start = System.nanoTime();
			assertThatThrownBy(busy::throwing).isInstanceOf(LockAcquisitionException.class)
				.hasCauseInstanceOf(LockBackendException.class)
				.hasMessageContaining("Busy.throwing")
				.hasMessageContaining(":" + doomed.port());
			// Far below Lettuce's 60 s command timeout, with room for a loaded machine.
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
			assertThat(busy.runs()).isEqualTo(1);
		}
		finally {
			doomed.close();
		}
	}

	private static void newAccount(JdbcTemplate jdbc, long id) {
		jdbc.execute("create table if not exists account (id bigint primary key, balance bigint)");
		jdbc.update("merge into account key (id) values (?, 0)", id);
	}

	private DistLock otherClientHolds(ConfigurableApplicationContext context, String name) throws Exception {
		LockRegistry other = start().getBean(LockRegistry.class);
		DistLock lock = other.getLock(name);
		// A new context's first Redis connection may take longer than a zero wait allows.
		assertThat(this.threads.submit(() -> lock.tryLock(Duration.ofSeconds(5))).get(10, TimeUnit.SECONDS)).isTrue();
		return lock;
	}

	private void release(DistLock lock) {
		// The holding thread may be gone; the lock is freed by another client taking it after FLUSHALL.
		redis.server().command("DEL", "distlock:{" + lock.getName() + "}");
	}

	private static <T extends Throwable> T findCause(Throwable ex, Class<T> type) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (type.isInstance(cause)) {
				return type.cast(cause);
			}
		}
		return null;
	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement(order = -100)
	static class TransactionOutsideLock {

	}

	@Configuration(proxyBeanMethods = false)
	static class BadKeyConfiguration {

		@org.springframework.context.annotation.Bean
		LockedServices.BadKey badKey() {
			return new LockedServices.BadKey();
		}

	}

}
