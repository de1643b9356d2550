package io.distlock.aop;

import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.CompletionStage;

import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.scheduling.annotation.Async;
import org.springframework.util.ClassUtils;

/**
 * Recognises methods whose work completes after they return: those whose locks are held until that
 * work ends (a {@code CompletionStage}; with Reactor, a {@code Mono}, a {@code Flux} and every cold
 * type Spring's {@link ReactiveAdapterRegistry} adapts, such as RxJava 3's, Mutiny's and Kotlin's
 * {@code Flow}; with kotlinx-coroutines-reactor, Kotlin {@code suspend} functions), and those that
 * cannot be held so: a plain {@code Future}, hot types whose work runs whether or not anyone
 * subscribes and goes on when the subscriber cancels (Kotlin's {@code Job} and {@code Deferred},
 * {@code SharedFlow}, subjects, processors, connectable streams), and Spring MVC's deferred results.
 * A lock released when such a method returns protects nothing, so the interceptor must not pretend
 * to lock them. Types are matched by name, so none of those libraries is needed.
 */
final class DeferredResultTypes {

	/** Reactor's types, where Reactor is on the classpath: loaded by name, so that it need not be. */
	private static final List<Class<?>> REACTOR = reactorTypes();

	/**
	 * Spring's proxies hand a {@code suspend} function on as a Publisher only with this library; without
	 * it the call cannot be held (nor made through a proxy at all).
	 */
	private static final boolean COROUTINES_REACTOR = ClassUtils.isPresent("kotlinx.coroutines.reactor.MonoKt",
			DeferredResultTypes.class.getClassLoader());

	/** The one Kotlin result type Spring's proxy turns into a stream of a suspend function. */
	private static final String KOTLIN_FLOW = "kotlinx.coroutines.flow.Flow";

	/**
	 * Hot: their work runs whether or not anyone subscribes, or they never complete, so no lock taken
	 * on subscription and released at the end covers it. Checked before the adaptable types.
	 */
	private static final List<String> HOT = List.of("kotlinx.coroutines.Job", "kotlinx.coroutines.flow.SharedFlow",
			"io.reactivex.rxjava3.subjects.Subject", "io.reactivex.rxjava3.processors.FlowableProcessor",
			"io.reactivex.rxjava3.flowables.ConnectableFlowable",
			"io.reactivex.rxjava3.observables.ConnectableObservable", "org.reactivestreams.Processor",
			"java.util.concurrent.Flow$Processor", "java.util.concurrent.SubmissionPublisher",
			"reactor.core.publisher.ConnectableFlux");

	/** Stages and the adaptable reactive types are held until their work ends and never reach this list. */
	private static final List<String> DEFERRED = List.of("java.util.concurrent.Future", "java.util.concurrent.Callable",
			"java.util.concurrent.Flow$Publisher", "org.reactivestreams.Publisher", KOTLIN_FLOW,
			"org.springframework.web.context.request.async.DeferredResult",
			"org.springframework.web.context.request.async.WebAsyncTask");

	private DeferredResultTypes() {
	}

	private static List<Class<?>> reactorTypes() {
		ClassLoader loader = DeferredResultTypes.class.getClassLoader();
		if (!ClassUtils.isPresent("reactor.core.publisher.Mono", loader)) {
			return List.of();
		}
		return List.of(ClassUtils.resolveClassName("reactor.core.publisher.Mono", loader),
				ClassUtils.resolveClassName("reactor.core.publisher.Flux", loader));
	}

	/**
	 * @param method a locked method
	 * @return whether its locks are held until its work ends rather than until it returns
	 */
	static boolean heldUntilWorkEnds(Method method) {
		if (KotlinDetector.isSuspendingFunction(method)) {
			return COROUTINES_REACTOR && !REACTOR.isEmpty();
		}
		Class<?> returnType = method.getReturnType();
		if (CompletionStage.class.isAssignableFrom(returnType)) {
			return true;
		}
		if (REACTOR.isEmpty() || is(returnType, HOT)) {
			return false;
		}
		for (Class<?> reactor : REACTOR) {
			if (reactor.isAssignableFrom(returnType)) {
				return true;
			}
		}
		return returnType != Object.class && ReactiveAdapterRegistry.getSharedInstance().getAdapter(returnType) != null;
	}

	/**
	 * @param method an annotated method
	 * @param targetClass the class of the bean it is called on, or {@code null}
	 * @return what it returns (simple name) if its work runs after it returns and cannot be locked,
	 * else {@code null}; {@code @Async} methods count as done, since their locked body runs whole on
	 * the executor's thread (one returning a CompletableFuture is locked until it completes anyway)
	 */
	static String deferredWorkType(Method method, Class<?> targetClass) {
		if (KotlinDetector.isSuspendingFunction(method)) {
			return suspendingWorkType(method);
		}
		Class<?> type = method.getReturnType();
		if (is(type, HOT)) {
			return type.getSimpleName();
		}
		if (type.isPrimitive() || type == Object.class || heldUntilWorkEnds(method) || isAsync(method, targetClass)) {
			return null;
		}
		if (ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null || is(type, DEFERRED)) {
			return type.getSimpleName();
		}
		return null;
	}

	/**
	 * A suspend function is held until it returns; what it returns must then be done too. A Flow is
	 * the exception: Spring's proxy collects it as part of the call.
	 */
	private static String suspendingWorkType(Method method) {
		if (!heldUntilWorkEnds(method)) {
			return "Kotlin suspend function's result without kotlinx-coroutines-reactor on the classpath (add "
					+ "org.jetbrains.kotlinx:kotlinx-coroutines-reactor, which Spring needs to call it through a proxy)";
		}
		Class<?> type = new MethodParameter(method, -1).getParameterType();
		if (type.isPrimitive() || type == Object.class || suspendReturnsFlow(method)) {
			return null;
		}
		if (is(type, HOT) || CompletionStage.class.isAssignableFrom(type) || is(type, DEFERRED)
				|| ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null) {
			return type.getSimpleName() + " from a suspend function (return it from a plain function, or await it "
					+ "inside the suspend function)";
		}
		return null;
	}

	/**
	 * As Spring's proxies tell a {@code suspend} function whose result is a stream (a Flux) rather
	 * than one value (a Mono): by its Kotlin return type.
	 * @param method a suspend function
	 * @return whether it returns a Kotlin Flow
	 */
	static boolean suspendReturnsFlow(Method method) {
		return KOTLIN_FLOW.equals(new MethodParameter(method, -1).getParameterType().getName());
	}

	private static boolean is(Class<?> type, List<String> names) {
		ClassLoader loader = (type.getClassLoader() != null) ? type.getClassLoader()
				: DeferredResultTypes.class.getClassLoader();
		for (String name : names) {
			if (ClassUtils.isPresent(name, loader) && ClassUtils.resolveClassName(name, loader).isAssignableFrom(type)) {
				return true;
			}
		}
		return false;
	}

	private static boolean isAsync(Method method, Class<?> targetClass) {
		return AnnotatedElementUtils.hasAnnotation(method, Async.class)
				|| AnnotatedElementUtils.hasAnnotation(method.getDeclaringClass(), Async.class)
				|| (targetClass != null && AnnotatedElementUtils.hasAnnotation(targetClass, Async.class));
	}

}
