package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.distlock.testing.RedisServerExtension;

/**
 * A Redis whose eviction policy may evict lock keys starts fine and loses holds only when its
 * memory fills up: the application's start-up log names the server, the setting and the fix.
 */
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ServerWarningsLogTests {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	private ApplicationContextRunner runner() {
		return OwnRedis.runner(redis.server());
	}

	@Test
	void startingOnARedisThatMayEvictLockKeysLogsAWarningNamingTheSetting(CapturedOutput output) throws Exception {
		setPolicy("512mb", "allkeys-lru");
		try {
			runner().run(context -> {
				assertThat(context).hasNotFailed();
				awaitTheCheck(context.getId());
				assertThat(output).contains("WARN")
					.contains("distlock registry 'default': Redis at " + redis.server().host() + ":" + redis.server().port()
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
		assertThat(redis.server().command("CONFIG", "SET", "maxmemory", maxmemory)).isEqualTo("+OK");
		assertThat(redis.server().command("CONFIG", "SET", "maxmemory-policy", policy)).isEqualTo("+OK");
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
