package io.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.distlock.embedded.RedisServerProcess;

/**
 * A Redlock node that may evict lock keys leaves a quorum a node short when it does: the registry
 * names that node, and only that one.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedlockServerWarningsTest {

	@Test
	void theNodeThatMayEvictLockKeysIsNamed() throws Exception {
		try (RedlockNodes nodes = new RedlockNodes(3)) {
			RedisServerProcess evicting = nodes.servers().get(1);
			assertThat(evicting.command("CONFIG", "SET", "maxmemory", "512mb")).isEqualTo("+OK");
			assertThat(evicting.command("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")).isEqualTo("+OK");

			RedlockLockRegistry registry = nodes.client(Duration.ofSeconds(30));

			assertThat(registry.serverWarnings()).singleElement()
				.asString()
				.contains("Redis at " + evicting.host() + ":" + evicting.port())
				.contains("maxmemory-policy allkeys-lfu");
		}
	}

}
