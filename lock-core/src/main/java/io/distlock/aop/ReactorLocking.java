package io.distlock.aop;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongSupplier;

import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.interceptor.ExposeInvocationInterceptor;
import org.springframework.core.KotlinDetector;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.function.SingletonSupplier;

import io.distlock.annotation.LockContext;
import io.micrometer.observation.Observation;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.ContextView;

/**
 * The deferred locking of Reactor's {@link Mono} and {@link Flux}: the locks are taken on
 * subscription (assembling a Mono takes nothing), held until it completes, fails or is cancelled,
 * waited for without any thread (the registry's non-blocking acquisition), and released on threads
 * of distlock's own, so no event-loop thread ever waits for a lock. Loaded only where Reactor is on
 * the classpath.
 *
 * <p>Other reactive types are locked the same way through Spring's {@link ReactiveAdapterRegistry}
 * (RxJava 3, Mutiny, Kotlin {@code Flow}): the caller gets its declared type back, adapted from a
 * locked Mono or Flux. Kotlin {@code suspend} functions need no adapter: Spring's proxy hands their
 * call on as a Mono (a Flux for a {@code Flow} result) and turns what this returns back into the
 * coroutine's result, so cancelling the coroutine cancels the hold's subscription.
 *
 * <p>The observations of a subscription are children of the subscriber's observation, found in its
 * context where Micrometer's Reactor support and Spring WebFlux put it, else of the caller's when the
 * method was called; the hold is the current observation of the work's own subscribers in turn.
 */
final class ReactorLocking {

	/**
	 * Where a method runs once its locks are taken: Reactor's bounded-elastic scheduler, where its
	 * assembly may block as it could on the subscribing thread of a blocking caller.
	 */
	private static final SingletonSupplier<Scheduler> WORK = SingletonSupplier.of(Schedulers::boundedElastic);

	private static final SingletonSupplier<Scheduler> RELEASES = SingletonSupplier
		.of(() -> Schedulers.fromExecutorService(WorkHolds.RELEASES, "distlock-release"));

	/** Marks a subscription cancelled before its locks were taken. */
	private static final Object CANCELLED = new Object();

	/**
	 * Where a Reactor context holds the current observation: Micrometer's
	 * {@code ObservationThreadLocalAccessor.KEY}, written out so that context-propagation, which that
	 * class needs, need not be present.
	 */
	private static final String OBSERVATION_KEY = "micrometer.observation";

	private ReactorLocking() {
	}

	static Object invoke(LockAspectSupport support, MethodInvocation invocation, LockedCall call) {
		// What the proxy will make of the result: it decides by the method it was called through.
		Method method = invocation.getMethod();
		if (KotlinDetector.isSuspendingFunction(method)) {
			return locked(support, invocation, call, !DeferredResultTypes.suspendReturnsFlow(method));
		}
		ReactiveAdapterRegistry adapters = ReactiveAdapterRegistry.getSharedInstance();
		Class<?> type = method.getReturnType();
		if (adapters.getAdapter(type) == null) {
			// Declared as Object where it was called (a generic interface), as a reactive type where
			// it was written.
			type = call.attribute().method().getReturnType();
		}
		if (Mono.class.isAssignableFrom(type) || Flux.class.isAssignableFrom(type)) {
			return locked(support, invocation, call, Mono.class.isAssignableFrom(type));
		}
		ReactiveAdapter adapter = adapters.getAdapter(type);
		if (adapter == null) {
			throw new IllegalStateException("No reactive adapter for " + type.getName() + " of " + method);
		}
		return adapter.fromPublisher(locked(support, invocation, call, !adapter.isMultiValue()));
	}

	private static Publisher<Object> locked(LockAspectSupport support, MethodInvocation invocation, LockedCall call,
			boolean single) {
		Observation caller = support.currentObservation();
		Mono<WorkHolds> acquire = Mono
			.deferContextual(context -> acquireOnce(support, call, subscriberObservation(context, caller)));
		Function<WorkHolds, Publisher<Object>> body = acquired -> {
			if (acquired.failure() != null) {
				return failure(support, call, acquired);
			}
			// Given back by a cancel that raced the delivery: the work must not run without them.
			return acquired.claim() ? proceed(invocation, call, acquired) : Mono.empty();
		};
		BiFunction<WorkHolds, Throwable, Publisher<Object>> release = (acquired, error) -> Mono
			.<Object>fromRunnable(() -> acquired.release(support, call, error))
			.subscribeOn(RELEASES.get());
		Function<WorkHolds, Publisher<Object>> ended = acquired -> release.apply(acquired, null);
		// A cancel returns before a coroutine's body has stopped: its holds wait for it.
		Function<WorkHolds, Publisher<Object>> cancel = acquired -> Mono
			.<Void>create(stopped -> acquired.afterCancelledWork(stopped::success))
			.then(Mono.from(ended.apply(acquired)));
		if (single) {
			return Mono.usingWhen(acquire, acquired -> Mono.from(body.apply(acquired)), ended, release, cancel);
		}
		return Flux.usingWhen(acquire, body, ended, release, cancel);
	}

