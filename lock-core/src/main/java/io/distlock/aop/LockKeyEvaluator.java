package io.distlock.aop;

import java.lang.reflect.Method;
import java.util.List;
import java.util.TreeSet;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;

/**
 * Evaluates a call's lock keys into lock names, in the global order in which they are acquired.
 */
final class LockKeyEvaluator {

	private final ParameterNameDiscoverer parameterNames = new CachingParameterNames(new DefaultParameterNameDiscoverer());

	private final BeanFactory beanFactory;

	/** Stateless, so shared by every call's evaluation context. */
	private final BeanFactoryResolver beanResolver;

	LockKeyEvaluator(BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
	}

	EvaluationContext context(Method method, Object target, Object[] arguments) {
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
				new LockExpressionRoot(method, target, arguments), method, arguments, this.parameterNames);
		if (this.beanResolver != null) {
			context.setBeanResolver(this.beanResolver);
		}
		return context;
	}

	/**
	 * @return the lock names, sorted and without duplicates: sorting is what makes two calls that
	 * lock the same set in different argument orders take them in the same order, so they cannot
	 * deadlock
	 * @throws IllegalArgumentException if a key fails to evaluate or is null or blank
	 */
	List<String> lockNames(LockAttribute attribute, EvaluationContext context) {
		if (attribute.keys().isEmpty()) {
			String name = attribute.name().isEmpty()
					? attribute.method().getDeclaringClass().getSimpleName() + "." + attribute.method().getName()
					: attribute.name();
			return List.of(name);
		}
		if (attribute.keys().size() == 1) {
			return List.of(name(attribute, 0, context));
		}
		TreeSet<String> names = new TreeSet<>();
		for (int i = 0; i < attribute.keys().size(); i++) {
			names.add(name(attribute, i, context));
		}
		return List.copyOf(names);
	}

	private static String name(LockAttribute attribute, int i, EvaluationContext context) {
		String text = attribute.keyTexts().get(i);
		Object value;
		try {
			value = attribute.keys().get(i).getValue(context);
		}
		catch (EvaluationException ex) {
			throw new IllegalArgumentException("@DistributedLock key '" + text + "' of " + attribute.description()
					+ " failed to evaluate: " + ex.getMessage() + ". The method was not run.", ex);
		}
		if (value == null || value.toString().isBlank()) {
			throw new IllegalArgumentException("@DistributedLock key '" + text + "' of " + attribute.description()
					+ " evaluated to " + ((value == null) ? "null" : "a blank string")
					+ "; the method was not run. Pass a non-null argument or fix the expression.");
		}
		return attribute.name().isEmpty() ? value.toString() : attribute.name() + ":" + value;
	}

	/**
	 * Parameter names per method, looked up once: the discoverer reflects on every call, and every
	 * annotated call needs them.
	 */
	private static final class CachingParameterNames implements ParameterNameDiscoverer {

		private static final String[] NONE = new String[0];

		private final ParameterNameDiscoverer delegate;

		private final java.util.concurrent.ConcurrentHashMap<Object, String[]> names = new java.util.concurrent.ConcurrentHashMap<>();

		CachingParameterNames(ParameterNameDiscoverer delegate) {
			this.delegate = delegate;
		}

		@Override
		public String[] getParameterNames(Method method) {
			String[] found = this.names.computeIfAbsent(method, key -> {
				String[] discovered = this.delegate.getParameterNames(method);
				return (discovered != null) ? discovered : NONE;
			});
			return (found == NONE) ? null : found;
		}

		@Override
		public String[] getParameterNames(java.lang.reflect.Constructor<?> constructor) {
			return this.delegate.getParameterNames(constructor);
		}

	}

}
