package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.LockLostException;
import io.distlock.jdbc.JdbcLockRegistry;
import io.distlock.redlock.RedlockSettings;
import io.distlock.testing.RedisServerExtension;

/**
 * Registries built the short way, without a class from {@code io.distlock.core}: what each builder
 * sets reaches the registry (a key prefix in Redis, a table created, a watchdog lease, a listener).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistryBuildersTest {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	@Test
	void aRedisRegistryBuiltWithAKeyPrefixAndAShortWatchdogKeepsItsLocksThere() throws Exception {
		try (RedisTestClients clients = new RedisTestClients(redis.server());
				RedisLockRegistry registry = RedisLockRegistry.builder(clients.connectionFactory())
					.keyPrefix("orders")
					.options(options -> options.clientId("builder-test").watchdogTimeout(Duration.ofSeconds(3)))
					.build()) {
			DistLock lock = registry.getLock("42");
			lock.lock();
			try {
				assertThat(redis.server().command("EXISTS", "orders:{42}")).isEqualTo(":1");
				assertThat(lock.remainingLease()).isLessThanOrEqualTo(Duration.ofSeconds(3));
				assertThat(registry.heldLocks().get(0).ownerId()).startsWith("builder-test:");
			}
			finally {
				lock.unlock();
			}
		}
	}

	@Test
	void aTableRegistryBuiltWithCreateSchemaMakesItsTableAndLocksInIt() throws Exception {
		JdbcDataSource dataSource = new JdbcDataSource();
		dataSource.setURL("jdbc:h2:mem:builders;DB_CLOSE_DELAY=-1");
		try (JdbcLockRegistry registry = JdbcLockRegistry.builder(dataSource)
			.tableName("job_locks")
			.createSchema()
			.options(options -> options.withoutWatchdog(Duration.ofMillis(300)))
			.build();
				JdbcLockRegistry other = JdbcLockRegistry.builder(dataSource).tableName("job_locks").build()) {
			DistLock lock = registry.getLock("nightly");
			lock.lock();
			try (var connection = dataSource.getConnection();
					var rows = connection.createStatement().executeQuery("SELECT COUNT(*) FROM job_locks")) {
				rows.next();
				assertThat(rows.getInt(1)).isEqualTo(1);
			}
			DistLock theirs = other.getLock("nightly");
			CompletableFuture<Boolean> taken = CompletableFuture.supplyAsync(() -> {
				try {
					if (!theirs.tryLock(Duration.ofSeconds(10))) {
						return false;
					}
					theirs.unlock();
					return true;
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return false;
				}
			});
			// Without the watchdog the lease is the builder's 300 ms, and it runs out unrenewed.
			assertThat(taken.get(20, TimeUnit.SECONDS)).isTrue();
			assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
		}
	}

	@Test
	void optionsSetTwiceKeepBothAndTheDeprecatedSettersStillSetTheSame() {
		JdbcDataSource dataSource = new JdbcDataSource();
		dataSource.setURL("jdbc:h2:mem:builder-options;DB_CLOSE_DELAY=-1");
		try (JdbcLockRegistry registry = JdbcLockRegistry.builder(dataSource)
			.createSchema()
			.options(options -> options.clientId("options-test"))
			.options(options -> options.watchdogTimeout(Duration.ofSeconds(7)))
			.build()) {
			assertThat(registry.options().clientId()).isEqualTo("options-test");
			assertThat(registry.options().watchdogTimeout()).isEqualTo(Duration.ofSeconds(7));
		}
		@SuppressWarnings("deprecation")
		JdbcLockRegistry deprecated = JdbcLockRegistry.builder(dataSource)
			.clientId("setters-test")
			.watchdogTimeout(Duration.ofSeconds(7))
			.build();
		try (deprecated) {
			assertThat(deprecated.options().clientId()).isEqualTo("setters-test");
			assertThat(deprecated.options().watchdogTimeout()).isEqualTo(Duration.ofSeconds(7));
		}
		// Both styles set the same builder, in call order: the last one wins.
		@SuppressWarnings("deprecation")
		JdbcLockRegistry mixed = JdbcLockRegistry.builder(dataSource)
			.clientId("setter-first")
			.options(options -> options.clientId("options-last"))
			.build();
		try (mixed) {
			assertThat(mixed.options().clientId()).isEqualTo("options-last");
		}
		@SuppressWarnings("deprecation")
		JdbcLockRegistry reversed = JdbcLockRegistry.builder(dataSource)
			.options(options -> options.clientId("options-first"))
			.clientId("setter-last")
			.build();
		try (reversed) {
			assertThat(reversed.options().clientId()).isEqualTo("setter-last");
		}
	}

	@Test
	void redlockSettingsAreNamedOneByOneAndChecked() {
		RedlockSettings settings = RedlockSettings.builder().nodeTimeout(Duration.ofMillis(50)).retryJitter(Duration.ZERO)
			.build();
		assertThat(settings.nodeTimeout()).isEqualTo(Duration.ofMillis(50));
		assertThat(settings.retryDelay()).isEqualTo(RedlockSettings.DEFAULT_RETRY_DELAY);
		assertThat(settings.retryJitter()).isZero();
		assertThat(settings.mutate().clockDriftFactor(0.02).build())
			.isEqualTo(new RedlockSettings(Duration.ofMillis(50), 0.02, RedlockSettings.DEFAULT_RETRY_DELAY, Duration.ZERO));
		assertThat(RedlockSettings.builder().build()).isEqualTo(RedlockSettings.DEFAULTS);
		assertThatThrownBy(() -> RedlockSettings.builder().clockDriftFactor(0.5).build())
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("clock drift factor");
	}

}
