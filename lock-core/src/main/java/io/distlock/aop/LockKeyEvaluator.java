package io.distlock.aop;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.TypeConverter;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.expression.spel.support.StandardTypeConverter;
import org.springframework.util.ClassUtils;

/**
 * Evaluates a call's lock keys into lock names, in the global order in which they are acquired.
 */
final class LockKeyEvaluator {

	private final ParameterNameDiscoverer parameterNames = new CachingParameterNames(new DefaultParameterNameDiscoverer());

	private final BeanFactory beanFactory;

	/** Stateless, so shared by every call's evaluation context. */
	private final BeanFactoryResolver beanResolver;

	/** Thread-safe, so shared by every call's context rather than each creating its own. */
	private final TypeConverter plainConverter = new StandardTypeConverter();

	/** Used while keys are evaluated, so that {@code 'order:' + #order} is checked like {@code #order}. */
	private final TypeConverter keyConverter = new LockKeyText.CheckingTypeConverter(this.plainConverter);

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
		context.setTypeConverter(this.plainConverter);
		return context;
	}

	/**
	 * @return the lock names, sorted and without duplicates: sorting is what makes two calls that
	 * lock the same set in different argument orders take them in the same order, so they cannot
	 * deadlock
	 * @throws IllegalArgumentException if a key fails to evaluate, is null or blank, or has no string
	 * form of its own (see {@link LockKeyText})
	 */
	List<String> lockNames(LockAttribute attribute, EvaluationContext context) {
		if (attribute.keys().isEmpty()) {
			String name = attribute.name().isEmpty()
					? attribute.method().getDeclaringClass().getSimpleName() + "." + attribute.method().getName()
					: attribute.name();
			return List.of(name);
		}
		// Only for the keys: a fallback expression may turn any value into the method's return type.
		StandardEvaluationContext standard = (context instanceof StandardEvaluationContext candidate) ? candidate : null;
		if (standard != null) {
			standard.setTypeConverter(this.keyConverter);
		}
		try {
			if (attribute.keys().size() == 1) {
				return List.of(name(attribute, 0, context));
			}
			TreeSet<String> names = new TreeSet<>();
			for (int i = 0; i < attribute.keys().size(); i++) {
				names.add(name(attribute, i, context));
			}
			return List.copyOf(names);
		}
		finally {
			if (standard != null) {
				standard.setTypeConverter(this.plainConverter);
			}
		}
	}

	private static String name(LockAttribute attribute, int i, EvaluationContext context) {
		String text = attribute.keyTexts().get(i);
		Object value;
		try {
			value = attribute.keys().get(i).getValue(context);
		}
		catch (LockKeyText.NoStableForm ex) {
			throw noStableForm(attribute, text, ex, "turns ", " into text");
		}
		catch (EvaluationException ex) {
			// A conversion on the way may arrive wrapped, as in a method argument.
			LockKeyText.NoStableForm unstable = find(ex, LockKeyText.NoStableForm.class);
			if (unstable != null) {
				throw noStableForm(attribute, text, unstable, "turns ", " into text");
			}
			throw new IllegalArgumentException("@DistributedLock key '" + text + "' of " + attribute.description()
					+ " failed to evaluate: " + ex.getMessage() + ". The method was not run.", ex);
		}
		String key;
		try {
			key = (value != null) ? LockKeyText.of(value) : null;
		}
		catch (LockKeyText.NoStableForm ex) {
			throw noStableForm(attribute, text, ex, "evaluated to ", "");
		}
		if (key == null || key.isBlank()) {
			throw new IllegalArgumentException("@DistributedLock key '" + text + "' of " + attribute.description()
					+ " evaluated to " + ((value == null) ? "null" : "a blank string")
					+ "; the method was not run. Pass a non-null argument or fix the expression.");
		}
		if (key.contains("null")) {
			// Rare, so only then: was it a null part of a concatenation, 'order:' + #id turned into order:null?
			SpelNode part = LockKeyCheck.nullPart(LockKeyCheck.concatenatedParts(attribute.keys().get(i)), context);
			if (part != null) {
				throw new IllegalArgumentException("@DistributedLock key '" + text + "' of " + attribute.description()
						+ ": its part " + part.toStringAST() + " is null, so every such call would share the lock '"
						+ key + "'; the method was not run. Pass a non-null argument, or write (" + part.toStringAST()
						+ " ?: 'none') to lock on a default on purpose.");
			}
		}
		String name = attribute.name().isEmpty() ? key : attribute.name() + ":" + key;
		int unpaired = unpairedSurrogate(name);
		if (unpaired >= 0) {
			// The registry refuses it too, but without naming the method.
			throw new IllegalArgumentException("@DistributedLock key '" + text + "' of " + attribute.description()
					+ " evaluated to a text with an unpaired surrogate (\\u" + String.format("%04X", (int) name.charAt(unpaired))
					+ ") at index " + unpaired + ", which has no UTF-8 form: it would be the same lock as other keys. "
					+ "The method was not run.");
		}
		return name;
	}

	/** @return the index of the first surrogate that is not half of a pair, or -1 */
	private static int unpairedSurrogate(String text) {
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
				i++;
			}
			else if (Character.isSurrogate(c)) {
				return i;
			}
		}
		return -1;
	}

	private static IllegalArgumentException noStableForm(LockAttribute attribute, String text,
			LockKeyText.NoStableForm cause, String verb, String object) {
		String type = ClassUtils.getShortName(cause.type());
		// For a key that is a bare argument, the fix is a property of that argument (of its elements: a projection).
		boolean argument = text.matches("#[A-Za-z_$][\\w$]*");
		String example = cause.element() ? (argument ? text : "#orders") + ".![id]" : (argument ? text : "#order") + ".id";
		return new IllegalArgumentException("@DistributedLock key '" + text + "' of " + attribute.description() + " "
				+ verb + (cause.element() ? "a value containing a " : "a ") + type + object
				+ ", which has no toString() of its own: the lock name would be like '" + cause.identityForm()
				+ "', different for every instance, so the method would run effectively unlocked. The method was not run. "
				+ "Lock on a property with a stable string form, such as " + example + ", or give " + type
				+ " a toString() that depends only on its value (a record has one).", cause);
	}

	private static <T extends Throwable> T find(Throwable ex, Class<T> type) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (type.isInstance(cause)) {
				return type.cast(cause);
			}
		}
		return null;
	}

	/**
	 * Parameter names per method, looked up once: the discoverer reflects on every call, and every
	 * annotated call needs them.
	 */
	private static final class CachingParameterNames implements ParameterNameDiscoverer {

		private static final String[] NONE = new String[0];

		private final ParameterNameDiscoverer delegate;

		private final ConcurrentHashMap<Object, String[]> names = new ConcurrentHashMap<>();

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
		public String[] getParameterNames(Constructor<?> constructor) {
			return this.delegate.getParameterNames(constructor);
		}

	}

}
