package io.distlock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.annotation.Before;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.distlock.DistLock;
import io.distlock.annotation.LockAcquisitionException;
import io.distlock.LockRegistry;
import io.distlock.LockRegistryStats;
import io.distlock.WorkHold;
import io.distlock.aop.DistributedLockObserver;
import io.distlock.testing.RedisServerExtension;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Methods whose work ends after they return, locked until it ends: futures and Reactor's Mono and
 * Flux, called on two application instances against one real Redis. A shared count of bodies inside
 * would exceed 1 without the lock.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DeferredLockedMethodsTests {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

	private Work first;

	private Work second;

	@BeforeEach
	void startTwoInstances() {
		Work.reset();
		this.first = start().getBean(Work.class);
		this.second = start().getBean(Work.class);
	}

	@AfterEach
	void closeContexts() {
		this.contexts.forEach(ConfigurableApplicationContext::close);
	}

	private ConfigurableApplicationContext start() {
		ConfigurableApplicationContext context = new SpringApplicationBuilder(LockTestApplication.class, WorkConfiguration.class)
			.web(WebApplicationType.NONE)
			.properties("spring.data.redis.port=" + redis.server().port(),
					"spring.datasource.url=jdbc:h2:mem:deferred;DB_CLOSE_DELAY=-1", "test.lock-wait=750ms",
					"distlock.restart-grace=0", "spring.main.banner-mode=off")
			.run();
		this.contexts.add(context);
		return context;
	}

	@Test
	void aFutureKeepsItsLockUntilItsWorkCompletes() throws Exception {
		List<CompletableFuture<Integer>> calls = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			calls.add(((i % 2 == 0) ? this.first : this.second).future());
		}
		for (CompletableFuture<Integer> call : calls) {
			assertThat(call.get(60, TimeUnit.SECONDS)).isPositive();
		}
		assertThat(Work.maxInside("future")).as("bodies inside at once, across two instances").isEqualTo(1);
		assertThat(Work.runs("future")).isEqualTo(6);
	}

	@Test
	void monosTakeTheirLockOnSubscriptionAndKeepItUntilTheyComplete() {
		// Assembled on one thread first: assembling takes no lock, so this cannot deadlock.
		List<Mono<Integer>> monos = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			monos.add(((i % 2 == 0) ? this.first : this.second).mono());
		}
		assertThat(Work.runs("mono")).isZero();
		List<Integer> results = Flux.merge(monos).collectList().block(Duration.ofSeconds(60));
		assertThat(results).hasSize(6);
		assertThat(Work.maxInside("mono")).as("bodies inside at once, across two instances").isEqualTo(1);
	}

	@Test
	void fluxesKeepTheirLockUntilTheLastElement() {
		List<Flux<Integer>> fluxes = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			fluxes.add(((i % 2 == 0) ? this.first : this.second).flux());
		}
		List<Integer> elements = Flux.merge(fluxes).collectList().block(Duration.ofSeconds(60));
		assertThat(elements).hasSize(12);
		assertThat(Work.maxInside("flux")).as("streams emitting at once, across two instances").isEqualTo(1);
	}

	@Test
	void aFailedFutureReleasesItsLockAtOnce() throws Exception {
		CompletableFuture<Integer> failing = this.first.failing();
		assertThat(failing).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(ExecutionException.class)
			.withMessageContaining("work failed");
		DistLock other = registry(1).getLock("failing");
		await().pollInSameThread().atMost(Duration.ofSeconds(2)).until(other::tryLock);
		other.unlock();
	}

	@Test
	void aCancelledMonoReleasesItsLock() throws Exception {
		Disposable subscription = this.first.forever().subscribe();
		DistLock other = registry(1).getLock("forever");
		await().atMost(Duration.ofSeconds(10)).until(() -> Work.runs("forever") == 1);
		assertThat(other.tryLock()).as("held while the Mono runs").isFalse();
		subscription.dispose();
		await().pollInSameThread().atMost(Duration.ofSeconds(5)).until(other::tryLock);
		other.unlock();
	}

	@Test
	void failurePoliciesAnswerInTheMethodsOwnType() throws Exception {
		DistLock busy = registry(1).getLock("busy");
		assertThat(busy.tryLock()).isTrue();
		try {
			// No synchronous throw: the failure travels in the Mono and the future.
			Mono<String> thrown = this.first.busyMono();
			assertThat(thrown.onErrorResume(LockAcquisitionException.class, ex -> Mono.just("failed: " + ex.getMessage()))
				.block(Duration.ofSeconds(10))).startsWith("failed: Could not acquire lock 'busy'");
			assertThat(this.first.busyMonoSkipped().block(Duration.ofSeconds(10))).isEqualTo("skipped");
			CompletableFuture<String> future = this.first.busyFuture();
			assertThat(future).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(ExecutionException.class)
				.withCauseInstanceOf(LockAcquisitionException.class);
			assertThat(this.first.busyFutureSkipped().get(10, TimeUnit.SECONDS)).isEqualTo("skipped");
		}
		finally {
			busy.unlock();
		}
		assertThat(Work.runs("busy")).as("no body ran without its lock").isZero();
	}

	@Test
	void aThousandConcurrentMonoSubscriptionsOverTenKeysNeverOverlap() {
		List<Mono<Integer>> monos = new ArrayList<>();
		for (int i = 0; i < 1000; i++) {
			monos.add(((i % 2 == 0) ? this.first : this.second).keyed(i % 10));
		}
		List<Integer> results = Flux.merge(Flux.fromIterable(monos), 1000).collectList().block(Duration.ofSeconds(150));
		assertThat(results).hasSize(1000);
		for (int key = 0; key < 10; key++) {
			assertThat(Work.maxInside("keyed-" + key)).as("bodies of key %d inside at once", key).isEqualTo(1);
		}
	}

	@Test
	void monosWaitingForTheirLockTakeNoThread() throws Exception {
		WorkHold holder = registry(1).tryLockForWork("keyed-42", Duration.ZERO, null).orElseThrow();
		try {
			// One waiting subscription first, so that whatever any wait needs runs already.
			List<Mono<Integer>> monos = new ArrayList<>(List.of(this.first.keyed(42)));
			Flux<Integer> first = Flux.merge(monos.get(0)).cache();
			first.subscribe();
			await().atMost(Duration.ofSeconds(10)).until(() -> waitingIn(0) == 1);
			int before = Thread.activeCount();
			for (int i = 1; i < 200; i++) {
				monos.add(((i % 2 == 0) ? this.first : this.second).keyed(42));
			}
			Flux<Integer> rest = Flux.merge(Flux.fromIterable(monos.subList(1, 200)), 200).cache();
			rest.subscribe();
			await().atMost(Duration.ofSeconds(10)).until(() -> waitingIn(0) + waitingIn(1) == 200);
			// Each instance's call pool may grow to its 8 threads; a thread per wait would add 199 (the
			// lock-wait scheduler used before, 64).
			assertThat(Thread.activeCount() - before).as("threads added by 199 waiting subscriptions").isLessThan(40);
			assertThat(Work.runs("keyed-42")).isZero();
			holder.release();
			assertThat(first.concatWith(rest).collectList().block(Duration.ofSeconds(120))).hasSize(200);
			assertThat(Work.maxInside("keyed-42")).isEqualTo(1);
		}
		finally {
			holder.release();
		}
	}

	private int waitingIn(int instance) {
		return ((LockRegistryStats) registry(instance)).waitingThreads();
	}

	@Test
	void aMonoCancelledJustAfterItTookItsLockGivesItBack() throws Exception {
		SlowObserver.pause.set(new CountDownLatch(1));
		Disposable subscription = this.first.cancelledMono().subscribe();
		// The lock is taken; the subscription is cancelled before the work could claim it.
		assertThat(SlowObserver.pause.get().await(10, TimeUnit.SECONDS)).isTrue();
		subscription.dispose();
		DistLock other = registry(1).getLock("cancelled-mono");
		await().pollInSameThread().atMost(Duration.ofSeconds(10)).until(other::tryLock);
		other.unlock();
		assertThat(Work.runs("cancelled-mono")).as("the work never ran").isZero();
	}

	@Test
	void aFutureTimedOutByItsCallerKeepsItsLockUntilItsWorkEnds() throws Exception {
		CompletableFuture<Integer> timedOut = this.first.slowFuture().orTimeout(50, TimeUnit.MILLISECONDS);
		assertThat(timedOut).failsWithin(Duration.ofSeconds(5));
		CompletableFuture<Integer> next = this.second.slowFuture();
		assertThat(next.get(30, TimeUnit.SECONDS)).isEqualTo(1);
		assertThat(Work.maxInside("slow")).as("the timed-out work and the next inside at once").isEqualTo(1);
	}

	@Test
	void holdersOnTheBoundedElasticSchedulerAreNotStarvedByWaiters() {
		List<Mono<Integer>> monos = new ArrayList<>();
		for (int i = 0; i < 48; i++) {
			monos.add(((i % 2 == 0) ? this.first : this.second).elasticBody());
		}
		List<Integer> results = Flux.merge(Flux.fromIterable(monos), 48).collectList().block(Duration.ofSeconds(60));
		assertThat(results).hasSize(48);
		assertThat(Work.maxInside("elastic")).isEqualTo(1);
	}

	@Test
	void aspectsOrderedAfterTheLockRunOnReactiveMethods() {
		assertThat(this.first.aspectMono().block(Duration.ofSeconds(10))).isEqualTo("ran");
		assertThat(CountingAspect.calls).hasValue(1);
	}

	private LockRegistry registry(int instance) {
		return this.contexts.get(instance).getBean(LockRegistry.class);
	}

	/** Locked methods whose work ends later; counts bodies inside per key across both instances. */
	static class Work {

		private static final Map<String, AtomicInteger> inside = new ConcurrentHashMap<>();

		private static final Map<String, AtomicInteger> maxInside = new ConcurrentHashMap<>();

		private static final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		static void reset() {
			CountingAspect.calls.set(0);
			inside.clear();
			maxInside.clear();
			runs.clear();
		}

		static int maxInside(String key) {
			return maxInside.getOrDefault(key, new AtomicInteger()).get();
		}

		static int runs(String key) {
			return runs.getOrDefault(key, new AtomicInteger()).get();
		}

		private static void enter(String key) {
			runs.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
			int now = inside.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
			maxInside.computeIfAbsent(key, k -> new AtomicInteger()).accumulateAndGet(now, Math::max);
		}

		private static void exit(String key) {
			inside.get(key).decrementAndGet();
		}

		@DistributedLock(key = "'future'", waitTime = "30s")
		public CompletableFuture<Integer> future() {
			return CompletableFuture.supplyAsync(() -> {
				enter("future");
				try {
					Thread.sleep(40);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				exit("future");
				return 1;
			});
		}

		@DistributedLock(key = "'mono'", waitTime = "30s")
		public Mono<Integer> mono() {
			return Mono.fromRunnable(() -> enter("mono"))
				.then(Mono.delay(Duration.ofMillis(40)))
				.then(Mono.fromCallable(() -> {
					exit("mono");
					return 1;
				}));
		}

		@DistributedLock(key = "'flux'", waitTime = "30s")
		public Flux<Integer> flux() {
			return Flux.range(1, 3)
				.delayElements(Duration.ofMillis(15))
				.doOnSubscribe(subscription -> enter("flux"))
				.doOnComplete(() -> exit("flux"));
		}

		@DistributedLock(key = "'failing'")
		public CompletableFuture<Integer> failing() {
			return CompletableFuture.supplyAsync(() -> {
				throw new IllegalStateException("work failed");
			}, CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS));
		}

		@DistributedLock(key = "'forever'")
		public Mono<Integer> forever() {
			return Mono.fromRunnable(() -> enter("forever")).then(Mono.never());
		}

		@DistributedLock(key = "'busy'", waitTime = "100ms")
		public Mono<String> busyMono() {
			return Mono.fromCallable(() -> {
				enter("busy");
				return "ran";
			});
		}

		@DistributedLock(key = "'busy'", waitTime = "100ms", onFailure = OnLockFailure.SKIP, fallback = "'skipped'")
		public Mono<String> busyMonoSkipped() {
			return Mono.fromCallable(() -> {
				enter("busy");
				return "ran";
			});
		}

		@DistributedLock(key = "'busy'", waitTime = "100ms")
		public CompletableFuture<String> busyFuture() {
			enter("busy");
			return CompletableFuture.completedFuture("ran");
		}

		@DistributedLock(key = "'busy'", waitTime = "100ms", onFailure = OnLockFailure.SKIP, fallback = "'skipped'")
		public CompletableFuture<String> busyFutureSkipped() {
			enter("busy");
			return CompletableFuture.completedFuture("ran");
		}

		@DistributedLock(key = "'cancelled-mono'", waitTime = "10s")
		public Mono<Integer> cancelledMono() {
			return Mono.fromCallable(() -> {
				enter("cancelled-mono");
				exit("cancelled-mono");
				return 1;
			});
		}

		@DistributedLock(key = "'slow'", waitTime = "30s")
		public CompletableFuture<Integer> slowFuture() {
			return CompletableFuture.supplyAsync(() -> {
				enter("slow");
				try {
					Thread.sleep(400);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				exit("slow");
				return 1;
			});
		}

		@DistributedLock(key = "'elastic'", waitTime = "45s")
		public Mono<Integer> elasticBody() {
			// Blocking work on Reactor's bounded-elastic scheduler, the usual way to call JDBC.
			return Mono.fromCallable(() -> {
				enter("elastic");
				Thread.sleep(10);
				exit("elastic");
				return 1;
			}).subscribeOn(Schedulers.boundedElastic());
		}

		@DistributedLock(key = "'aspect'")
		public Mono<String> aspectMono() {
			return Mono.just("ran");
		}

		@DistributedLock(key = "'keyed-' + #key", waitTime = "120s")
		public Mono<Integer> keyed(int key) {
			String name = "keyed-" + key;
			return Mono.fromRunnable(() -> enter(name))
				.then(Mono.delay(Duration.ofMillis(1), Schedulers.parallel()))
				.then(Mono.fromCallable(() -> {
					exit(name);
					return key;
				}));
		}

	}

	/**
	 * Holds the thread that took 'cancelled-mono' just after it was taken, so that the test can cancel
	 * the subscription before the work claims the lock.
	 */
	static class SlowObserver implements DistributedLockObserver {

		static final AtomicReference<CountDownLatch> pause = new AtomicReference<>();

		@Override
		public void acquisition(String lockName, Outcome outcome, Duration waited) {
			CountDownLatch latch = pause.get();
			if (latch != null && "Work.cancelledMono".equals(lockName) && outcome == Outcome.ACQUIRED) {
				pause.set(null);
				latch.countDown();
				try {
					Thread.sleep(500);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		}

		@Override
		public void released(String lockName, Duration heldFor) {
		}

	}

	/** An aspect with the default order, so it runs after the lock's advice. */
	@Aspect
	static class CountingAspect {

		static final AtomicInteger calls = new AtomicInteger();

		@Before("execution(* io.distlock.annotation.DeferredLockedMethodsTests.Work.aspectMono(..))")
		void count() {
			calls.incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class WorkConfiguration {

		@Bean
		Work deferredWork() {
			return new Work();
		}

		@Bean
		SlowObserver slowObserver() {
			return new SlowObserver();
		}

		@Bean
		CountingAspect countingAspect() {
			return new CountingAspect();
		}

	}

}
