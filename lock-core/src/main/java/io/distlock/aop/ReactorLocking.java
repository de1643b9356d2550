package io.distlock.aop;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.interceptor.ExposeInvocationInterceptor;
import org.springframework.util.function.SingletonSupplier;

import io.distlock.annotation.LockContext;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * {@link DeferredLocking} for Reactor's {@link Mono} and {@link Flux}: the locks are taken on
 * subscription (assembling a Mono takes nothing), held until it completes, fails or is cancelled,
 * and waited for and released on threads of distlock's own, so no event-loop thread ever waits for
 * a lock. Loaded only where Reactor is on the classpath.
 */
final class ReactorLocking {

	/**
	 * Where subscriptions wait for their locks: a scheduler of distlock's own, so that waiters never
	 * take the threads (Reactor's bounded-elastic ones) that holders need to finish their work.
	 */
	private static final SingletonSupplier<Scheduler> WAITS = SingletonSupplier
		.of(() -> Schedulers.newBoundedElastic(Math.max(64, Runtime.getRuntime().availableProcessors() * 16), 100_000,
				"distlock-lock-wait", 60, true));

	private static final SingletonSupplier<Scheduler> RELEASES = SingletonSupplier
		.of(() -> Schedulers.fromExecutorService(DeferredLocking.RELEASES, "distlock-release"));

	/** Marks a subscription cancelled before its locks were taken. */
	private static final Object CANCELLED = new Object();

	private ReactorLocking() {
	}

	static boolean handles(Class<?> returnType) {
		return Mono.class.isAssignableFrom(returnType) || Flux.class.isAssignableFrom(returnType);
	}

	static Object invoke(DeferredLocking locking, MethodInvocation invocation, DeferredLocking.Call call) {
		Mono<DeferredLocking.Acquired> acquire = Mono.defer(() -> acquireOnce(locking, call));
		Function<DeferredLocking.Acquired, Publisher<Object>> body = acquired -> {
			if (acquired.failure() != null) {
				return failure(locking, call, acquired);
			}
			// Given back by a cancel that raced the delivery: the work must not run without them.
			return acquired.claim() ? proceed(invocation, acquired) : Mono.empty();
		};
		Function<DeferredLocking.Acquired, Publisher<Object>> release = acquired -> Mono
			.<Object>fromRunnable(() -> locking.release(call, acquired))
			.subscribeOn(RELEASES.get());
		if (Mono.class.isAssignableFrom(call.attribute().method().getReturnType())) {
			return Mono.usingWhen(acquire, acquired -> Mono.from(body.apply(acquired)), release,
					(acquired, error) -> release.apply(acquired), release);
		}
		return Flux.usingWhen(acquire, body, release, (acquired, error) -> release.apply(acquired), release);
	}

	/**
	 * One subscription's acquisition. A cancel can arrive while the locks are being taken, or after
	 * they were taken but before the work claimed them, and Reactor drops a value that arrives after
	 * a cancel: then the holds are given back here, unless the work claimed them first (then
	 * {@code usingWhen} releases them when the work ends).
	 */
	private static Mono<DeferredLocking.Acquired> acquireOnce(DeferredLocking locking, DeferredLocking.Call call) {
		AtomicReference<Object> state = new AtomicReference<>();
		return Mono.fromCallable(() -> {
			DeferredLocking.Acquired acquired = locking.acquire(call);
			if (!state.compareAndSet(null, acquired) && acquired.giveBack()) {
				locking.release(call, acquired);
			}
			return acquired;
		}).subscribeOn(WAITS.get()).doOnCancel(() -> {
			if (state.getAndSet(CANCELLED) instanceof DeferredLocking.Acquired acquired && acquired.giveBack()) {
				RELEASES.get().schedule(() -> locking.release(call, acquired));
			}
		});
	}

	@SuppressWarnings("unchecked")
	private static Publisher<Object> proceed(MethodInvocation invocation, DeferredLocking.Acquired acquired) {
		// Each subscription runs the method anew, as a resubscribed Mono would.
		MethodInvocation call = (invocation instanceof ProxyMethodInvocation proxied) ? proxied.invocableClone()
				: invocation;
		LockContext.push(acquired.tokens());
		try {
			// Later advice (AspectJ aspects, AopContext) looks the invocation up in a thread-local
			// that this thread (a lock-wait thread) does not have.
			Object result = ExposeInvocationInterceptor.INSTANCE.invoke(call);
			return (result != null) ? (Publisher<Object>) result : Mono.empty();
		}
		catch (Throwable ex) {
			return Mono.error(ex);
		}
		finally {
			LockContext.pop();
		}
	}

	@SuppressWarnings("unchecked")
	private static Publisher<Object> failure(DeferredLocking locking, DeferredLocking.Call call,
			DeferredLocking.Acquired acquired) {
		Object value;
		try {
			value = locking.failureValue(call, acquired.failure());
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
