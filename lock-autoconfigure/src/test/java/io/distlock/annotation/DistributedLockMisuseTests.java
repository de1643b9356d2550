package io.distlock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.util.StringUtils;

import io.distlock.aop.InvalidLockAnnotationException;
import io.distlock.testing.RedisServerExtension;

/**
 * The silent ways a {@code @DistributedLock} can lock nothing, made loud, in a real Spring Boot
 * application against a real Redis: keys whose value has no stable string form, and annotations on
 * methods no proxy can intercept.
 */
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DistributedLockMisuseTests {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void closeContexts() {
		this.threads.shutdownNow();
		this.contexts.forEach(ConfigurableApplicationContext::close);
	}

	private ConfigurableApplicationContext start(Class<?>... extraSources) {
		ConfigurableApplicationContext context = new SpringApplicationBuilder(LockTestApplication.class)
			.sources(extraSources)
			.web(WebApplicationType.NONE)
			.properties("spring.data.redis.port=" + redis.server().port(),
					"spring.datasource.url=jdbc:h2:mem:misuse;DB_CLOSE_DELAY=-1", "test.lock-wait=750ms",
					// Each test flushes Redis, which a restart grace would rightly treat as lost data.
					"distlock.restart-grace=0", "spring.main.banner-mode=off",
					// No test here waits for a busy lock by default; a context's first call opens the connection,
					// which on a loaded machine took longer than the default 3 s wait.
					"distlock.wait-time=30s")
			.run();
		this.contexts.add(context);
		return context;
	}

	@Test
	void keyOfAnObjectWithoutToStringIsRejectedAndTheMethodDoesNotRun() {
		ValueKeys keys = start(ValueKeysConfiguration.class).getBean(ValueKeys.class);
		assertThatThrownBy(() -> keys.wholeOrder(new PlainOrder("o-1"))).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("'#order'")
			.hasMessageContaining("ValueKeys.wholeOrder(PlainOrder)")
			.hasMessageContaining("DistributedLockMisuseTests.PlainOrder")
			.hasMessageContaining("no toString()")
			.hasMessageContaining("#order.id")
			.hasMessageContaining("was not run");
		assertThat(keys.runs()).isEqualTo(0);
		// The fix the message proposes works.
		assertThat(keys.byId(new PlainOrder("o-1"))).containsExactly("o-1");
	}

	@Test
	void concatenatingAnObjectWithoutToStringIsRejectedToo() {
		ValueKeys keys = start(ValueKeysConfiguration.class).getBean(ValueKeys.class);
		assertThatThrownBy(() -> keys.concatenatedOrder(new PlainOrder("o-2")))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("'order:' + #order")
			.hasMessageContaining("ValueKeys.concatenatedOrder(PlainOrder)")
			.hasMessageContaining("turns a DistributedLockMisuseTests.PlainOrder into text")
			.hasMessageContaining("no toString()");
		assertThatThrownBy(() -> keys.orderList(List.of(new PlainOrder("o-3"))))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("ValueKeys.orderList(List)")
			.hasMessageContaining("evaluated to a value containing a DistributedLockMisuseTests.PlainOrder")
			.hasMessageContaining("#orders.![id]");
		assertThat(keys.runs()).isEqualTo(0);
		// The fix the message proposes works.
		assertThat(keys.idsOf(List.of(new PlainOrder("o-1"), new PlainOrder("o-2")))).containsExactly("[o-1, o-2]");
	}

	@Test
	void arrayKeysLockOnTheirElements() {
		ValueKeys keys = start(ValueKeysConfiguration.class).getBean(ValueKeys.class);
		assertThat(keys.stringArray(new String[] { "a", "b" })).containsExactly("[a, b]");
		assertThat(keys.intArray(new int[] { 1, 2 })).containsExactly("[1, 2]");
		assertThat(keys.nested(List.of(new long[] { 3 }, new String[] { "c" }))).containsExactly("[[3], [c]]");
		// Concatenation already rendered arrays by value, and keeps doing so in the same form.
		assertThat(keys.concatenatedArray(new String[] { "a", "b" })).containsExactly("batch:a,b");
	}

	@Test
	void twoInstancesCallingWithEqualArraysContendForOneLock() throws Exception {
		ValueKeys first = start(ValueKeysConfiguration.class).getBean(ValueKeys.class);
		ValueKeys second = start(ValueKeysConfiguration.class).getBean(ValueKeys.class);
		CountDownLatch entered = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		Future<?> holder = this.threads.submit(() -> {
			first.holdArray(new String[] { "a", "b" }, entered, release);
			return null;
		});
		assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
		Future<String> equal = this.threads.submit(() -> second.tryArray(new String[] { "a", "b" }));
		Future<String> different = this.threads.submit(() -> second.tryArray(new String[] { "a", "c" }));
		assertThat(equal.get(10, TimeUnit.SECONDS)).isEqualTo("busy");
		assertThat(different.get(10, TimeUnit.SECONDS)).isEqualTo("ran");
		release.countDown();
		holder.get(10, TimeUnit.SECONDS);
		assertThat(second.tryArray(new String[] { "a", "b" })).isEqualTo("ran");
	}

	@Test
	void annotationsNoProxyCanInterceptAreWarnedAboutOncePerMethod(CapturedOutput output) {
		ConfigurableApplicationContext context = start(UnreachableConfiguration.class);
		context.getBean("unreachableOne", Unreachable.class).callsSecret();
		context.getBean("unreachableTwo", Unreachable.class).sealed();
		Unreachable.utility("u");

		String log = output.getOut();
		String type = Unreachable.class.getName();
		assertThat(StringUtils.countOccurrencesOf(log, type + ".secret()")).isOne();
		assertThat(log).contains(type + ".secret() is never locked: private methods");
		assertThat(StringUtils.countOccurrencesOf(log, type + ".utility(String)")).isOne();
		assertThat(log).contains(type + ".utility(String) is never locked: static methods");
		assertThat(StringUtils.countOccurrencesOf(log, type + ".sealed()")).isOne();
		assertThat(log).contains(type + ".sealed() is never locked: final methods");
		assertThat(StringUtils.countOccurrencesOf(log, ClassLevelUnreachable.class.getName() + ".sealedByClass()")).isOne();
		assertThat(log).doesNotContain(type + ".reachable()").doesNotContain(type + ".callsSecret()");
		assertThat(log).doesNotContain(ClassLevelReachable.class.getName());
		// The warnings are logged at start-up, before any call, and at WARN.
		assertThat(log).containsPattern("WARN .* " + java.util.regex.Pattern.quote(type + ".secret()"));
	}

	/** An argument with no toString() of its own: its default form differs for every instance. */
	static final class PlainOrder {

		private final String id;

		PlainOrder(String id) {
			this.id = id;
		}

		public String getId() {
			return this.id;
		}

	}

	/** Keys whose values are not strings; {@code runs} counts bodies that ran. */
	static class ValueKeys {

		private final AtomicInteger runs = new AtomicInteger();

		public int runs() {
			return this.runs.get();
		}

		@DistributedLock(key = "#order")
		public String wholeOrder(PlainOrder order) {
			this.runs.incrementAndGet();
			return "ran";
		}

		@DistributedLock(key = "#order.id")
		public Set<String> byId(PlainOrder order) {
			return LockContext.lockNames();
		}

		@DistributedLock(key = "'order:' + #order")
		public String concatenatedOrder(PlainOrder order) {
			this.runs.incrementAndGet();
			return "ran";
		}

		@DistributedLock(key = "#orders")
		public String orderList(List<PlainOrder> orders) {
			this.runs.incrementAndGet();
			return "ran";
		}

		@DistributedLock(key = "#orders.![id]")
		public Set<String> idsOf(List<PlainOrder> orders) {
			return LockContext.lockNames();
		}

		@DistributedLock(key = "#ids")
		public Set<String> stringArray(String[] ids) {
			return LockContext.lockNames();
		}

		@DistributedLock(key = "#ids")
		public Set<String> intArray(int[] ids) {
			return LockContext.lockNames();
		}

		@DistributedLock(key = "#parts")
		public Set<String> nested(List<Object> parts) {
			return LockContext.lockNames();
		}

		@DistributedLock(key = "'batch:' + #ids")
		public Set<String> concatenatedArray(String[] ids) {
			return LockContext.lockNames();
		}

		@DistributedLock(key = "#ids", waitTime = "30s")
		public void holdArray(String[] ids, CountDownLatch entered, CountDownLatch release) throws InterruptedException {
			entered.countDown();
			release.await();
		}

		@DistributedLock(key = "#ids", waitTime = "0", onFailure = OnLockFailure.SKIP, fallback = "'busy'")
		public String tryArray(String[] ids) {
			return "ran";
		}

	}

	/**
	 * Annotated methods no proxy can intercept, next to ones it can. A bean of this class exists
	 * twice, yet each method is warned about once.
	 */
	static class Unreachable {

		@DistributedLock(key = "'private'")
		private void secret() {
		}

		/** A self-invocation: not intercepted either, but not detectable. */
		public void callsSecret() {
			secret();
		}

		@DistributedLock(key = "#id")
		public static void utility(String id) {
		}

		@DistributedLock(key = "'final'")
		public final void sealed() {
		}

		@DistributedLock(key = "'fine'")
		public void reachable() {
		}

	}

	/** Every public method locked by the class-level annotation; a final one cannot be. */
	@DistributedLock(name = "class-level")
	static class ClassLevelUnreachable {

		public void open() {
		}

		public final void sealedByClass() {
		}

	}

	/** Class-level annotation with only overridable public methods: nothing to warn about. */
	@DistributedLock(name = "class-level-fine")
	static class ClassLevelReachable {

		public void open() {
		}

		static void helper() {
		}

	}

	@Test
	void aMethodReturningAPlainFutureStopsTheStartInsteadOfRunningUnlocked() {
		assertThatThrownBy(() -> start(FutureReturningConfiguration.class)).satisfies(failure -> {
			Throwable cause = failure;
			while (cause != null && !(cause instanceof InvalidLockAnnotationException)) {
				cause = cause.getCause();
			}
			assertThat(cause).as("InvalidLockAnnotationException in %s", failure).isNotNull();
			assertThat(cause.getMessage()).contains("FutureReturning.ship()")
				.contains("returns a Future")
				.contains("runs after the method has returned")
				.contains("CompletableFuture/CompletionStage, a Reactor Mono/Flux");
		});
	}

	@Test
	void aMethodReturningACallableStopsTheStartToo() {
		assertThatThrownBy(() -> start(CallableReturningConfiguration.class))
			.hasStackTraceContaining("CallableReturning.ship()")
			.hasStackTraceContaining("returns a Callable");
	}

	@Test
	void asyncMethodsRunTheirWholeBodyLockedOnTheExecutorThread() throws Exception {
		AsyncShipping first = start(AsyncConfiguration.class).getBean(AsyncShipping.class);
		AsyncShipping second = start(AsyncConfiguration.class).getBean(AsyncShipping.class);
		List<CompletableFuture<String>> calls = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			calls.add(((i % 2 == 0) ? first : second).ship());
		}
		for (CompletableFuture<String> call : calls) {
			assertThat(call.get(30, TimeUnit.SECONDS)).startsWith("distlock-test-async-");
		}
		assertThat(AsyncShipping.maxInside).as("bodies inside at once, across two instances").hasValue(1);
	}

	@Configuration(proxyBeanMethods = false)
	static class ValueKeysConfiguration {

		@Bean
		ValueKeys valueKeys() {
			return new ValueKeys();
		}

	}

	static class FutureReturning {

		@DistributedLock(key = "'future'")
		public Future<String> ship() {
			return new FutureTask<>(() -> "shipped");
		}

	}

	static class CallableReturning {

		@DistributedLock(key = "'callable'")
		public Callable<String> ship() {
			return () -> "shipped";
		}

	}

	static class AsyncShipping {

		static final AtomicInteger inside = new AtomicInteger();

		static final AtomicInteger maxInside = new AtomicInteger();

		@Async
		@DistributedLock(key = "'async-ship'", waitTime = "20s")
		public CompletableFuture<String> ship() throws InterruptedException {
			maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
			Thread.sleep(30);
			inside.decrementAndGet();
			return CompletableFuture.completedFuture(Thread.currentThread().getName());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FutureReturningConfiguration {

		@Bean
		FutureReturning futureReturning() {
			return new FutureReturning();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class CallableReturningConfiguration {

		@Bean
		CallableReturning callableReturning() {
			return new CallableReturning();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAsync
	static class AsyncConfiguration {

		@Bean
		AsyncShipping asyncShipping() {
			return new AsyncShipping();
		}

		@Bean
		Executor taskExecutor() {
			ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
			executor.setCorePoolSize(4);
			executor.setThreadNamePrefix("distlock-test-async-");
			executor.initialize();
			return executor;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UnreachableConfiguration {

		@Bean
		Unreachable unreachableOne() {
			return new Unreachable();
		}

		@Bean
		Unreachable unreachableTwo() {
			return new Unreachable();
		}

		@Bean
		ClassLevelUnreachable classLevelUnreachable() {
			return new ClassLevelUnreachable();
		}

		@Bean
		ClassLevelReachable classLevelReachable() {
			return new ClassLevelReachable();
		}

	}

}
