package io.distlock.autoconfigure;

import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;

/**
 * Turns an unknown {@code distlock.*} property, which {@link DistLockProperties} refuses rather than
 * ignore, into a start-up report naming it and, when one of distlock's properties is within two
 * edits of it, suggesting that one ("did you mean distlock.wait-time?"). Asked before Spring Boot's
 * own analysis of unbound properties, which names the property but not what was meant.
 *
 * <p>The known properties are read from {@link DistLockProperties} itself, so a property added there
 * is suggested without further change; a map's keys ({@code distlock.registries.<name>.*}) match any
 * name. The value is never shown: it may be a password.
 */
class UnknownDistLockPropertyFailureAnalyzer extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException>
		implements Ordered {

	private static final String PREFIX = "distlock";

	/** Stands for any key of a map, such as a named registry's name. */
	static final String ANY_KEY = "*";

	private static final int MOST_EDITS = 2;

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, UnboundConfigurationPropertiesException cause) {
		List<ConfigurationProperty> unknown = cause.getUnboundProperties()
			.stream()
			.filter(property -> property.getName().toString().startsWith(PREFIX + "."))
			.sorted()
			.toList();
		if (unknown.isEmpty()) {
			return null;
		}
		List<String> known = knownProperties();
		StringBuilder description = new StringBuilder();
		List<String> suggestions = new ArrayList<>();
		for (ConfigurationProperty property : unknown) {
			String name = property.getName().toString();
			description.append((unknown.size() == 1) ? "" : "\n    ").append(name);
			if (property.getOrigin() != null) {
				description.append(" (").append(property.getOrigin()).append(')');
			}
			List<String> close = closest(name, known);
			if (!close.isEmpty()) {
				suggestions.add("Did you mean " + String.join(" or ", close) + " instead of " + name + "?");
			}
		}
		if (unknown.size() == 1) {
			description.insert(0, "distlock has no property ")
				.append(", and stops start-up rather than ignore a setting it cannot apply.");
		}
		else {
			description.insert(0, "distlock has no properties of these names, and stops start-up rather than "
					+ "ignore settings it cannot apply:\n");
		}
		String action = String.join("\n", suggestions) + (suggestions.isEmpty() ? "" : "\n")
				+ "Correct the name, or remove the property; an IDE completes distlock.* from the library's "
				+ "configuration metadata. Every property: docs/configuration.md.";
		return new FailureAnalysis(description.toString(), action, cause);
	}

	/**
	 * @return the known properties closest to {@code name}, within {@value #MOST_EDITS} edits of it
	 * on their relaxed forms (case, dashes and dots aside), with any map key taken from {@code name}
	 */
	static List<String> closest(String name, Collection<String> known) {
		String[] elements = name.split("\\.");
		String relaxed = relaxed(name);
		int best = MOST_EDITS + 1;
		List<String> closest = new ArrayList<>();
		for (String pattern : known) {
			String candidate = withKeys(pattern, elements);
			if (candidate == null) {
				continue;
			}
			int edits = distance(relaxed, relaxed(candidate));
			if (edits < best) {
				best = edits;
				closest.clear();
			}
			if (edits == best && !closest.contains(candidate)) {
				closest.add(candidate);
			}
		}
		return closest;
	}

	/** @return every property of {@link DistLockProperties}, a map's key written {@value #ANY_KEY} */
	static List<String> knownProperties() {
		TreeSet<String> known = new TreeSet<>();
		collect(DistLockProperties.class, PREFIX, known);
		return new ArrayList<>(known);
	}

	private static void collect(Class<?> type, String prefix, Collection<String> known) {
		for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
			if (descriptor.getReadMethod() == null || descriptor.getName().equals("class")) {
				continue;
			}
			String name = prefix + "." + DataObjectPropertyName.toDashedForm(descriptor.getName());
			Class<?> propertyType = descriptor.getPropertyType();
			if (isGroup(propertyType)) {
				collect(propertyType, name, known);
			}
			else if (Map.class.isAssignableFrom(propertyType)) {
				Class<?> values = ResolvableType.forMethodReturnType(descriptor.getReadMethod()).asMap().resolveGeneric(1);
				if (values != null && isGroup(values)) {
					collect(values, name + "." + ANY_KEY, known);
				}
				else {
					known.add(name + "." + ANY_KEY);
				}
			}
			else if (descriptor.getWriteMethod() != null) {
				known.add(name);
			}
		}
	}

	/** A nested settings class of distlock's own, bound property by property. */
	private static boolean isGroup(Class<?> type) {
		return type.getName().startsWith(DistLockProperties.class.getPackageName() + ".") && !type.isEnum();
	}

	/** @return {@code pattern} with its map keys taken from {@code elements}, or null if they do not reach */
	private static String withKeys(String pattern, String[] elements) {
		if (!pattern.contains(ANY_KEY)) {
			return pattern;
		}
		String[] parts = pattern.split("\\.");
		if (parts.length > elements.length) {
			return null;
		}
		for (int i = 0; i < parts.length; i++) {
			if (parts[i].equals(ANY_KEY)) {
				parts[i] = elements[i];
			}
		}
		return String.join(".", parts);
	}

	private static String relaxed(String name) {
		return name.toLowerCase(Locale.ROOT).replace("-", "").replace("_", "").replace(".", "");
	}

	/** Levenshtein distance: insertions, deletions and substitutions. */
	static int distance(String a, String b) {
		int[] previous = new int[b.length() + 1];
		int[] current = new int[b.length() + 1];
		for (int j = 0; j <= b.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= b.length(); j++) {
				int substitution = previous[j - 1] + ((a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1);
				current[j] = Math.min(substitution, Math.min(previous[j] + 1, current[j - 1] + 1));
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[b.length()];
	}

}
