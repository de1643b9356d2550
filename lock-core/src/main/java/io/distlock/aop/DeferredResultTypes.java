package io.distlock.aop;

import java.lang.reflect.Method;
import java.util.List;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.scheduling.annotation.Async;
import org.springframework.util.ClassUtils;

/**
 * Recognises return types whose work completes after the method returns (futures, reactive
 * publishers, Kotlin flows): a lock released when such a method returns protects nothing, so the
 * interceptor must not pretend to lock them. Types are matched by name, so Reactor and Kotlin stay
 * optional.
 */
final class DeferredResultTypes {

	private static final List<String> DEFERRED = List.of("java.util.concurrent.CompletionStage",
			"java.util.concurrent.Future", "org.reactivestreams.Publisher", "kotlinx.coroutines.flow.Flow");

	private DeferredResultTypes() {
	}

	/**
	 * @param method an annotated method
	 * @return the deferred type it returns (simple name), or {@code null} if its work is done when it
	 * returns; {@code @Async} methods count as done, since their locked body runs whole on the
	 * executor's thread and typically returns a completed future
	 */
	static String deferredWorkType(Method method) {
		Class<?> type = method.getReturnType();
		if (type.isPrimitive() || isAsync(method)) {
			return null;
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

	private static boolean isAsync(Method method) {
		return AnnotatedElementUtils.hasAnnotation(method, Async.class)
				|| AnnotatedElementUtils.hasAnnotation(method.getDeclaringClass(), Async.class);
	}

}
