package io.distlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

/**
 * {@code docs/configuration.md} documents exactly the {@code distlock.*} properties the
 * configuration processor finds: every property in the generated metadata has a row in one of the
 * page's tables, and every {@code distlock.*} name in the first column of a table there is a
 * property.
 *
 * <p>A map-keyed property ({@code distlock.registries}) is documented with a {@code <name>}
 * placeholder for the key, one row per setting of its value class; those rows must name exactly the
 * value class's properties.
 *
 * <p>The metadata is read with a regular expression rather than a JSON library: Spring Boot 4 tests
 * have Jackson 3 ({@code tools.jackson}) and Spring Boot 3.5 tests Jackson 2 ({@code com.fasterxml}),
 * and this test runs on both.
 */
class ConfigurationDocsTests {

	private static final Path PAGE = Path.of("..", "docs", "configuration.md");

	private static final Pattern OBJECT = Pattern.compile("\\{[^{}]*}");

	private static final Pattern NAME = Pattern.compile("\"name\"\\s*:\\s*\"(distlock\\.[^\"]+)\"");

	private static final Pattern TYPE = Pattern.compile("\"type\"\\s*:\\s*\"([^\"]+)\"");

	private static final Pattern MAP_TYPE = Pattern.compile("java\\.util\\.Map<java\\.lang\\.String,\\s*([\\w.$]+)>");

	private static final Pattern DOCUMENTED = Pattern.compile("^\\|\\s*`(distlock\\.[a-z0-9.<>-]+)`");

	private static final String PLACEHOLDER = ".<name>.";

	@Test
	void everyPropertyIsDocumentedAndEveryDocumentedPropertyExists() throws Exception {
		Map<String, String> properties = properties();
		assertThat(properties).as("distlock.* properties in the generated metadata").hasSizeGreaterThan(15);
		Set<String> documented = documented();

		Set<String> undocumented = new TreeSet<>();
		Set<String> pageOnly = new TreeSet<>();
		for (Map.Entry<String, String> property : properties.entrySet()) {
			String name = property.getKey();
			Matcher map = MAP_TYPE.matcher(property.getValue());
			if (map.matches()) {
				Set<String> keys = documented.stream()
					.filter(row -> row.startsWith(name + PLACEHOLDER))
					.map(row -> row.substring((name + PLACEHOLDER).length()))
					.collect(Collectors.toCollection(TreeSet::new));
				Set<String> settings = settingsOf(map.group(1));
				settings.stream().filter(key -> !keys.contains(key)).forEach(key -> undocumented.add(name + PLACEHOLDER + key));
				keys.stream().filter(key -> !settings.contains(key)).forEach(key -> pageOnly.add(name + PLACEHOLDER + key));
			}
			else if (!documented.contains(name)) {
				undocumented.add(name);
			}
		}
		for (String row : documented) {
			int placeholder = row.indexOf(PLACEHOLDER);
			String property = (placeholder >= 0) ? row.substring(0, placeholder) : row;
			if (!properties.containsKey(property)) {
				pageOnly.add(row);
			}
		}

		assertThat(undocumented).as("properties in the generated metadata without a row in " + PAGE).isEmpty();
		assertThat(pageOnly).as("rows of " + PAGE + " that name no property in the generated metadata").isEmpty();
	}

	/** @return the metadata's distlock.* properties (not groups), each with its type */
	private static Map<String, String> properties() throws IOException {
		String json;
		try (InputStream metadata = ConfigurationDocsTests.class
			.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			assertThat(metadata).as("generated META-INF/spring-configuration-metadata.json").isNotNull();
			json = new String(metadata.readAllBytes(), StandardCharsets.UTF_8);
		}
		int start = json.indexOf("\"properties\"");
		assertThat(start).as("the metadata's properties").isNotNegative();
		int end = json.indexOf("\"hints\"", start);
		String section = json.substring(start, (end > start) ? end : json.length());
		Map<String, String> properties = new LinkedHashMap<>();
		Matcher object = OBJECT.matcher(section);
		while (object.find()) {
			Matcher name = NAME.matcher(object.group());
			if (name.find()) {
				Matcher type = TYPE.matcher(object.group());
				properties.put(name.group(1), type.find() ? type.group(1) : "");
			}
		}
		return properties;
	}

	/** @return the distlock.* names in the first column of the page's tables */
	private static Set<String> documented() throws IOException {
		return Files.readAllLines(PAGE, StandardCharsets.UTF_8)
			.stream()
			.map(DOCUMENTED::matcher)
			.filter(Matcher::find)
			.map(matcher -> matcher.group(1))
			.collect(Collectors.toCollection(TreeSet::new));
	}

	/** @return the bound properties of a map's value class, in kebab case */
	private static Set<String> settingsOf(String typeName) throws ClassNotFoundException {
		Class<?> type = load(typeName);
		return Arrays.stream(type.getDeclaredFields())
			.filter(field -> !Modifier.isStatic(field.getModifiers()))
			.map(Field::getName)
			.map(name -> name.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase())
			.collect(Collectors.toCollection(TreeSet::new));
	}

	/** Loads a class the metadata names with dots only, nested classes included. */
	private static Class<?> load(String typeName) throws ClassNotFoundException {
		String name = typeName;
		while (true) {
			try {
				return Class.forName(name);
			}
			catch (ClassNotFoundException ex) {
				int dot = name.lastIndexOf('.');
				if (dot < 0) {
					throw ex;
				}
				name = name.substring(0, dot) + "$" + name.substring(dot + 1);
			}
		}
	}

}
