package io.distlock.aop;

import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.CompletionStage;

import org.springframework.core.KotlinDetector;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.scheduling.annotation.Async;
import org.springframework.util.ClassUtils;

/**
 * Recognises methods whose work completes after they return: those whose locks are held until that
 * work ends (a {@code CompletionStage}, a Reactor {@code Mono} or {@code Flux}), and those that cannot
 * be held so: a plain {@code Future}, reactive types other than Reactor's (RxJava,
 * Mutiny, Kotlin {@code Flow} and {@code Deferred}), Spring MVC's deferred results, and Kotlin
 * {@code suspend} functions. A lock released when such a method returns protects nothing, so the
 * interceptor must not pretend to lock them. Types are matched by name, so none of those libraries
 * is needed.
 */
final class DeferredResultTypes {

	/** Reactor's types, where Reactor is on the classpath: loaded by name, so that it need not be. */
	private static final List<Class<?>> REACTOR = reactorTypes();

	/** Stages, Monos and Fluxes are held until their work ends and never reach this list. */
	private static final List<String> DEFERRED = List.of("java.util.concurrent.Future", "java.util.concurrent.Callable", "java.util.concurrent.Flow$Publisher",
			"org.reactivestreams.Publisher", "kotlinx.coroutines.flow.Flow",
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
	 * @param returnType a locked method's return type
	 * @return whether its locks are held until its work ends rather than until it returns
	 */
	static boolean heldUntilWorkEnds(Class<?> returnType) {
		if (CompletionStage.class.isAssignableFrom(returnType)) {
			return true;
		}
		for (Class<?> reactor : REACTOR) {
			if (reactor.isAssignableFrom(returnType)) {
				return true;
			}
		}
		return false;
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
			return "Kotlin suspend function's result";
		}
		Class<?> type = method.getReturnType();
		if (type.isPrimitive() || type == Object.class || heldUntilWorkEnds(type)
				|| isAsync(method, targetClass)) {
			return null;
		}
		if (ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null) {
			return type.getSimpleName();
		}
		ClassLoader loader = (type.getClassLoader() != null) ? type.getClassLoader()
				: DeferredResultTypes.class.getClassLoader();
		for (String name : DEFERRED) {
			if (ClassUtils.isPresent(name, loader) && ClassUtils.resolveClassName(name, loader).isAssignableFrom(type)) {
				return type.getSimpleName();
			}
		}
		return null;
	}

	private static boolean isAsync(Method method, Class<?> targetClass) {
		return AnnotatedElementUtils.hasAnnotation(method, Async.class)
				|| AnnotatedElementUtils.hasAnnotation(method.getDeclaringClass(), Async.class)
				|| (targetClass != null && AnnotatedElementUtils.hasAnnotation(targetClass, Async.class));
	}

}
