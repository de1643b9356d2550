package io.distlock.aop;

import java.util.function.Function;

import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.util.function.SingletonSupplier;

import io.distlock.annotation.LockContext;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * {@link DeferredLocking} for Reactor's {@link Mono} and {@link Flux}: the locks are taken on
 * subscription (assembling a Mono takes nothing), held until it completes, fails or is cancelled,
 * and taken and released on the bounded-elastic scheduler, so no event-loop thread ever waits for
 * a lock. Loaded only where Reactor is on the classpath.
 */
final class ReactorLocking {

	/**
	 * Releases run apart from acquisitions: with every bounded-elastic thread waiting for a lock, the
	 * releases that would free those locks must not queue behind them.
	 */
	private static final SingletonSupplier<Scheduler> RELEASES = SingletonSupplier
		.of(() -> Schedulers.newBoundedElastic(Math.max(4, Runtime.getRuntime().availableProcessors() * 4), 100_000,
				"distlock-release", 60, true));

	private ReactorLocking() {
	}

	static boolean handles(Class<?> returnType) {
		return Mono.class.isAssignableFrom(returnType) || Flux.class.isAssignableFrom(returnType);
	}

	static Object invoke(DeferredLocking locking, MethodInvocation invocation, DeferredLocking.Call call) {
		// A subscription cancelled while the locks were being taken gets them anyway: Reactor discards
		// the late value, and the discard hook gives the locks back.
		Mono<DeferredLocking.Acquired> acquire = Mono.fromCallable(() -> locking.acquire(call))
			.subscribeOn(Schedulers.boundedElastic())
			.doOnDiscard(DeferredLocking.Acquired.class, acquired -> locking.release(call, acquired));
		Function<DeferredLocking.Acquired, Publisher<Object>> body = acquired -> (acquired.failure() != null)
				? failure(locking, call, acquired) : proceed(invocation, acquired);
		Function<DeferredLocking.Acquired, Publisher<Object>> release = acquired -> Mono
			.<Object>fromRunnable(() -> locking.release(call, acquired))
			.subscribeOn(RELEASES.get());
		if (Mono.class.isAssignableFrom(call.attribute().method().getReturnType())) {
			return Mono.usingWhen(acquire, acquired -> Mono.from(body.apply(acquired)), release,
					(acquired, error) -> release.apply(acquired), release);
		}
		return Flux.usingWhen(acquire, body, release, (acquired, error) -> release.apply(acquired), release);
	}

	@SuppressWarnings("unchecked")
	private static Publisher<Object> proceed(MethodInvocation invocation, DeferredLocking.Acquired acquired) {
		// Each subscription runs the method anew, as a resubscribed Mono would.
		MethodInvocation call = (invocation instanceof ProxyMethodInvocation proxied) ? proxied.invocableClone()
				: invocation;
		LockContext.push(acquired.tokens());
		try {
			Object result = call.proceed();
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
