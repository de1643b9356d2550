package io.distlock.aop;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Function;

import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.interceptor.ExposeInvocationInterceptor;
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
		if (Mono.class.isAssignableFrom(call.attribute().method().getReturnType())) {
			return Mono.usingWhen(acquire, acquired -> Mono.from(body.apply(acquired)), ended, release, ended);
		}
		return Flux.usingWhen(acquire, body, ended, release, ended);
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
		return Mono.fromFuture(delivered, true).publishOn(WORK.get()).doOnCancel(() -> {
			Object previous = state.getAndSet(CANCELLED);
			if (previous == null) {
				acquisition.cancel(false);
			}
			else if (previous instanceof WorkHolds acquired && acquired.giveBack()) {
				RELEASES.get().schedule(() -> acquired.release(support, call));
			}
		});
	}

	@SuppressWarnings("unchecked")
	private static Publisher<Object> proceed(MethodInvocation invocation, LockedCall call,
			WorkHolds acquired) {
		// Each subscription runs the method anew, as a resubscribed Mono would.
		MethodInvocation fresh = (invocation instanceof ProxyMethodInvocation proxied) ? proxied.invocableClone()
				: invocation;
		LockContext.push(acquired.tokens(call.locks().offersFencingTokens()));
		try (Observation.Scope scope = acquired.observation().openHoldScope()) {
			// Later advice (AspectJ aspects, AopContext) looks the invocation up in a thread-local
			// that this thread (a bounded-elastic one) does not have.
			Object result = ExposeInvocationInterceptor.INSTANCE.invoke(fresh);
			return underHold((result != null) ? (Publisher<Object>) result : Mono.empty(),
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
		if (hold == null) {
			return work;
		}
		if (work instanceof Mono<Object> mono) {
			return mono.contextWrite(context -> context.put(OBSERVATION_KEY, hold));
		}
		return Flux.from(work).contextWrite(context -> context.put(OBSERVATION_KEY, hold));
	}

	@SuppressWarnings("unchecked")
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
		if (value instanceof Publisher<?> publisher) {
			return (Publisher<Object>) publisher;
		}
		return (value != null) ? Mono.just(value) : Mono.empty();
	}

}
