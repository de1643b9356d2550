package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.json.JsonParserFactory;

import io.distlock.core.LockEngineOptions;
import io.distlock.jdbc.JdbcLockRegistry;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.redlock.RedlockSettings;
import io.distlock.zookeeper.ZooKeeperLockRegistry;

/**
 * The IDE metadata shows a default for every property that has one, and those defaults are the
 * ones the code uses (several are computed, which the annotation processor cannot see).
 */
class DistLockMetadataTests {

	@Test
	void everyPropertyWithADefaultShowsItInTheIde() throws IOException {
		Map<String, Object> defaults = defaults();
		assertThat(defaults).containsKeys("distlock.enabled", "distlock.backend", "distlock.key-prefix", "distlock.wait-time",
				"distlock.watchdog.enabled", "distlock.watchdog.timeout", "distlock.advisor-order",
				"distlock.jdbc.table-name", "distlock.jdbc.create-schema", "distlock.redlock.node-timeout",
				"distlock.redlock.clock-drift-factor", "distlock.redlock.retry-delay", "distlock.redlock.retry-jitter",
				"distlock.zookeeper.session-timeout", "distlock.zookeeper.connection-timeout", "distlock.zookeeper.base-path");
	}

	@Test
	void computedDefaultsInTheMetadataAreTheCodes() throws IOException {
		Map<String, Object> defaults = defaults();
		assertThat(((Number) defaults.get("distlock.advisor-order")).intValue())
			.isEqualTo(DistLockProperties.DEFAULT_ADVISOR_ORDER);
		assertThat(duration(defaults, "distlock.redlock.node-timeout")).isEqualTo(RedlockSettings.DEFAULTS.nodeTimeout());
		assertThat(((Number) defaults.get("distlock.redlock.clock-drift-factor")).doubleValue())
			.isEqualTo(RedlockSettings.DEFAULTS.clockDriftFactor());
		assertThat(duration(defaults, "distlock.redlock.retry-delay")).isEqualTo(RedlockSettings.DEFAULTS.retryDelay());
		assertThat(duration(defaults, "distlock.redlock.retry-jitter")).isEqualTo(RedlockSettings.DEFAULTS.retryJitter());
		assertThat(defaults.get("distlock.key-prefix")).isEqualTo(RedisLockRegistry.DEFAULT_KEY_PREFIX);
		assertThat(duration(defaults, "distlock.watchdog.timeout")).isEqualTo(LockEngineOptions.DEFAULT_WATCHDOG_TIMEOUT);
		assertThat(defaults.get("distlock.jdbc.table-name")).isEqualTo(JdbcLockRegistry.DEFAULT_TABLE_NAME);
		assertThat(defaults.get("distlock.zookeeper.base-path")).isEqualTo(ZooKeeperLockRegistry.DEFAULT_BASE_PATH);
	}

	private static Duration duration(Map<String, Object> defaults, String name) {
		return DurationStyle.detectAndParse(String.valueOf(defaults.get(name)));
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> defaults() throws IOException {
		try (InputStream metadata = DistLockMetadataTests.class
			.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			assertThat(metadata).as("generated metadata").isNotNull();
			Map<String, Object> json = JsonParserFactory.getJsonParser()
				.parseMap(new String(metadata.readAllBytes(), StandardCharsets.UTF_8));
			Map<String, Object> defaults = new HashMap<>();
			for (Object entry : (List<Object>) json.get("properties")) {
				Map<String, Object> property = (Map<String, Object>) entry;
				String name = (String) property.get("name");
				if (property.containsKey("defaultValue") && name.startsWith("distlock.")) {
					defaults.put(name, property.get("defaultValue"));
				}
			}
			return defaults;
		}
	}

}
