package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

/**
 * A misspelt {@code distlock.*} property stops start-up naming it, and suggests the property that
 * was probably meant when one is close.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownDistLockPropertyTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DistLockAutoConfiguration.class));

	@Test
	void aMisspeltPropertySuggestsTheOneMeant() {
		assertAnalysis(List.of("distlock.wiat-time=2s"), "distlock.wiat-time",
				"Did you mean distlock.wait-time instead of distlock.wiat-time?");
	}

	@Test
	void aMisspeltNestedPropertySuggestsTheOneMeant() {
		assertAnalysis(List.of("distlock.watchdog.timout=10s"), "distlock.watchdog.timout",
				"Did you mean distlock.watchdog.timeout");
		assertAnalysis(List.of("distlock.redlock.ssl.bundel=redis"), "distlock.redlock.ssl.bundel",
				"Did you mean distlock.redlock.ssl.bundle");
	}

	@Test
	void aDotForADashIsCloseToo() {
		assertAnalysis(List.of("distlock.watchdog-timeout=10s"), "distlock.watchdog-timeout",
				"Did you mean distlock.watchdog.timeout");
	}

	@Test
	void aNamedRegistrysMisspeltPropertySuggestsItUnderTheSameName() {
		assertAnalysis(List.of("distlock.registries.audit.backend=jdbc", "distlock.registries.audit.tabel-name=audit"),
				"distlock.registries.audit.tabel-name", "Did you mean distlock.registries.audit.table-name");
	}

	@Test
	void aPropertyFarFromEveryKnownOneIsNamedWithoutAGuess() {
		FailureAnalysis analysis = analysis("distlock.colour=blue");
		assertThat(analysis.getDescription()).contains("distlock.colour");
		assertThat(analysis.getAction()).doesNotContain("Did you mean").contains("Correct the name, or remove the property");
	}

	@Test
	void theValueIsNeverShownForItMayBeAPassword() {
		FailureAnalysis analysis = analysis("distlock.redlock.nodez=redis://:hunter2@a:6379");
		assertThat(analysis.getDescription() + analysis.getAction()).doesNotContain("hunter2");
		assertThat(analysis.getAction()).contains("Did you mean distlock.redlock.nodes");
	}

	@Test
	void everyUnknownPropertyIsListed() {
		FailureAnalysis analysis = analysis("distlock.wiat-time=2s", "distlock.lease-tme=2s");
		assertThat(analysis.getDescription()).contains("distlock.wiat-time", "distlock.lease-tme");
		assertThat(analysis.getAction()).contains("distlock.wait-time", "distlock.lease-time");
	}

	@Test
	void theKnownPropertiesAreEveryOneInTheIdeMetadata() throws IOException {
		List<String> known = UnknownDistLockPropertyFailureAnalyzer.knownProperties();
		assertThat(known).contains("distlock.advisor-order", "distlock.redlock.ssl.bundle", "distlock.watchdog.timeout",
				"distlock.registries.*.table-name", "distlock.registries.*.redlock-nodes")
			.doesNotContain("distlock.redlock.configured", "distlock.watchdog");
		for (String name : metadataNames()) {
			assertThat(known.contains(name) || known.stream().anyMatch(pattern -> pattern.startsWith(name + ".*")))
				.as("%s is known", name)
				.isTrue();
		}
	}

	@Test
	void aRealStartUpReportsTheSuggestionBeforeSpringBootsOwnAnalysis(CapturedOutput output) {
		assertThatThrownBy(() -> new SpringApplicationBuilder(DistLockOnly.class).web(WebApplicationType.NONE)
			.properties("distlock.wiat-time=2s", "spring.main.banner-mode=off")
			.run()).isNotNull();
		assertThat(output).contains("APPLICATION FAILED TO START", "distlock.wiat-time",
				"Did you mean distlock.wait-time instead of distlock.wiat-time?");
	}

	private void assertAnalysis(List<String> properties, String named, String suggestion) {
		FailureAnalysis analysis = analysis(properties.toArray(String[]::new));
		assertThat(analysis.getDescription()).contains(named);
		assertThat(analysis.getAction()).contains(suggestion);
	}

	private FailureAnalysis analysis(String... properties) {
		FailureAnalysis[] analysis = new FailureAnalysis[1];
		this.runner.withPropertyValues(properties).run(context -> {
			assertThat(context).hasFailed();
			analysis[0] = new UnknownDistLockPropertyFailureAnalyzer().analyze(context.getStartupFailure());
		});
		assertThat(analysis[0]).as("failure analysis").isNotNull();
		return analysis[0];
	}

	@SuppressWarnings("unchecked")
	private static List<String> metadataNames() throws IOException {
		try (InputStream metadata = metadata("/META-INF/spring-configuration-metadata.json")) {
			Map<String, Object> json = JsonParserFactory.getJsonParser()
				.parseMap(new String(metadata.readAllBytes(), StandardCharsets.UTF_8));
			return ((List<Object>) json.get("properties")).stream()
				.map(property -> (String) ((Map<String, Object>) property).get("name"))
				.filter(name -> name.startsWith("distlock."))
				.toList();
		}
	}

	private static InputStream metadata(String resource) {
		InputStream stream = UnknownDistLockPropertyTests.class.getResourceAsStream(resource);
		assertThat(stream).as("generated metadata").isNotNull();
		return stream;
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(DistLockAutoConfiguration.class)
	static class DistLockOnly {

	}

}
