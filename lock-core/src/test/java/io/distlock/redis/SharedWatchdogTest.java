package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.distlock.DistLock;
import io.distlock.LockWatchdog;
import io.distlock.LostHold;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisServerProcess;

/**
 * One {@link LockWatchdog} renews the holds of several registries, each on its own Redis; a
 * registry whose Redis freezes holds up its own renewals only, and the others keep their locks.
 * With every renewal on one thread (the control), the frozen server's renewal costs the healthy
 * registry its hold.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SharedWatchdogTest {

	/** The healthy registry's lease: renewed every 500 ms, lost if no renewal lands for 1.5 s. */
	private static final Duration SHORT = Duration.ofMillis(1500);

	/** The frozen server's registry waits up to what is left of this lease for each renewal. */
	private static final Duration LONG = Duration.ofSeconds(9);

	private RedisServerProcess frozenServer;

	private RedisServerProcess healthyServer;

	private RedisTestClients frozenClients;

	private RedisTestClients healthyClients;

	@BeforeEach
	void servers() {
		this.frozenServer = RedisServerProcess.start();
		this.healthyServer = RedisServerProcess.start();
		this.frozenClients = new RedisTestClients(this.frozenServer, Duration.ofSeconds(30));
		this.healthyClients = new RedisTestClients(this.healthyServer);
	}

	@AfterEach
	void stop() throws Exception {
		this.frozenServer.resume();
		this.frozenClients.close();
		this.healthyClients.close();
		this.frozenServer.close();
		this.healthyServer.close();
	}

	@Test
	void aRegistryWhoseRedisFreezesDoesNotCostAnotherRegistryItsLocks() throws Exception {
		try (LockWatchdog watchdog = LockWatchdog.create()) {
			assertThat(frozenAndHealthy(watchdog)).as("the healthy registry's hold").isEmpty();
		}
	}

	@Test
	void withEveryRenewalOnOneThreadTheFrozenServerCostsTheOtherRegistryItsLock() throws Exception {
		ScheduledExecutorService oneThread = Executors.newSingleThreadScheduledExecutor();
		try {
			assertThat(frozenAndHealthy(LockWatchdog.on(oneThread))).as("the healthy registry's hold, renewed behind the frozen server's renewal").isNotEmpty();
		}
		finally {
			oneThread.shutdownNow();
		}
	}

	/** @return the healthy registry's holds reported lost while the other registry's Redis was frozen */
	private List<LostHold> frozenAndHealthy(LockWatchdog watchdog) throws Exception {
		RedisLockRegistry frozen = this.frozenClients.registry(LockEngineOptions.builder().watchdogTimeout(LONG).watchdog(watchdog));
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		RedisLockRegistry healthy = this.healthyClients.registry(
				LockEngineOptions.builder().watchdogTimeout(SHORT).watchdog(watchdog), lost::add);
		DistLock frozenLock = frozen.getLock("frozen");
		DistLock healthyLock = healthy.getLock("healthy");
		frozenLock.lock();
		healthyLock.lock();
		await().atMost(Duration.ofSeconds(10)).until(() -> frozen.watchdogRenewals() >= 1 && healthy.watchdogRenewals() >= 2);

		this.frozenServer.pause();
		long renewed = healthy.watchdogRenewals();
		// The frozen server's registry renews every LONG / 3, and its renewal then waits for seconds: more
		// healthy renewals than fit in one such period prove the healthy ones went on beside it.
		long beside = LONG.dividedBy(3).toMillis() / SHORT.dividedBy(3).toMillis() + 5;
		await().pollDelay(LONG.dividedBy(3).plus(SHORT.multipliedBy(3))).atMost(Duration.ofSeconds(30))
			.until(() -> !lost.isEmpty() || healthy.watchdogRenewals() >= renewed + beside);
		this.frozenServer.resume();
		if (lost.isEmpty()) {
			healthyLock.unlock();
		}
		// Registries close before their watchdog, as Spring closes them.
		frozen.close();
		healthy.close();
		return lost;
	}

}
