package io.distlock.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodClassKey;
import org.springframework.core.MethodParameter;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ExpressionParser;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelCompilerMode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.standard.SpelExpressionParser;

import io.distlock.LockRegistry;
import io.distlock.annotation.DistributedLock;
import io.distlock.annotation.LockMode;
import io.distlock.annotation.OnLockFailure;

/**
 * Finds the {@link DistributedLock} that applies to a method (on the method, an interface or
 * superclass method, the class or an interface, directly or as a meta-annotation) and parses it
 * once. Invalid expressions or durations fail when the bean is proxied, that is at start-up, with a
 * message naming the method.
 */
public final class LockAttributeSource {

	private static final LockAttribute NONE = new LockAttribute(null, "", "", List.of(), List.of(), null, null, null,
			null, "", false, null, "", LockMode.EXCLUSIVE, 1);

	private final Map<MethodClassKey, LockAttribute> cache = new ConcurrentHashMap<>(256);

	private final ExpressionParser parser = new SpelExpressionParser(
			new SpelParserConfiguration(SpelCompilerMode.MIXED, LockAttributeSource.class.getClassLoader()));

	private final BeanFactory beanFactory;

	/**
	 * @param beanFactory resolves {@code ${...}} placeholders and checks failure handler beans; may be
	 * {@code null} outside a container
	 */
	public LockAttributeSource(BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	/**
	 * @param method the invoked method
	 * @param targetClass the target's class, or {@code null}
	 * @return the parsed attribute, or empty if the method is not locked
	 * @throws InvalidLockAnnotationException if the annotation is invalid
	 */
	public Optional<LockAttribute> find(Method method, Class<?> targetClass) {
		LockAttribute attribute = this.cache.computeIfAbsent(new MethodClassKey(method, targetClass),
				key -> parse(method, targetClass));
		return (attribute == NONE) ? Optional.empty() : Optional.of(attribute);
	}

	/**
	 * @return the annotations parsed so far (every proxied bean's locked methods, once the context
	 * has started), for checks that need the beans they name
	 */
	Collection<LockAttribute> parsed() {
		return this.cache.values().stream().filter(attribute -> attribute != NONE).toList();
	}

	private LockAttribute parse(Method method, Class<?> targetClass) {
		if (method.getDeclaringClass() == Object.class) {
			return NONE;
		}
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(specific, DistributedLock.class);
		if (annotation == null && specific != method) {
			annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
		}
		if (annotation == null && Modifier.isPublic(specific.getModifiers())) {
			Class<?> type = (targetClass != null) ? targetClass : specific.getDeclaringClass();
			annotation = AnnotatedElementUtils.findMergedAnnotation(type, DistributedLock.class);
		}
		return (annotation != null) ? toAttribute(specific, targetClass, annotation) : NONE;
	}

	private LockAttribute toAttribute(Method method, Class<?> targetClass, DistributedLock annotation) {
		String description = describe(method);
		String deferred = DeferredResultTypes.deferredWorkType(method, targetClass);
		if (deferred != null) {
			throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": the method returns a "
					+ deferred + ", whose work runs after the method has returned, and so after its locks would be "
					+ "released. Return a CompletableFuture/CompletionStage, a Reactor Mono/Flux or a cold type Spring's "
					+ "ReactiveAdapterRegistry adapts, such as RxJava 3's, Mutiny's or a Kotlin Flow (their locks are held "
					+ "until the work ends), lock inside the work itself (DistLock), or return the result synchronously",
					null);
		}
		List<Expression> keys = new ArrayList<>();
		for (String key : annotation.key()) {
			Expression parsed = parseExpression(description, "key", key);
			LockKeyCheck.atStartUp(description, method, "key", key, parsed);
			keys.add(parsed);
		}
		Expression fallback = annotation.fallback().isBlank() ? null
				: parseExpression(description, "fallback", annotation.fallback());
		if (fallback != null) {
			LockKeyCheck.atStartUp(description, method, "fallback", annotation.fallback(), fallback);
		}
		if (annotation.onFailure() == OnLockFailure.SKIP && fallback == null && annotation.failureHandler().isEmpty()
				&& skippedSuspendCannotReturnNull(method)) {
			throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": onFailure = SKIP "
					+ "without a fallback answers a busy lock with null, which this suspend function cannot return ("
					+ new MethodParameter(method, -1).getParameterType().getSimpleName() + " is not nullable). Give it a "
					+ "fallback (fallback = \"...\"), or make its return type nullable", null);
		}
		if (!annotation.failureHandler().isEmpty() && this.beanFactory != null
				&& !this.beanFactory.containsBean(annotation.failureHandler())) {
			throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": failureHandler '"
					+ annotation.failureHandler() + "' is not a bean; declare a LockFailureHandler bean of that name", null);
		}
		String registry = annotation.registry().trim();
		if (!registry.isEmpty() && this.beanFactory != null && !(this.beanFactory.containsBean(registry)
				&& this.beanFactory.isTypeMatch(registry, LockRegistry.class))) {
			throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": registry '" + registry
					+ "' is not a LockRegistry bean; declare one of that name (e.g. @Bean(defaultCandidate = false) "
					+ "RedlockLockRegistry " + registry + "(...)) or leave registry empty for the default", null);
		}
		if (annotation.permits() < 1) {
			throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": permits = "
					+ annotation.permits() + "; it must be at least 1 (1 is the key's exclusive lock, more a permit of "
					+ "the key's semaphore)", null);
		}
		if (annotation.permits() > 1 && annotation.mode() != LockMode.EXCLUSIVE) {
			throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": mode = "
					+ annotation.mode() + " with permits = " + annotation.permits() + "; permits are a semaphore's, "
					+ "modes a read-write lock's: use one of them", null);
		}
		Duration leaseTime = duration(description, "leaseTime", annotation.leaseTime(), false);
		Duration holdAtLeast = duration(description, "holdAtLeast", annotation.holdAtLeast(), false);
		if (holdAtLeast != null && leaseTime != null && holdAtLeast.compareTo(leaseTime) > 0) {
			throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": holdAtLeast '"
					+ annotation.holdAtLeast() + "' is longer than leaseTime '" + annotation.leaseTime()
					+ "', which ends every hold sooner; lengthen the lease or leave it to the watchdog", null);
		}
		return new LockAttribute(method, description, annotation.name(), List.copyOf(keys), List.of(annotation.key()),
				duration(description, "waitTime", annotation.waitTime(), true), leaseTime, annotation.onFailure(),
				fallback, annotation.failureHandler(), DeferredResultTypes.heldUntilWorkEnds(method), holdAtLeast,
				registry, annotation.mode(), annotation.permits());
	}

	/**
	 * A skipped synchronous method returns its type's default (0, false, null); a skipped suspend
	 * function can only return null, which Kotlin lets through to a caller that expects none.
	 */
	private static boolean skippedSuspendCannotReturnNull(Method method) {
		if (!KotlinDetector.isSuspendingFunction(method)) {
			return false;
		}
		MethodParameter result = new MethodParameter(method, -1);
		String type = result.getParameterType().getName();
		return !type.equals("kotlin.Unit") && !type.equals("void") && !type.equals("java.lang.Void")
				&& !result.isOptional();
	}

	private Expression parseExpression(String description, String attribute, String text) {
		if (text.isBlank()) {
			throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": " + attribute
					+ " must not be blank; write a SpEL expression such as \"'order:' + #order.id\"", null);
		}
		try {
			return this.parser.parseExpression(text);
		}
		catch (ParseException ex) {
			throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": " + attribute + " expression '"
					+ text + "' does not parse (" + ex.getMessage() + "); a constant key must be quoted: \"'my-key'\"",
					ex);
		}
	}

	private Duration duration(String description, String attribute, String text, boolean zeroAllowed) {
		if (text.isEmpty()) {
			return null;
		}
		String resolved = text;
		if (this.beanFactory instanceof ConfigurableBeanFactory configurable) {
			try {
				resolved = configurable.resolveEmbeddedValue(text);
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": " + attribute + " '" + text
						+ "' names a property that is not set: " + ex.getMessage(), ex);
			}
		}
		Duration duration;
		try {
			duration = DurationText.parse(resolved);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": " + attribute + " "
					+ ex.getMessage(), ex);
		}
		if (duration.isNegative() || (!zeroAllowed && duration.isZero())) {
			throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": " + attribute + " '" + text
					+ "' must be " + (zeroAllowed ? "zero or positive" : "positive"), null);
		}
		return duration;
	}

	static String describe(Method method) {
		return method.getDeclaringClass().getSimpleName() + "." + method.getName() + "("
				+ Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).collect(Collectors.joining(", "))
				+ ")";
	}

}
