package io.distlock.aop;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistLock;
import io.distlock.HoldInfo;
import io.distlock.LockBackendException;
import io.distlock.LockRegistry;
import io.distlock.annotation.DistributedLock;
import io.distlock.annotation.OnLockFailure;
import io.distlock.core.LockEngineOptions;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.testing.ClosedAfterEach;
import io.distlock.testing.RedisServerExtension;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.tck.TestObservationRegistry;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.context.Context;

/**
 * {@code @DistributedLock} calls as Micrometer observations, as a tracer sees them: the wait
 * ({@code distlock.acquire}) and the hold ({@code distlock.hold}) of every kind of method, children of
 * the caller's observation, on a real Redis.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DistributedLockObservationTest {

	/** Where Micrometer's Reactor support keeps the current observation (ObservationThreadLocalAccessor.KEY). */
	private static final String OBSERVATION_KEY = "micrometer.observation";

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	private final TestObservationRegistry observations = TestObservationRegistry.create();

	@Test
	void aBlockingCallIsObservedAsItsWaitThenItsHoldAroundTheMethod() {
		Orders target = new Orders(this.observations);
		Orders orders = proxy(target, registry());
		Observation caller = Observation.start("caller", this.observations);
		try (Observation.Scope scope = caller.openScope()) {
			assertThat(orders.place("42")).isEqualTo("42");
		}
		finally {
			caller.stop();
		}

		assertThat(this.observations).hasObservationWithNameEqualTo("distlock.acquire")
			.that()
			.hasBeenStarted()
			.hasBeenStopped()
			.hasContextualNameEqualTo("acquire orders")
			.hasLowCardinalityKeyValue("distlock.lock", "orders")
			.hasLowCardinalityKeyValue("distlock.registry", "default")
			.hasLowCardinalityKeyValue("distlock.outcome", "acquired")
			.hasHighCardinalityKeyValue("distlock.keys", "orders:order:42")
			.doesNotHaveError()
			.hasParentObservationEqualTo(caller);
		assertThat(this.observations).hasObservationWithNameEqualTo("distlock.hold")
			.that()
			.hasBeenStarted()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("distlock.lock", "orders")
			.hasLowCardinalityKeyValue("distlock.registry", "default")
			.doesNotHaveLowCardinalityKeyValueWithKey("distlock.outcome")
			.hasHighCardinalityKeyValue("distlock.keys", "orders:order:42")
			.hasParentObservationEqualTo(caller);
		// The method ran with the hold as the current observation: what it observes is the hold's child.
		assertThat(target.seenInside).isNotNull()
			.satisfies(inside -> assertThat(inside.getContextView().getName()).isEqualTo("distlock.hold"));
	}

	@Test
	void aWaitThatTimesOutIsObservedWithItsOutcomeAndNoHold() {
		RedisLockRegistry mine = registry();
		DistLock heldElsewhere = registry().getLock("order:9");
		assertThat(heldElsewhere.tryLock()).isTrue();
		try {
			assertThat(proxy(new Orders(this.observations), mine).placeQuickly("9")).isNull();
		}
		finally {
			heldElsewhere.unlock();
		}

		assertThat(this.observations).hasObservationWithNameEqualTo("distlock.acquire")
			.that()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("distlock.outcome", "timed_out")
			.hasLowCardinalityKeyValue("distlock.lock", "Orders.placeQuickly")
			.doesNotHaveError()
			.doesNotHaveParentObservation();
		assertThat(this.observations).hasNumberOfObservationsWithNameEqualTo("distlock.hold", 0);
	}

	@Test
	void aBackendFailureIsTheWaitsError() {
		LockBackendException down = new LockBackendException("order:5", "Redis did not answer", null);
		Orders orders = proxy(new Orders(this.observations), failing(registry(), down));

		assertThat(orders.placeQuickly("5")).isNull();

		assertThat(this.observations).hasObservationWithNameEqualTo("distlock.acquire")
			.that()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("distlock.outcome", "failed")
			.hasError(down);
		assertThat(this.observations).hasNumberOfObservationsWithNameEqualTo("distlock.hold", 0);
	}

	@Test
	void aMonosHoldEndsWhenItCompletesNotWhenItIsReturned() throws Exception {
		Orders orders = proxy(new Orders(this.observations), registry());
		Sinks.One<String> done = Sinks.one();
		Observation caller = Observation.start("caller", this.observations);
		Mono<String> placed;
		try (Observation.Scope scope = caller.openScope()) {
			placed = orders.placeLater("7", done.asMono());
		}
		CompletableFuture<String> result = placed.toFuture();

		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(this.observations).hasObservationWithNameEqualTo("distlock.hold")
				.that()
				.hasBeenStarted());
		assertThat(this.observations).hasObservationWithNameEqualTo("distlock.hold").that().isNotStopped();
		assertThat(this.observations).hasObservationWithNameEqualTo("distlock.acquire")
			.that()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("distlock.outcome", "acquired")
			.hasParentObservationEqualTo(caller);

		done.tryEmitValue("placed");
		assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("placed");
		caller.stop();
		assertThat(this.observations).hasObservationWithNameEqualTo("distlock.hold")
			.that()
			.hasBeenStopped()
			.hasHighCardinalityKeyValue("distlock.keys", "orders:order:7")
			.hasParentObservationEqualTo(caller);
	}

	@Test
	void aMonoTakesItsParentFromItsSubscribersContextAndGivesItsWorkTheHold() throws Exception {
		Orders orders = proxy(new Orders(this.observations), registry());
		Observation subscriber = Observation.start("subscriber", this.observations);

		Object seenByTheWork = orders.observationOfTheWork("3")
			.contextWrite(Context.of(OBSERVATION_KEY, subscriber))
			.toFuture()
			.get(10, TimeUnit.SECONDS);
		subscriber.stop();

		assertThat(this.observations).hasObservationWithNameEqualTo("distlock.acquire")
			.that()
			.hasParentObservationEqualTo(subscriber);
		assertThat(this.observations).hasObservationWithNameEqualTo("distlock.hold")
			.that()
			.hasBeenStopped()
			.hasParentObservationEqualTo(subscriber);
		assertThat(seenByTheWork).isInstanceOfSatisfying(Observation.class,
				hold -> assertThat(hold.getContextView().getName()).isEqualTo("distlock.hold"));
	}

	@Test
	void aFuturesHoldEndsWhenItsWorkCompletesNotWhenItIsReturned() throws Exception {
		Orders target = new Orders(this.observations);
		Orders orders = proxy(target, registry());
		CompletableFuture<String> work = new CompletableFuture<>();
		Observation caller = Observation.start("caller", this.observations);
		CompletableFuture<String> returned;
		try (Observation.Scope scope = caller.openScope()) {
			returned = orders.placeAsync("8", work);
		}

		assertThat(this.observations).hasObservationWithNameEqualTo("distlock.hold")
			.that()
			.hasBeenStarted()
			.isNotStopped()
			.hasParentObservationEqualTo(caller);
		assertThat(target.seenInside.getContextView().getName()).isEqualTo("distlock.hold");

		work.complete("placed");
		assertThat(returned.get(10, TimeUnit.SECONDS)).isEqualTo("placed");
		caller.stop();
		assertThat(this.observations).hasObservationWithNameEqualTo("distlock.hold").that().hasBeenStopped();
		assertThat(this.observations).hasObservationWithNameEqualTo("distlock.acquire")
			.that()
			.hasLowCardinalityKeyValue("distlock.outcome", "acquired")
			.hasParentObservationEqualTo(caller);
	}

	@Test
	void aFailingObservationHandlerNeitherFailsTheCallNorKeepsItsLock() {
		this.observations.observationConfig().observationHandler(new ObservationHandler<DistLockObservationContext>() {

			@Override
			public void onStop(DistLockObservationContext context) {
				throw new IllegalStateException("a broken tracer");
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return context instanceof DistLockObservationContext;
			}

		});
		Orders orders = proxy(new Orders(this.observations), registry());

		assertThat(orders.place("13")).isEqualTo("13");

		DistLock sameLockElsewhere = registry().getLock("orders:order:13");
		assertThat(sameLockElsewhere.tryLock()).as("another client can take the lock at once").isTrue();
		sameLockElsewhere.unlock();
	}

	@Test
	void aHandlerFailingAsTheHoldsScopeClosesLeavesAFuturesWorkLockedAndTheThreadClean() throws Exception {
		this.observations.observationConfig().observationHandler(new ObservationHandler<DistLockObservationContext>() {

			@Override
			public void onScopeClosed(DistLockObservationContext context) {
				throw new IllegalStateException("a broken tracer");
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return context instanceof DistLockObservationContext;
			}

		});
		Orders orders = proxy(new Orders(this.observations), registry());
		CompletableFuture<String> work = new CompletableFuture<>();

		CompletableFuture<String> returned = orders.placeAsync("21", work);

		assertThat(this.observations.getCurrentObservation()).as("the thread's observation once the call returned")
			.isNull();
		DistLock sameLockElsewhere = registry().getLock("orders:order:21");
		assertThat(sameLockElsewhere.tryLock()).as("the lock while the future's work runs").isFalse();
		work.complete("placed");
		assertThat(returned.get(10, TimeUnit.SECONDS)).isEqualTo("placed");
		await().atMost(Duration.ofSeconds(10)).pollInSameThread().until(sameLockElsewhere::tryLock);
		sameLockElsewhere.unlock();
	}

	@Test
	void aHandlerFailingOnTheErrorStillStopsTheHold() {
		this.observations.observationConfig().observationHandler(new ObservationHandler<DistLockObservationContext>() {

			@Override
			public void onError(DistLockObservationContext context) {
				throw new IllegalStateException("a broken tracer");
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return context instanceof DistLockObservationContext;
			}

		});
		Orders orders = proxy(new Orders(this.observations), registry());

		assertThatThrownBy(() -> orders.fail("22")).hasMessage("the method failed");

		assertThat(this.observations).hasObservationWithNameEqualTo("distlock.hold").that().hasBeenStopped();
	}

	private RedisLockRegistry registry() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.server().host(), redis.server().port()));
		factory.afterPropertiesSet();
		factory.start();
		this.opened.add(factory::destroy);
		RedisLockRegistry registry = new RedisLockRegistry(factory, "distlock",
				LockEngineOptions.builder().watchdogTimeout(Duration.ofSeconds(30)).build());
		this.opened.add(registry);
		return registry;
	}

	/** A registry whose locks' {@code tryLock} fails as a backend out of reach does. */
	private static LockRegistry failing(RedisLockRegistry real, LockBackendException failure) {
		return new LockRegistry() {

			@Override
			public DistLock getLock(String name) {
				DistLock lock = real.getLock(name);
				return (DistLock) Proxy.newProxyInstance(DistLock.class.getClassLoader(),
						new Class<?>[] { DistLock.class }, (proxy, method, args) -> {
							if (method.getName().equals("tryLock")) {
								throw failure;
							}
							return method.invoke(lock, args);
						});
			}

			@Override
			public List<HoldInfo> heldLocks() {
				return real.heldLocks();
			}

		};
	}

	private <T> T proxy(T target, LockRegistry registry) {
		StaticListableBeanFactory beans = new StaticListableBeanFactory(Map.of("lockRegistry", registry));
		LockAttributeSource attributes = new LockAttributeSource(beans);
		DistributedLockInterceptor interceptor = new DistributedLockInterceptor(attributes,
				beans.getBeanProvider(LockRegistry.class), () -> new LockDefaults(Duration.ofSeconds(10), null), beans,
				List::of, () -> this.observations);
		ProxyFactory proxies = new ProxyFactory(target);
		proxies.setProxyTargetClass(true);
		proxies.addAdvisor(new DistributedLockAdvisor(attributes, interceptor, 0));
		@SuppressWarnings("unchecked")
		T proxy = (T) proxies.getProxy();
		return proxy;
	}

	/** Locked methods of each kind, which note the observation current while they run. */
	static class Orders {

		private final TestObservationRegistry observations;

		volatile Observation seenInside;

		Orders(TestObservationRegistry observations) {
			this.observations = observations;
		}

		@DistributedLock(name = "orders", key = "'order:' + #id")
		public String place(String id) {
			this.seenInside = this.observations.getCurrentObservation();
			return id;
		}

		@DistributedLock(key = "'order:' + #id", waitTime = "200ms", onFailure = OnLockFailure.SKIP)
		public String placeQuickly(String id) {
			return id;
		}

		@DistributedLock(name = "orders", key = "'order:' + #id")
		public Mono<String> placeLater(String id, Mono<String> done) {
			return done;
		}

		@DistributedLock(name = "orders", key = "'order:' + #id")
		public Mono<Object> observationOfTheWork(String id) {
			return Mono.deferContextual(context -> Mono.just(context.<Object>getOrDefault(OBSERVATION_KEY, "none")));
		}

		@DistributedLock(name = "orders", key = "'order:' + #id")
		public String fail(String id) {
			throw new IllegalArgumentException("the method failed");
		}

		@DistributedLock(name = "orders", key = "'order:' + #id")
		public CompletableFuture<String> placeAsync(String id, CompletableFuture<String> work) {
			this.seenInside = this.observations.getCurrentObservation();
			return work;
		}

	}

}
