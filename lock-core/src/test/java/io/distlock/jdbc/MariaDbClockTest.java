package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import io.distlock.core.LockEngineOptions;
import io.distlock.testing.ClosedAfterEach;
import io.distlock.testing.DatabaseServerExtension;

/**
 * The database clock of a MySQL/MariaDB server whose time zone observes daylight saving time, on the
 * night the clocks go back (Europe/Berlin, 2026-10-25 03:00 CEST becomes 02:00 CET at 01:00Z): local
 * times between 02:00 and 03:00 happen twice, so any reading that converts local time to epoch time
 * is an hour off for one of them. Each session's clock is frozen with {@code SET timestamp}, which
 * the dialect's expression honours as it does the real clock.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MariaDbClockTest {

	private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

	@RegisterExtension
	static final DatabaseServerExtension database = DatabaseServerExtension.mariaDb(BERLIN);

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	@BeforeEach
	void schema() {
		HikariDataSource setup = dataSource(null);
		new JdbcLockBackend(setup, "distributed_locks").createSchema();
		new JdbcTemplate(setup).update("DELETE FROM distributed_locks");
	}

	@Test
	void databaseClockReadsTheTrueEpochTimeWhileTheClocksGoBack() throws SQLException {
		try (Connection connection = DriverManager.getConnection(database.server().jdbcUrl())) {
			// The server really runs in Berlin time, and a reading through the session's zone really
			// is an hour off there: the trap this test must be able to catch is set.
			assertThat(query(connection, "SELECT @@system_time_zone", null)).isIn("CET", "CEST");
			assertThat(query(connection, "SELECT ROUND(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000)",
					Instant.parse("2026-10-25T00:30:00Z")))
				.isEqualTo(Long.toString(Instant.parse("2026-10-25T01:30:00Z").toEpochMilli()));

			for (String time : List.of("2026-10-24T23:59:59.500Z", "2026-10-25T00:00:00.250Z", "2026-10-25T00:30:00Z",
					"2026-10-25T00:59:59.999Z", "2026-10-25T01:00:00Z", "2026-10-25T01:30:00.125Z",
					"2026-10-25T02:00:00Z")) {
				Instant now = Instant.parse(time);
				assertThat(query(connection, "SELECT " + JdbcDialect.MYSQL.nowMillis(), now))
					.as("database clock at %s (%s in Berlin)", now, now.atZone(BERLIN).toOffsetDateTime())
					.isEqualTo(Long.toString(now.toEpochMilli()));
			}
		}
	}

	@Test
	void aLiveHoldIsNotTakenOverWhenTheClocksGoBack() throws InterruptedException {
		// Taken at 01:59:50 CEST for 30 s; asked for again 15 s later, at 02:00:05 CEST, the first of
		// the two 02:00:05 of that night.
		JdbcLockRegistry holder = client(Instant.parse("2026-10-24T23:59:50Z"));
		JdbcLockRegistry other = client(Instant.parse("2026-10-25T00:00:05Z"));

		assertThat(holder.getLock("dst").tryLock(Duration.ZERO, Duration.ofSeconds(30))).isTrue();

		assertThat(other.getLock("dst").tryLock(Duration.ZERO, Duration.ofSeconds(30)))
			.as("another client's tryLock of a hold with 15 s left")
			.isFalse();
	}

	@Test
	void anExpiredHoldIsNotKeptAnExtraHourWhenTheClocksGoBack() throws InterruptedException {
		// Taken at 02:59:50 CEST for 30 s, so expired at 02:00:20 CET; asked for at 02:00:30 CET.
		JdbcLockRegistry crashed = client(Instant.parse("2026-10-25T00:59:50Z"));
		JdbcLockRegistry other = client(Instant.parse("2026-10-25T01:00:30Z"));

		assertThat(crashed.getLock("dst").tryLock(Duration.ZERO, Duration.ofSeconds(30))).isTrue();

		assertThat(other.getLock("dst").tryLock(Duration.ZERO, Duration.ofSeconds(30)))
			.as("another client's tryLock of a hold that expired 10 s ago")
			.isTrue();
	}

	/** A client whose every database session has its clock frozen at {@code now}. */
	private JdbcLockRegistry client(Instant now) {
		JdbcLockRegistry registry = new JdbcLockRegistry(dataSource(now), "distributed_locks",
				LockEngineOptions.defaults());
		this.opened.add(registry);
		return registry;
	}

	private HikariDataSource dataSource(Instant frozenAt) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(database.server().jdbcUrl());
		config.setMaximumPoolSize(2);
		if (frozenAt != null) {
			config.setConnectionInitSql("SET timestamp = " + epochSeconds(frozenAt));
		}
		HikariDataSource dataSource = new HikariDataSource(config);
		this.opened.add(dataSource);
		return dataSource;
	}

	private static String query(Connection connection, String sql, Instant frozenAt) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.execute("SET timestamp = " + ((frozenAt != null) ? epochSeconds(frozenAt) : "DEFAULT"));
			try (ResultSet result = statement.executeQuery(sql)) {
				assertThat(result.next()).isTrue();
				return result.getString(1);
			}
		}
	}

	private static String epochSeconds(Instant instant) {
		return BigDecimal.valueOf(instant.toEpochMilli(), 3).toPlainString();
	}

}
