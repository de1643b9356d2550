package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.distlock.embedded.RedisServerBinary;
import io.distlock.embedded.RedisServerProcess;

/**
 * The tests run on the server they were asked to run on: CI runs the Redis tests that matter a
 * second time with {@code -Ddistlock.redis.server=valkey-server}, and a run that quietly fell back
 * to Redis would prove nothing about Valkey.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ServerUnderTestTest {

	@Test
	void theFixturesStartTheChosenServer() {
		boolean valkey = System.getProperty(RedisServerBinary.SERVER_PROPERTY, "").contains("valkey");
		try (RedisServerProcess server = RedisServerProcess.start()) {
			String info = server.query("INFO", "server");
			if (valkey) {
				assertThat(info).contains("server_name:valkey").contains("valkey_version:");
			}
			else {
				assertThat(info).contains("redis_version:").doesNotContain("valkey_version:");
			}
		}
	}

}
