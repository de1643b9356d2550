package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.lifecycle.BeforeTry;
import org.springframework.jdbc.core.JdbcTemplate;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import io.distlock.DistLock;
import io.distlock.core.LockEngineOptions;
import io.distlock.testing.HostileText;

/**
 * Hostile lock names through {@code LockRegistry.getLock(name)} on the table lock (H2 in memory):
 * each is refused with a message saying why, or is a lock whose row key is exactly the name, and
 * which no other name shares.
 */
class JdbcLockNameProperties {

	/** Long enough for a loaded machine's round trip; a free lock is taken at once anyway. */
	private static final Duration WAIT = Duration.ofSeconds(2);

	private static HikariDataSource dataSource;

	private static JdbcLockRegistry first;

	private static JdbcLockRegistry second;

	private static JdbcTemplate jdbc;

	@BeforeContainer
	static void start() {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl("jdbc:h2:mem:lock-names;DB_CLOSE_DELAY=-1");
		config.setMaximumPoolSize(4);
		dataSource = new HikariDataSource(config);
		JdbcLockBackend backend = new JdbcLockBackend(dataSource, JdbcLockRegistry.DEFAULT_TABLE_NAME);
		backend.createSchema();
		LockEngineOptions options = LockEngineOptions.builder().watchdogTimeout(Duration.ofSeconds(30)).build();
		first = new JdbcLockRegistry(backend, options);
		second = new JdbcLockRegistry(dataSource, JdbcLockRegistry.DEFAULT_TABLE_NAME, options);
		jdbc = new JdbcTemplate(dataSource);
	}

	@AfterContainer
	static void stop() {
		if (first != null) {
			first.close();
			second.close();
		}
		if (dataSource != null) {
			dataSource.close();
		}
	}

	/** A failed try may leave a hold behind; the next must not mistake it for a collision. */
	@BeforeTry
	void emptyTable() {
		jdbc.update("DELETE FROM distributed_locks");
	}

	@Property(tries = 200)
	void aNameIsRefusedClearlyOrLockedUnderARowOfItsOwn(@ForAll("names") String name) throws InterruptedException {
		DistLock lock;
		try {
			lock = first.getLock(name);
			if (!lock.tryLock(WAIT, Duration.ofSeconds(30))) {
				throw new AssertionError("free lock '" + name + "' was not taken");
			}
		}
		catch (IllegalArgumentException refused) {
			assertThat(refused).hasMessageContaining("Lock name");
			return;
		}
		try {
			List<String> rows = jdbc.queryForList("SELECT lock_name FROM distributed_locks", String.class);
			assertThat(rows).as("the table's rows while only '%s' is held", name).containsExactly(name);
		}
		finally {
			lock.unlock();
		}
		assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM distributed_locks", Integer.class)).isZero();
	}

	@Property(tries = 200)
	void aLockHeldUnderOneNameLeavesEveryOtherNameFree(@ForAll("names") String name, @ForAll("edits") String edit) throws InterruptedException {
		String other = HostileText.lookalike(name, edit);
		if (other.equals(name)) {
			return;
		}
		DistLock held;
		DistLock elsewhere;
		try {
			held = first.getLock(name);
			elsewhere = second.getLock(other);
			if (!held.tryLock(WAIT, Duration.ofSeconds(30))) {
				throw new AssertionError("free lock '" + name + "' was not taken");
			}
		}
		catch (IllegalArgumentException refused) {
			assertThat(refused).hasMessageContaining("Lock name");
			return;
		}
		try {
			boolean free;
			try {
				free = elsewhere.tryLock(WAIT, Duration.ofSeconds(30));
			}
			catch (IllegalArgumentException refused) {
				assertThat(refused).hasMessageContaining("Lock name");
				return;
			}
			assertThat(free).as("'%s' is free while '%s' is held", other, name).isTrue();
			elsewhere.unlock();
		}
		finally {
			held.unlock();
		}
	}

	@Provide
	Arbitrary<String> names() {
		return HostileText.any().filter(name -> !name.isBlank());
	}

	@Provide
	Arbitrary<String> edits() {
		return HostileText.lookalikeEdits();
	}

}
