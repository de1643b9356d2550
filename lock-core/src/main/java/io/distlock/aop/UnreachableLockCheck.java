package io.distlock.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.distlock.annotation.DistributedLock;

/**
 * Warns, once per method, about a {@code @DistributedLock} that no Spring proxy can apply: on a
 * private or a static method, or on a final one, which the class-based (CGLIB) proxies that the
 * starter asks for cannot override. Such a method runs unlocked on every call, so this is said at
 * start-up, at WARN; it does not stop start-up, because the annotated class may be a library's.
 *
 * <p>Only the classes of beans the auto-proxy creator considers are scanned, each once. A call
 * through {@code this} is not intercepted either, but cannot be seen from the class.
 */
final class UnreachableLockCheck {

	private static final Logger log = LoggerFactory.getLogger(UnreachableLockCheck.class);

	private final Set<Class<?>> scanned = ConcurrentHashMap.newKeySet();

	/** A superclass's method is seen from each subclass bean, but reported once. */
	private final Set<Method> reported = ConcurrentHashMap.newKeySet();

	/**
	 * @param beanClass the class of a bean that may be proxied
	 */
	void check(Class<?> beanClass) {
		Class<?> type = ClassUtils.getUserClass(beanClass);
		if (!this.scanned.add(type) || !AnnotationUtils.isCandidateClass(type, DistributedLock.class)) {
			return;
		}
		boolean classLevel = AnnotatedElementUtils.hasAnnotation(type, DistributedLock.class);
		ReflectionUtils.doWithMethods(type, method -> {
			String reason = reason(method, classLevel);
			if (reason != null && this.reported.add(method)) {
				log.warn("@DistributedLock on {} is never locked: {}", describe(method), reason);
			}
		}, method -> method.getDeclaringClass() != Object.class && !method.isBridge() && !method.isSynthetic());
	}

	/**
	 * @return why the proxy never applies the method's lock, or {@code null} if it can or there is none
	 */
	private static String reason(Method method, boolean classLevel) {
		int modifiers = method.getModifiers();
		boolean annotated = AnnotatedElementUtils.hasAnnotation(method, DistributedLock.class);
		if (annotated && Modifier.isStatic(modifiers)) {
			return "static methods are not intercepted by Spring proxies; make it an instance method and call it "
					+ "through the bean";
		}
		if (annotated && Modifier.isPrivate(modifiers)) {
			return "private methods are not intercepted by Spring proxies; make it public and call it through the "
					+ "bean (a call through 'this' is not intercepted either)";
		}
		// A class-level annotation covers every public instance method, final ones included.
		boolean covered = annotated || (classLevel && Modifier.isPublic(modifiers) && !Modifier.isStatic(modifiers));
		if (covered && Modifier.isFinal(modifiers)) {
			return "final methods cannot be overridden by the class-based (CGLIB) proxy that applies the lock; "
					+ "remove 'final'";
		}
		return null;
	}

	private static String describe(Method method) {
		return method.getDeclaringClass().getName() + "." + method.getName() + "("
				+ Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).collect(Collectors.joining(", "))
				+ ")";
	}

}
