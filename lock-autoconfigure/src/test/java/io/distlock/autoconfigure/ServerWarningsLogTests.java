package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.embedded.RedisServerProcess;

/**
 * A Redis whose eviction policy may evict lock keys starts fine and loses holds only when its
 * memory fills up: the application's start-up log names the server, the setting and the fix.
 */
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ServerWarningsLogTests {

	private static RedisServerProcess server;

	@BeforeAll
	static void startServer() {
		server = RedisServerProcess.start();
	}

	@AfterAll
	static void stopServer() {
		server.close();
	}

	private ApplicationContextRunner runner() {
		return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistLockAutoConfiguration.class))
			.withPropertyValues("distlock.restart-grace=0")
			.withBean(RedisConnectionFactory.class,
					() -> new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port())));
	}

	@Test
	void startingOnARedisThatMayEvictLockKeysLogsAWarningNamingTheSetting(CapturedOutput output) throws Exception {
		setPolicy("512mb", "allkeys-lru");
		try {
			runner().run(context -> {
				assertThat(context).hasNotFailed();
				awaitTheCheck(context.getId());
				assertThat(output).contains("WARN")
					.contains("distlock registry 'default': Redis at " + server.host() + ":" + server.port()
							+ " may evict lock keys when its memory is full (maxmemory-policy allkeys-lru")
					.contains("Set maxmemory-policy noeviction");
			});
		}
		finally {
			setPolicy("0", "noeviction");
		}
	}

	@Test
	void startingOnARedisThatEvictsNothingSaysNothing(CapturedOutput output) throws Exception {
		runner().run(context -> {
			assertThat(context).hasNotFailed();
			awaitTheCheck(context.getId());
			assertThat(output).doesNotContain("may evict lock keys");
		});
	}

	private static void setPolicy(String maxmemory, String policy) {
		assertThat(server.command("CONFIG", "SET", "maxmemory", maxmemory)).isEqualTo("+OK");
		assertThat(server.command("CONFIG", "SET", "maxmemory-policy", policy)).isEqualTo("+OK");
	}

	/**
	 * The check runs on a thread of its own, started when the context was refreshed: wait until this
	 * context's ends (other tests' contexts may have left theirs waiting on servers long stopped).
	 */
	private static void awaitTheCheck(String contextId) throws InterruptedException {
		for (Thread thread : Thread.getAllStackTraces().keySet()) {
			if (thread.getName().equals(ServerWarningsLog.threadName(contextId))) {
				thread.join();
			}
		}
	}

}
