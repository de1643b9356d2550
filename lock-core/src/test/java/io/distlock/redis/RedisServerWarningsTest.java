package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.RedisServerExtension;

/**
 * A Redis that may evict lock keys when its memory fills up loses holds without a restart; the
 * registry names the server, the policy and the fix when asked (the auto-configuration asks at
 * start-up), and says nothing of a server that cannot evict them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisServerWarningsTest {

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	private final RedisTestClients clients = new RedisTestClients(redisServer.server());

	@AfterEach
	void tearDown() throws Exception {
		this.clients.close();
		// Redis's own defaults, for the next test's server.
		config("maxmemory", "0");
		config("maxmemory-policy", "noeviction");
	}

	@Test
	void aServerThatMayEvictLockKeysIsNamedWithItsPolicyAndTheFix() {
		config("maxmemory", "512mb");
		config("maxmemory-policy", "allkeys-lru");

		RedisLockRegistry registry = this.clients.registry(LockEngineOptions.builder());

		assertThat(registry.serverWarnings()).singleElement()
			.asString()
			.contains("Redis at " + redisServer.server().host() + ":" + redisServer.server().port())
			.contains("maxmemory-policy allkeys-lru, maxmemory 512.00M")
			.contains("Set maxmemory-policy noeviction");
	}

	@Test
	void aVolatilePolicyIsNamedTooBecauseEveryLockKeyHasATimeToLive() {
		config("maxmemory", "512mb");
		config("maxmemory-policy", "volatile-lru");

		assertThat(this.clients.registry(LockEngineOptions.builder()).serverWarnings()).singleElement()
			.asString()
			.contains("maxmemory-policy volatile-lru");
	}

	@Test
	void aServerThatEvictsNothingIsNotNamed() {
		RedisLockRegistry registry = this.clients.registry(LockEngineOptions.builder());
		config("maxmemory-policy", "allkeys-lru");
		// Redis's default: no memory limit, so no policy ever runs.
		assertThat(registry.serverWarnings()).isEmpty();

		config("maxmemory", "512mb");
		config("maxmemory-policy", "noeviction");
		assertThat(registry.serverWarnings()).isEmpty();
	}

	@Test
	void aClusterNamesEachMasterThatMayEvict() {
		Properties info = new Properties();
		info.setProperty("10.0.0.1:7000.maxmemory", "1073741824");
		info.setProperty("10.0.0.1:7000.maxmemory_human", "1.00G");
		info.setProperty("10.0.0.1:7000.maxmemory_policy", "volatile-lru");
		info.setProperty("10.0.0.2:7001.maxmemory", "1073741824");
		info.setProperty("10.0.0.2:7001.maxmemory_policy", "noeviction");
		info.setProperty("10.0.0.3:7002.maxmemory", "0");
		info.setProperty("10.0.0.3:7002.maxmemory_policy", "allkeys-lru");

		assertThat(RedisDiagnostics.evictionWarnings(info, "cluster")).singleElement()
			.asString()
			.startsWith("Redis at 10.0.0.1:7000 may evict lock keys")
			.contains("maxmemory-policy volatile-lru, maxmemory 1.00G");
	}

	private static void config(String name, String value) {
		RedisServerProcess server = redisServer.server();
		assertThat(server.command("CONFIG", "SET", name, value)).isEqualTo("+OK");
	}

}
