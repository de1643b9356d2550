package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import io.distlock.LockListener;
import io.distlock.LockRegistry;
import io.distlock.contract.LockRegistryContract;
import io.distlock.contract.ReadWriteLockContract;
import io.distlock.contract.SemaphoreContract;
import io.distlock.contract.SharedCounter;
import io.distlock.core.LockEngineOptions;

/**
 * The contract suite for the table lock; subclasses name the database. Each client gets a
 * connection pool of its own, as each application instance would.
 */
abstract class JdbcLockRegistryContract extends LockRegistryContract
		implements ReadWriteLockContract, SemaphoreContract {

	/** Waiters poll the table: whoever asks first after a release gets in. */
	@Override
	public boolean servesClientsInArrivalOrder() {
		return false;
	}


	/** @return a JDBC URL of the test database */
	@Test
	void aNameWithANulCharacterIsRefusedBeforeTheDatabaseSeesIt() {
		// PostgreSQL cannot store NUL in text and failed the insert like an outage; the others stored it.
		LockRegistry client = newClient();
		assertThatThrownBy(() -> client.getLock("order\u0000x")).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("NUL")
			.hasMessageContaining("index 5");
		assertThatThrownBy(() -> client.tryLockForWork("\u0000", Duration.ZERO, null))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("NUL");
		// The non-blocking acquisition (Mono and Flux methods take it) checks names alike.
		assertThatThrownBy(() -> client.tryLockForWorkAsync("\u0000", Duration.ZERO, null))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("NUL");
		assertThatThrownBy(() -> client.lockForWorkAsync("x".repeat(256), null))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("256 characters");
	}

	protected abstract String jdbcUrl();

	@BeforeEach
	void freshTables() {
		HikariDataSource setup = closeAfterTest(dataSource());
		new JdbcLockBackend(setup, JdbcLockRegistry.DEFAULT_TABLE_NAME).createSchema();
		new JdbcTemplate(setup).update("DELETE FROM " + JdbcLockRegistry.DEFAULT_TABLE_NAME);
		new JdbcTemplate(setup).update("DELETE FROM " + JdbcLockRegistry.DEFAULT_TABLE_NAME + "_shared");
	}

	protected HikariDataSource dataSource() {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(jdbcUrl());
		config.setMaximumPoolSize(12);
		config.setConnectionTimeout(2000);
		config.setValidationTimeout(1000);
		configure(config);
		return new HikariDataSource(config);
	}

	/** Adjusts a client's connection pool before it starts. */
	protected void configure(HikariConfig config) {
	}

	@Override
	protected LockRegistry newClient(Duration watchdogTimeout, LockListener... listeners) {
		DataSource dataSource = closeAfterTest(dataSource());
		LockEngineOptions.Builder options = LockEngineOptions.builder().watchdogTimeout(watchdogTimeout);
		for (LockListener listener : listeners) {
			options.listener(listener);
		}
		return closeAfterTest(new JdbcLockRegistry(dataSource, JdbcLockRegistry.DEFAULT_TABLE_NAME, options.build()));
	}

	@Override
	protected void crash(LockRegistry client) {
		((JdbcLockRegistry) client).close();
	}

	@Override
	protected SharedCounter sharedCounter(String name) {
		JdbcTemplate jdbc = new JdbcTemplate(closeAfterTest(dataSource()));
		jdbc.execute("CREATE TABLE IF NOT EXISTS test_counter (name VARCHAR(64) PRIMARY KEY, counter_value BIGINT)");
		jdbc.update("DELETE FROM test_counter WHERE name = ?", name);
		jdbc.update("INSERT INTO test_counter (name, counter_value) VALUES (?, 0)", name);
		return new SharedCounter() {
			@Override
			public long get() {
				return jdbc.queryForObject("SELECT counter_value FROM test_counter WHERE name = ?", Long.class, name);
			}

			@Override
			public void set(long value) {
				jdbc.update("UPDATE test_counter SET counter_value = ? WHERE name = ?", value, name);
			}
		};
	}

	@Override
	protected void loseFencingCounter() {
		// As a restore of a backup taken before any of these tokens was handed out.
		new JdbcTemplate(closeAfterTest(dataSource())).update("UPDATE " + JdbcLockRegistry.DEFAULT_TABLE_NAME
				+ "_fencing SET last_token = 0");
	}

	@Override
	protected void flushServerSideScripts() {
		// A table lock keeps no scripts on the server.
	}

	@Override
	protected Duration[] handoffLimits() {
		// Another client's waiter polls, backing off to 100 ms; a loaded machine adds to that.
		return new Duration[] { Duration.ofMillis(500), Duration.ofSeconds(3) };
	}

}
