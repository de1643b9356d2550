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

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import io.distlock.DistLock;
import io.distlock.core.LockEngineOptions;
import io.distlock.testing.ClosedAfterEach;
import io.distlock.testing.DatabaseServerExtension;

/**
 * What is particular to the table lock, on a real MariaDB: racing inserts of one name, concurrent
 * first acquisitions of different names, and independence from the caller's transaction.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MariaDbLockTest {

	@RegisterExtension
	static final DatabaseServerExtension database = DatabaseServerExtension.mariaDb();

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	@BeforeEach
	void schema() {
		HikariDataSource setup = dataSource();
		new JdbcLockBackend(setup, "distributed_locks").createSchema();
		new JdbcTemplate(setup).update("DELETE FROM distributed_locks");
	}

	private HikariDataSource dataSource() {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(database.server().jdbcUrl());
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
	void namesThatDifferOnlyInCaseOrTrailingSpacesAreDifferentLocks() throws Exception {
		// MariaDB's default collations compare 'Order', 'order' and 'order ' as equal: as one row, the
		// release of one name freed the others while their holder was still inside.
		JdbcLockRegistry mine = client(dataSource());
		JdbcLockRegistry theirs = client(dataSource());
		DistLock upper = mine.getLock("Order");
		DistLock lower = mine.getLock("order");
		DistLock spaced = mine.getLock("order ");
		assertThat(upper.tryLock()).isTrue();
		assertThat(lower.tryLock()).isTrue();
		assertThat(spaced.tryLock()).isTrue();
		lower.unlock();
		spaced.unlock();
		ExecutorService other = Executors.newSingleThreadExecutor();
		try {
			assertThat(other.submit(() -> theirs.getLock("Order").tryLock()).get(30, TimeUnit.SECONDS))
				.as("'Order' is still held by its thread").isFalse();
			assertThat(other.submit(() -> {
				boolean acquired = theirs.getLock("order").tryLock();
				if (acquired) {
					theirs.getLock("order").unlock();
				}
				return acquired;
			}).get(30, TimeUnit.SECONDS)).as("'order' was released").isTrue();
		}
		finally {
			other.shutdownNow();
		}
		upper.unlock();
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
	void firstAcquisitionsOfDifferentNamesAllSucceed() throws Exception {
		// Each name is tried by one thread only, so every tryLock() finds its lock free. A locking
		// read of an absent name takes an InnoDB gap lock; with two first acquisitions in one gap, each
		// waited to insert for the other's gap lock (while first acquisitions still drew a fencing token,
		// also for the counter), and InnoDB rolled one of them back.
		List<JdbcLockRegistry> clients = List.of(client(dataSource()), client(dataSource()));
		int threadsPerClient = 4;
		int rounds = 40;
		ExecutorService threads = Executors.newFixedThreadPool(clients.size() * threadsPerClient);
		try {
			CyclicBarrier together = new CyclicBarrier(clients.size() * threadsPerClient);
			List<Future<List<String>>> attempts = new ArrayList<>();
			for (int c = 0; c < clients.size(); c++) {
				for (int t = 0; t < threadsPerClient; t++) {
					JdbcLockRegistry client = clients.get(c);
					String thread = c + "-" + t;
					attempts.add(threads.submit(() -> {
						List<String> refused = new ArrayList<>();
						for (int round = 0; round < rounds; round++) {
							String name = "free:" + round + ":" + thread;
							DistLock lock = client.getLock(name);
							together.await(30, TimeUnit.SECONDS);
							if (lock.tryLock()) {
								lock.unlock();
							}
							else {
								refused.add(name);
							}
						}
						return refused;
					}));
				}
			}
			List<String> refused = new ArrayList<>();
			for (Future<List<String>> attempt : attempts) {
				refused.addAll(attempt.get(60, TimeUnit.SECONDS));
			}
			assertThat(refused).as("free locks refused").isEmpty();
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
