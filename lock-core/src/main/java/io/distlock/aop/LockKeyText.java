package io.distlock.aop;

import java.lang.reflect.Array;
import java.util.Collection;
import java.util.Map;

import org.springframework.core.convert.TypeDescriptor;
import org.springframework.expression.TypeConverter;
import org.springframework.util.ClassUtils;

/**
 * The string form of a key value, which must be the same for equal values on every instance: a
 * value whose class keeps {@code Object.toString()} ({@code Order@58a3d521}) would be a different
 * lock on every call, so it is rejected rather than let the method run effectively unlocked.
 *
 * <p>Arrays, collections and maps are rendered element by element, in the form of
 * {@code List.toString()} and {@code Map.toString()} ({@code [a, b]}, {@code {k=v}}), each element
 * by the same rules; so a {@code String[]} and a {@code List<String>} of the same elements are the
 * same lock, and a collection key means what it meant before arrays were supported.
 */
final class LockKeyText {

	/** Whether a class declares or inherits a {@code toString()} other than {@code Object}'s; asked once per class. */
	private static final ClassValue<Boolean> OWN_TO_STRING = new ClassValue<>() {
		@Override
		protected Boolean computeValue(Class<?> type) {
			try {
				return type.getMethod("toString").getDeclaringClass() != Object.class;
			}
			catch (NoSuchMethodException ex) {
				throw new IllegalStateException("Every class has toString()", ex);
			}
		}
	};

	private LockKeyText() {
	}

	/**
	 * @param value a key's value, not {@code null}
	 * @return its string form
	 * @throws NoStableForm if the value, or an element of it, has no string form of its own
	 */
	static String of(Object value) {
		if (value instanceof CharSequence text) {
			return text.toString();
		}
		StringBuilder out = new StringBuilder();
		render(value, value, out);
		return out.toString();
	}

	private static void render(Object value, Object top, StringBuilder out) {
		if (value == null) {
			out.append("null");
		}
		else if (value.getClass().isArray()) {
			out.append('[');
			for (int i = 0, length = Array.getLength(value); i < length; i++) {
				out.append((i > 0) ? ", " : "");
				render(Array.get(value, i), top, out);
			}
			out.append(']');
		}
		else if (value instanceof Collection<?> collection) {
			out.append('[');
			String separator = "";
			for (Object element : collection) {
				out.append(separator);
				render(element, top, out);
				separator = ", ";
			}
			out.append(']');
		}
		else if (value instanceof Map<?, ?> map) {
			out.append('{');
			String separator = "";
			for (Map.Entry<?, ?> entry : map.entrySet()) {
				out.append(separator);
				render(entry.getKey(), top, out);
				out.append('=');
				render(entry.getValue(), top, out);
				separator = ", ";
			}
			out.append('}');
		}
		else if (OWN_TO_STRING.get(value.getClass())) {
			out.append(value);
		}
		else {
			throw new NoStableForm(value, value != top);
		}
	}

	/**
	 * A key value, or an element of it, whose class keeps {@code Object.toString()}.
	 */
	static final class NoStableForm extends IllegalArgumentException {

		private static final long serialVersionUID = 1L;

		private final transient Class<?> type;

		private final String identityForm;

		private final boolean element;

		NoStableForm(Object value, boolean element) {
			super(ClassUtils.getShortName(value.getClass()) + " has no toString() of its own");
			this.type = value.getClass();
			this.identityForm = value.toString();
			this.element = element;
		}

		/** @return the class without a {@code toString()} */
		Class<?> type() {
			return this.type;
		}

		/** @return what {@code Object.toString()} made of the value: a different text for every instance */
		String identityForm() {
			return this.identityForm;
		}

		/** @return whether the value was inside an array, collection or map rather than the key itself */
		boolean element() {
			return this.element;
		}

	}

	/**
	 * Checks what a key expression turns into a string on the way ({@code 'order:' + #order}) by the
	 * same rules, keeping the standard conversion's result: that concatenation already rendered
	 * arrays and collections by value ({@code a,b}), and lock names that worked must not change
	 * under a rolling upgrade.
	 */
	static final class CheckingTypeConverter implements TypeConverter {

		private final TypeConverter delegate;

		CheckingTypeConverter(TypeConverter delegate) {
			this.delegate = delegate;
		}

		/**
		 * To a string, always: otherwise SpEL concatenation falls back to {@code String.valueOf} without
		 * asking {@link #convertValue}.
		 */
		@Override
		public boolean canConvert(TypeDescriptor sourceType, TypeDescriptor targetType) {
			return isString(targetType) || this.delegate.canConvert(sourceType, targetType);
		}

		@Override
		public Object convertValue(Object value, TypeDescriptor sourceType, TypeDescriptor targetType) {
			if (value == null || value instanceof CharSequence || !isString(targetType)) {
				return this.delegate.convertValue(value, sourceType, targetType);
			}
			of(value);
			return this.delegate.canConvert(sourceType, targetType)
					? this.delegate.convertValue(value, sourceType, targetType) : String.valueOf(value);
		}

		private static boolean isString(TypeDescriptor type) {
			return type != null && type.getType() == String.class;
		}

	}

}
