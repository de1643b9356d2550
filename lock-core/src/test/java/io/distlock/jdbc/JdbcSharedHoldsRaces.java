package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import io.distlock.HoldKind;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.HoldRef;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.ReleaseRequest;
import io.distlock.testing.ClosedAfterEach;

/**
 * Read-write holds of the table lock asked of {@link JdbcLockBackend} directly, in interleavings with
 * other transactions that a test arranges by holding row locks on a connection of its own.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class JdbcSharedHoldsRaces {

	private static final String TABLE = "distributed_locks";

	private static final String SHARED = TABLE + "_shared";

	private static final Duration LEASE = Duration.ofSeconds(30);

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private HikariDataSource dataSource;

	private JdbcLockBackend backend;

	private JdbcTemplate jdbc;

	protected abstract String jdbcUrl();

	/** A connection's setting that keeps a lock wait short, or {@code null}. */
	protected String shortLockWait() {
		return null;
	}

	@BeforeEach
	void schema() {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(jdbcUrl());
		config.setMaximumPoolSize(8);
		config.setConnectionTimeout(5000);
		if (shortLockWait() != null) {
			config.setConnectionInitSql(shortLockWait());
		}
		this.dataSource = this.opened.add(new HikariDataSource(config));
		this.backend = new JdbcLockBackend(this.dataSource, TABLE);
		this.backend.createSchema();
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.jdbc.update("DELETE FROM " + TABLE);
		this.jdbc.update("DELETE FROM " + SHARED);
		// Connections opened now, so that a thread a test starts reaches its statements at once.
		List<Connection> warm = new java.util.ArrayList<>();
		try {
			for (int i = 0; i < 4; i++) {
				warm.add(this.dataSource.getConnection());
			}
			for (Connection connection : warm) {
				connection.close();
			}
		}
		catch (java.sql.SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@AfterEach
	void stopThreads() {
		this.threads.shutdownNow();
	}

	private Acquisition acquire(String name, HoldKind kind, String owner, Duration lease) {
		return this.backend.acquire(new AcquireRequest(name, owner, 0, lease, Duration.ZERO, "t", kind, 0));
	}

	private Release release(String name, HoldKind kind, String owner) {
		return this.backend.release(new ReleaseRequest(name, owner, 1, null, Acquisition.TOKEN_ON_REQUEST, null, kind));
	}

	private long dbNow() {
		return this.jdbc.queryForObject("SELECT " + this.backend.dialect().nowMillis(), Long.class);
	}

	private long expiresAt(String name, String holder) {
		return this.jdbc.queryForObject("SELECT expires_at FROM " + SHARED + " WHERE lock_space = 'r' AND lock_name = ? "
				+ "AND holder = ?", Long.class, name, holder);
	}

	private void sleepUntilDbClockPasses(long deadline) throws InterruptedException {
		while (dbNow() <= deadline) {
			Thread.sleep(20);
		}
	}

	/**
	 * A first read asked inside the caller's own transaction (a {@code @Transactional} method) must be
	 * independent of it, as every table lock operation is: the anchor row was inserted on the caller's
	 * connection, in the caller's transaction, so the acquisition's own transaction waited for the
	 * caller's (InnoDB, H2: a lock wait on the same thread) or never saw the anchor (PostgreSQL, where
	 * the second insert's duplicate key then aborted the caller's transaction).
	 */
	@Test
	void aFirstReadInsideTheCallersTransactionIsTakenAndOutlivesItsRollback() throws Exception {
		TransactionTemplate callersTransaction = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		Future<Acquisition> inside = this.threads.submit(() -> callersTransaction.execute(status -> {
			Acquisition acquired = acquire("in-tx", HoldKind.READ, "c:1", LEASE);
			status.setRollbackOnly();
			return acquired;
		}));
		assertThat(inside.get(60, TimeUnit.SECONDS).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		// The caller rolled back: the read hold is still there, and keeps a writer out.
		assertThat(this.backend.isHeldBy("in-tx", HoldKind.READ, "c:1")).isTrue();
		assertThat(acquire("in-tx", HoldKind.WRITE, "d:1", LEASE).status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
	}

	/**
	 * A renewal that took its row (and, on MariaDB and H2, its clock) while the hold still lasted,
	 * and commits a moment later: a release of another reader, deciding meanwhile that the lock is
	 * idle from an unlocked count, deleted every row of the lock, the renewed hold too. The renewal
	 * answered true, and a writer then got in beside that reader.
	 */
	@Test
	void aReleaseDoesNotDeleteAReadHoldARenewalIsExtendingMeanwhile() throws Exception {
		assertThat(acquire("rw", HoldKind.READ, "a:1", LEASE).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(acquire("rw", HoldKind.READ, "b:1", Duration.ofMillis(1500)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		long expiry = expiresAt("rw", "r:b:1");
		Future<Release> released;
		try (Connection renewal = this.dataSource.getConnection()) {
			renewal.setAutoCommit(false);
			// The renewal's own statement, caught between its update and its commit.
			try (PreparedStatement update = renewal.prepareStatement("UPDATE " + SHARED + " SET expires_at = "
					+ this.backend.dialect().nowMillis() + " + ? WHERE lock_space = 'r' AND lock_name = ? AND holder = ? "
					+ "AND expires_at > " + this.backend.dialect().nowMillis())) {
				update.setLong(1, LEASE.toMillis());
				update.setString(2, "rw");
				update.setString(3, "r:b:1");
				assertThat(update.executeUpdate()).isEqualTo(1);
			}
			sleepUntilDbClockPasses(expiry + 50);
			released = this.threads.submit(() -> release("rw", HoldKind.READ, "a:1"));
			// Time for the release to reach its delete, which waits for the row.
			Thread.sleep(1500);
			renewal.commit();
		}
		assertThat(released.get(30, TimeUnit.SECONDS)).isEqualTo(Release.RELEASED);
		// The renewal said yes: b's read hold lasts, and a writer stays out.
		assertThat(this.backend.isHeldBy("rw", HoldKind.READ, "b:1")).isTrue();
		assertThat(acquire("rw", HoldKind.WRITE, "c:1", LEASE).status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
	}

	/**
	 * The same with the backend's own renewal, held up behind another transaction on the hold's row
	 * (a token being issued, say): the statement judged the hold live before the wait (MariaDB and H2
	 * read the clock when the statement starts; PostgreSQL does not check again a row that was only
	 * locked), so it still extends the hold after the wait, while the release counted it as expired.
	 */
	@Test
	void aRenewalThatAnswersTrueLeavesTheHoldInPlace() throws Exception {
		assertThat(acquire("rw2", HoldKind.READ, "a:1", LEASE).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(acquire("rw2", HoldKind.READ, "b:1", Duration.ofMillis(1500)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		long expiry = expiresAt("rw2", "r:b:1");
		Future<List<Boolean>> renewed;
		Future<Release> released;
		try (Connection other = this.dataSource.getConnection()) {
			other.setAutoCommit(false);
			try (PreparedStatement lockRow = other.prepareStatement("SELECT fencing_token FROM " + SHARED
					+ " WHERE lock_space = 'r' AND lock_name = ? AND holder = ? FOR UPDATE")) {
				lockRow.setString(1, "rw2");
				lockRow.setString(2, "r:b:1");
				lockRow.executeQuery().close();
			}
			renewed = this.threads.submit(() -> this.backend.renew(
					List.of(new HoldRef("rw2", "b:1", null, HoldKind.READ)), LEASE, null));
			sleepUntilDbClockPasses(expiry + 50);
			released = this.threads.submit(() -> release("rw2", HoldKind.READ, "a:1"));
			// Time for the release to reach its delete, which waits for the row.
			Thread.sleep(1500);
			other.commit();
		}
		boolean renewal = renewed.get(30, TimeUnit.SECONDS).get(0);
		assertThat(released.get(30, TimeUnit.SECONDS)).isEqualTo(Release.RELEASED);
		assertThat(this.backend.isHeldBy("rw2", HoldKind.READ, "b:1")).as("renewal answered " + renewal)
			.isEqualTo(renewal);
		if (renewal) {
			assertThat(acquire("rw2", HoldKind.WRITE, "c:1", LEASE).status())
				.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		}
	}

}