	/** @return the subscriber's observation if its context has one, else the caller's (or {@code null}) */
	private static Observation subscriberObservation(ContextView context, Observation caller) {
		Object subscriber = context.getOrDefault(OBSERVATION_KEY, null);
		return (subscriber instanceof Observation observation) ? observation : caller;
	}

	/**
	 * One subscription's acquisition, which waits without a thread. A cancel can arrive while the
	 * locks are being taken (the acquisition gives up and gives back what it took), or after they
	 * were taken but before the work claimed them, and Reactor drops a value that arrives after a
	 * cancel: then the holds are given back here, unless the work claimed them first (then
	 * {@code usingWhen} releases them when the work ends).
	 */
	private static Mono<WorkHolds> acquireOnce(LockAspectSupport support, LockedCall call, Observation parent) {
		AtomicReference<Object> state = new AtomicReference<>();
		CompletableFuture<WorkHolds> acquisition = DeferredAcquisition.start(support, call, parent);
		CompletableFuture<WorkHolds> delivered = acquisition.thenApply(acquired -> {
			if (!state.compareAndSet(null, acquired) && acquired.giveBack()) {
				RELEASES.get().schedule(() -> acquired.release(support, call));
			}
			return acquired;
		});
		// The method and its publisher run on a thread that may block, not on distlock's call threads.
		return Mono.fromFuture(delivered, true).publishOn(WORK.get()).doOnDiscard(WorkHolds.class, dropped -> {
			// A value dropped without a cancel (a scheduler that rejected the delivery): given back.
			if (dropped.giveBack()) {
				RELEASES.get().schedule(() -> dropped.release(support, call));
			}
		}).doOnCancel(() -> {
			Object previous = state.getAndSet(CANCELLED);
			if (previous == null) {
				acquisition.cancel(false);
			}
			else if (previous instanceof WorkHolds acquired && acquired.giveBack()) {
				RELEASES.get().schedule(() -> acquired.release(support, call));
			}
		});
	}

	private static Publisher<Object> proceed(MethodInvocation invocation, LockedCall call,
			WorkHolds acquired) {
		// Each subscription runs the method anew, as a resubscribed Mono would.
		MethodInvocation fresh = (invocation instanceof ProxyMethodInvocation proxied) ? proxied.invocableClone()
				: invocation;
		Map<String, LongSupplier> tokens = acquired.tokens(call.locks().offersFencingTokens());
		if (KotlinDetector.isSuspendingFunction(invocation.getMethod()) && fresh instanceof ProxyMethodInvocation clone) {
			Object[] arguments = clone.getArguments().clone();
			acquired.ending().set(CoroutineBody.follow(arguments, tokens));
			clone.setArguments(arguments);
		}
		LockContext.push(tokens);
		try (LockObservation.HoldScope scope = acquired.observation().openHoldScope()) {
			// Later advice (AspectJ aspects, AopContext) looks the invocation up in a thread-local
			// that this thread (a bounded-elastic one) does not have.
			return underHold(asPublisher(ExposeInvocationInterceptor.INSTANCE.invoke(fresh)),
					acquired.observation().hold());
		}
		catch (Throwable ex) {
			return Mono.error(ex);
		}
		finally {
			LockContext.pop();
		}
	}

	/**
	 * @return the work with the hold as its subscribers' current observation, where Micrometer's Reactor
	 * support and Spring's reactive clients look for their parent
	 */
	private static Publisher<Object> underHold(Publisher<Object> work, Observation hold) {
		// A hold turned off is no parent: the subscriber's own observation stays the work's.
		if (hold == null || hold.isNoop()) {
			return work;
		}
		if (work instanceof Mono<Object> mono) {
			return mono.contextWrite(context -> context.put(OBSERVATION_KEY, hold));
		}
		return Flux.from(work).contextWrite(context -> context.put(OBSERVATION_KEY, hold));
	}

	private static Publisher<Object> failure(LockAspectSupport support, LockedCall call,
			WorkHolds acquired) {
		Object value;
		try {
			value = support.onFailure(call, acquired.failure());
		}
		catch (Throwable ex) {
			// THROW: an error signal, not a throw from the method.
			return Mono.error(ex);
		}
		return asPublisher(value);
	}

	/** A method's result, or a fallback value, of whichever type: as a Publisher of its values. */
	@SuppressWarnings("unchecked")
	private static Publisher<Object> asPublisher(Object value) {
		if (value == null) {
			return Mono.empty();
		}
		if (value instanceof Publisher<?> publisher) {
			return (Publisher<Object>) publisher;
		}
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(value.getClass());
		return (adapter != null) ? (Publisher<Object>) adapter.toPublisher(value) : Mono.just(value);
	}

}
