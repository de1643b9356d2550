package io.distlock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.distlock.DistLock;
import io.distlock.DistSemaphore;
import io.distlock.HoldInfo;
import io.distlock.HoldKind;
import io.distlock.LockRegistry;
import io.distlock.aop.InvalidLockAnnotationException;
import io.distlock.testing.RedisServerExtension;
import reactor.core.publisher.Mono;

/**
 * {@code @DistributedLock(mode = READ / WRITE)} and {@code @DistributedLock(permits = n)} in real
 * Spring Boot applications, two of them as two instances of a service, against a real Redis: readers
 * share, a writer excludes, permits bound the calls inside at once, deferred methods hold until their
 * work ends, and annotations that cannot work stop start-up naming the method.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LockModeAnnotationTests {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void closeContexts() {
		this.threads.shutdownNow();
		this.contexts.forEach(ConfigurableApplicationContext::close);
	}

	private ConfigurableApplicationContext start(Class<?>... sources) {
		ConfigurableApplicationContext context = new SpringApplicationBuilder(LockTestApplication.class)
			.sources(sources)
			.web(WebApplicationType.NONE)
			.properties("spring.data.redis.port=" + redis.server().port(),
					"spring.datasource.url=jdbc:h2:mem:modes;DB_CLOSE_DELAY=-1", "test.lock-wait=750ms", "distlock.restart-grace=0",
					"spring.main.banner-mode=off", "distlock.wait-time=30s")
			.run();
		this.contexts.add(context);
		return context;
	}

	@Test
	void readersOfTwoInstancesAreInsideAtOnce() throws Exception {
		Report first = start(ReportConfiguration.class).getBean(Report.class);
		Report second = start(ReportConfiguration.class).getBean(Report.class);
		int readers = 6;
		CountDownLatch allInside = new CountDownLatch(readers);
		List<Future<Boolean>> reads = new ArrayList<>();
		for (int i = 0; i < readers; i++) {
			Report report = (i % 2 == 0) ? first : second;
			// Each reader stays inside until every reader is: only shared holds let that happen.
			reads.add(this.threads.submit(() -> report.read(allInside)));
		}
		for (Future<Boolean> read : reads) {
			assertThat(read.get(60, TimeUnit.SECONDS)).as("every reader saw the others inside").isTrue();
		}
	}

	@Test
	void writersOfTwoInstancesKeepEveryUpdateAndReadersSeeNoHalfWrite() throws Exception {
		Report first = start(ReportConfiguration.class).getBean(Report.class);
		Report second = start(ReportConfiguration.class).getBean(Report.class);
		SharedState state = new SharedState();
		List<Future<?>> calls = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			Report report = (i % 2 == 0) ? first : second;
			calls.add(this.threads.submit(() -> {
				for (int n = 0; n < 25; n++) {
					report.write(state);
				}
				return null;
			}));
			calls.add(this.threads.submit(() -> {
				for (int n = 0; n < 25; n++) {
					report.check(state);
				}
				return null;
			}));
		}
		for (Future<?> call : calls) {
			call.get(90, TimeUnit.SECONDS);
		}
		assertThat(state.left).isEqualTo(100);
		assertThat(state.right).isEqualTo(100);
		assertThat(state.halfWritesSeen.get()).as("reads that saw a write half done").isZero();
	}

	@Test
	void permitsBoundTheCallsInsideAtOnceAcrossInstances() throws Exception {
		Payments first = start(PaymentsConfiguration.class).getBean(Payments.class);
		Payments second = start(PaymentsConfiguration.class).getBean(Payments.class);
		Gauge gauge = new Gauge();
		List<Future<?>> calls = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			Payments payments = (i % 2 == 0) ? first : second;
			calls.add(this.threads.submit(() -> {
				for (int n = 0; n < 10; n++) {
					payments.call(gauge);
				}
				return null;
			}));
		}
		for (Future<?> call : calls) {
			call.get(90, TimeUnit.SECONDS);
		}
		assertThat(gauge.most.get()).as("most calls inside at once").isEqualTo(3);
	}

	@Test
	void aMonoHoldsItsWriteHoldUntilItsWorkEnds() throws Exception {
		ConfigurableApplicationContext context = start(ReportConfiguration.class);
		Report report = context.getBean(Report.class);
		CountDownLatch finish = new CountDownLatch(1);
		CompletableFuture<String> rebuilt = report.rebuild(finish).toFuture();
		LockRegistry registry = context.getBean(LockRegistry.class);
		// The method has returned its Mono; its work, and so its write hold, goes on.
		awaitHeld(registry, HoldKind.WRITE);
		DistLock read = start(ReportConfiguration.class).getBean(LockRegistry.class).getReadWriteLock("report").readLock();
		assertThat(read.tryLock(Duration.ofMillis(200))).as("a reader got in while the Mono wrote").isFalse();
		finish.countDown();
		assertThat(rebuilt.get(30, TimeUnit.SECONDS)).isEqualTo("rebuilt");
		assertThat(read.tryLock(Duration.ofSeconds(10))).isTrue();
		read.unlock();
	}

	@Test
	void futuresHoldTheirPermitsUntilTheyComplete() throws Exception {
		ConfigurableApplicationContext context = start(ExportsConfiguration.class);
		Exports exports = context.getBean(Exports.class);
		CompletableFuture<String> first = new CompletableFuture<>();
		CompletableFuture<String> second = new CompletableFuture<>();
		CompletableFuture<String> firstExport = exports.export(first);
		CompletableFuture<String> secondExport = exports.export(second);
		LockRegistry registry = context.getBean(LockRegistry.class);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (registry.heldLocks().stream().filter(hold -> hold.kind() == HoldKind.PERMIT).count() < 2) {
			assertThat(System.nanoTime() - deadline).as("both permits taken within 30 s").isNegative();
			Thread.sleep(10);
		}
		// Both methods have returned their futures; their work, and so their permits, goes on.
		DistSemaphore other = start(ExportsConfiguration.class).getBean(LockRegistry.class).getSemaphore("exports", 2);
		assertThat(other.tryAcquire(Duration.ofMillis(200))).as("a third permit while both exports run").isFalse();
		first.complete("exported");
		assertThat(firstExport.get(30, TimeUnit.SECONDS)).isEqualTo("exported");
		assertThat(other.tryAcquire(Duration.ofSeconds(10))).as("the permit the finished export gave back").isTrue();
		other.release();
		second.complete("exported");
		assertThat(secondExport.get(30, TimeUnit.SECONDS)).isEqualTo("exported");
	}

	@Test
	void aModeWithPermitsStopsStartUpNamingTheMethod() {
		assertThatThrownBy(() -> start(ModeAndPermitsConfiguration.class)).satisfies(failure -> {
			Throwable cause = invalidAnnotation(failure);
			assertThat(cause.getMessage()).contains("ModeAndPermits.read()")
				.contains("mode = READ with permits = 3")
				.contains("use one of them");
		});
	}

	@Test
	void aRegistryWithoutReadWriteLocksStopsStartUpNamingTheMethod() {
		assertThatThrownBy(() -> start(PlainRegistryConfiguration.class)).satisfies(failure -> {
			Throwable cause = invalidAnnotation(failure);
			assertThat(cause.getMessage()).contains("PlainRegistryReader.read()")
				.contains("mode = READ takes a read-write lock")
				.contains("does not offer");
		});
	}

	private static Throwable invalidAnnotation(Throwable failure) {
		Throwable cause = failure;
		while (cause != null && !(cause instanceof InvalidLockAnnotationException)) {
			cause = cause.getCause();
		}
		assertThat(cause).as("InvalidLockAnnotationException in %s", failure).isNotNull();
		return cause;
	}

	private static void awaitHeld(LockRegistry registry, HoldKind kind) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (registry.heldLocks().stream().map(HoldInfo::kind).noneMatch(kind::equals)) {
			assertThat(System.nanoTime() - deadline).as("a %s hold within 30 s", kind).isNegative();
			Thread.sleep(10);
		}
	}

	/** Two values a writer changes one after the other: a reader that sees them differ saw half a write. */
	static final class SharedState {

		volatile int left;

		volatile int right;

		final AtomicInteger halfWritesSeen = new AtomicInteger();

	}

	/** How many calls are inside now, and the most there ever were. */
	static final class Gauge {

		final AtomicInteger inside = new AtomicInteger();

		final AtomicInteger most = new AtomicInteger();

	}

	static class Report {

		@DistributedLock(key = "'report'", mode = LockMode.READ)
		public boolean read(CountDownLatch allInside) throws InterruptedException {
			allInside.countDown();
			return allInside.await(30, TimeUnit.SECONDS);
		}

		@DistributedLock(key = "'report'", mode = LockMode.WRITE)
		public void write(SharedState state) {
			// Read, yield, write back: without the write lock, two writers lose updates, and a reader
			// between the two halves sees them differ.
			int left = state.left;
			Thread.yield();
			state.left = left + 1;
			Thread.yield();
			state.right = state.right + 1;
		}

		@DistributedLock(key = "'report'", mode = LockMode.READ)
		public void check(SharedState state) {
			if (state.left != state.right) {
				state.halfWritesSeen.incrementAndGet();
			}
		}

		@DistributedLock(key = "'report'", mode = LockMode.WRITE)
		public Mono<String> rebuild(CountDownLatch finish) {
			return Mono.fromCallable(() -> {
				finish.await(30, TimeUnit.SECONDS);
				return "rebuilt";
			}).subscribeOn(reactor.core.scheduler.Schedulers.boundedElastic());
		}

	}

	static class Payments {

		@DistributedLock(key = "'payment-provider'", permits = 3)
		public void call(Gauge gauge) throws InterruptedException {
			int now = gauge.inside.incrementAndGet();
			gauge.most.accumulateAndGet(now, Math::max);
			// Long enough for the others to crowd in: without the semaphore, the gauge passes 3.
			Thread.sleep(5);
			gauge.inside.decrementAndGet();
		}

	}

	static class Exports {

		@DistributedLock(key = "'exports'", permits = 2)
		public CompletableFuture<String> export(CompletableFuture<String> finish) {
			return finish;
		}

	}

	static class ModeAndPermits {

		@DistributedLock(key = "'report'", mode = LockMode.READ, permits = 3)
		public void read() {
		}

	}

	static class PlainRegistryReader {

		@DistributedLock(key = "'report'", mode = LockMode.READ, registry = "plainLocks")
		public void read() {
		}

	}

	/** A registry of another library: exclusive locks only. */
	static final class PlainRegistry implements LockRegistry {

		@Override
		public DistLock getLock(String name) {
			throw new UnsupportedOperationException("not used here");
		}

		@Override
		public List<HoldInfo> heldLocks() {
			return List.of();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ReportConfiguration {

		@Bean
		Report report() {
			return new Report();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PaymentsConfiguration {

		@Bean
		Payments payments() {
			return new Payments();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ExportsConfiguration {

		@Bean
		Exports exports() {
			return new Exports();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ModeAndPermitsConfiguration {

		@Bean
		ModeAndPermits modeAndPermits() {
			return new ModeAndPermits();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PlainRegistryConfiguration {

		@Bean(defaultCandidate = false)
		PlainRegistry plainLocks() {
			return new PlainRegistry();
		}

		@Bean
		PlainRegistryReader plainRegistryReader() {
			return new PlainRegistryReader();
		}

	}

}
