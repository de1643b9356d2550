package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import io.distlock.DistLock;
import io.distlock.core.LockEngineOptions;
import io.distlock.testing.MariaDbServerProcess;

/**
 * What is particular to the table lock, on a real MariaDB: racing inserts of one name, and
 * independence from the caller's transaction.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MariaDbLockTest {

	private static MariaDbServerProcess server;

	private final List<AutoCloseable> opened = new ArrayList<>();

	@BeforeAll
	static void startServer() {
		// Reported as skipped, not passed, where MariaDB is missing; .ci/run installs it.
		Assumptions.assumeTrue(MariaDbServerProcess.installed(),
				"MariaDB's server binaries are not installed (apt-get install mariadb-server)");
		server = MariaDbServerProcess.start();
	}

	@AfterAll
	static void stopServer() {
		if (server != null) {
			server.close();
		}
	}

	@BeforeEach
	void schema() {
		HikariDataSource setup = dataSource();
		new JdbcLockBackend(setup, "distributed_locks").createSchema();
		new JdbcTemplate(setup).update("DELETE FROM distributed_locks");
	}

	@AfterEach
	void close() throws Exception {
		for (int i = this.opened.size() - 1; i >= 0; i--) {
			this.opened.get(i).close();
		}
	}

	private HikariDataSource dataSource() {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(server.jdbcUrl());
		config.setMaximumPoolSize(8);
		HikariDataSource dataSource = new HikariDataSource(config);
		this.opened.add(dataSource);
		return dataSource;
	}

	private JdbcLockRegistry client(HikariDataSource dataSource) {
		JdbcLockRegistry registry = new JdbcLockRegistry(dataSource, "distributed_locks", LockEngineOptions.defaults());
		this.opened.add(registry);
		return registry;
	}

	@Test
	void racingFirstAcquisitionsOfOneNameLetExactlyOneIn() throws Exception {
		List<JdbcLockRegistry> clients = List.of(client(dataSource()), client(dataSource()), client(dataSource()),
				client(dataSource()));
		ExecutorService threads = Executors.newFixedThreadPool(clients.size());
		try {
			for (int round = 0; round < 30; round++) {
				String name = "race:" + round;
				CyclicBarrier together = new CyclicBarrier(clients.size());
				List<Future<Boolean>> attempts = new ArrayList<>();
				for (JdbcLockRegistry client : clients) {
					attempts.add(threads.submit(() -> {
						DistLock lock = client.getLock(name);
						together.await();
						return lock.tryLock();
					}));
				}
				int winners = 0;
				for (Future<Boolean> attempt : attempts) {
					winners += attempt.get(30, TimeUnit.SECONDS) ? 1 : 0;
				}
				assertThat(winners).as("winners of round %d", round).isEqualTo(1);
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	@Test
	void theCallersRollbackDoesNotUndoTheLockAndReleasingDoesNotCommitTheCallersWork() throws Exception {
		HikariDataSource dataSource = dataSource();
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);
		jdbc.execute("CREATE TABLE IF NOT EXISTS orders (id INT PRIMARY KEY)");
		jdbc.update("DELETE FROM orders");
		JdbcLockRegistry mine = client(dataSource);
		JdbcLockRegistry theirs = client(dataSource());
		TransactionTemplate callersTransaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));

		DistLock lock = mine.getLock("in-tx");
		callersTransaction.executeWithoutResult(status -> {
			lock.lock();
			jdbc.update("INSERT INTO orders (id) VALUES (1)");
			status.setRollbackOnly();
		});
		// The caller rolled back; the lock it took inside is still held.
		assertThat(lock.isHeldByCurrentThread()).isTrue();
		assertThat(otherThreadTryLock(theirs.getLock("in-tx"))).isFalse();

		callersTransaction.executeWithoutResult(status -> {
			jdbc.update("INSERT INTO orders (id) VALUES (2)");
			lock.unlock();
			status.setRollbackOnly();
		});
		// The release took effect, and did not commit the caller's insert on the way.
		assertThat(otherThreadTryLock(theirs.getLock("in-tx"))).isTrue();
		assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM orders", Integer.class)).isZero();
	}

	private boolean otherThreadTryLock(DistLock lock) throws Exception {
		ExecutorService thread = Executors.newSingleThreadExecutor();
		try {
			return thread.submit(() -> {
				boolean acquired = lock.tryLock(Duration.ZERO);
				if (acquired) {
					lock.unlock();
				}
				return acquired;
			}).get(30, TimeUnit.SECONDS);
		}
		finally {
			thread.shutdownNow();
		}
	}

}
