package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.LockListener;
import io.distlock.core.LockEngineOptions;
import io.distlock.testing.RedisServerExtension;

/**
 * A Redis that lost its data lets no new holder in before the holders it forgot have been told, and
 * the tokens it hands out afterwards are still larger than any before.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisDataLossTest {

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	private static final Duration LEASE = Duration.ofSeconds(2);

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisServer);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void tearDown() throws Exception {
		this.threads.shutdownNow();
	}

	@Test
	void aRestartedServerLetsNoNewHolderInBeforeTheForgottenHolderIsTold() throws Exception {
		noNewHolderBeforeTheOldOneIsTold("restarted", () -> redisServer.server().restart());
	}

	@Test
	void aFlushedServerLetsNoNewHolderInBeforeTheForgottenHolderIsTold() throws Exception {
		noNewHolderBeforeTheOldOneIsTold("flushed", () -> redisServer.server().command("FLUSHALL"));
	}

	private void noNewHolderBeforeTheOldOneIsTold(String name, Runnable dataLoss) throws Exception {
		List<Long> toldAt = new CopyOnWriteArrayList<>();
		DistLock first = registry(lost -> toldAt.add(System.nanoTime())).getLock(name);
		DistLock second = registry().getLock(name);
		first.lock();
		long firstToken = first.getFencingToken();

		long lossAt = System.nanoTime();
		dataLoss.run();
		Future<Long> secondAcquired = this.threads.submit(() -> {
			await().atMost(Duration.ofSeconds(30)).pollInSameThread().ignoreExceptions()
				.until(() -> second.tryLock(Duration.ofSeconds(10)));
			long at = System.nanoTime();
			second.unlock();
			return at;
		});
		long acquiredAt = secondAcquired.get(60, TimeUnit.SECONDS);

		assertThat(toldAt).as("the forgotten holder was told").isNotEmpty();
		assertThat(toldAt.get(0)).as("told before anyone else got in").isLessThan(acquiredAt);
		// What the grace costs: the lock is unavailable for about one grace after the loss.
		assertThat(Duration.ofNanos(acquiredAt - lossAt)).isLessThan(LEASE.plus(Duration.ofSeconds(10)));
		DistLock third = registry().getLock(name);
		assertThat(third.tryLock(Duration.ofSeconds(5))).isTrue();
		assertThat(third.getFencingToken()).as("tokens never go back").isGreaterThan(firstToken);
		third.unlock();
	}

	private RedisLockRegistry registry(LockListener... listeners) {
		return this.clients.registry(LockEngineOptions.builder().watchdogTimeout(LEASE).restartGrace(LEASE), listeners);
	}

}
