package io.distlock.jdbc;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.testing.DatabaseServerExtension;

/** {@link JdbcSharedHoldsRaces} on a real MariaDB server started for this class. */
class JdbcSharedHoldsMariaDbTest extends JdbcSharedHoldsRaces {

	@RegisterExtension
	static final DatabaseServerExtension database = DatabaseServerExtension.mariaDb();

	@Override
	protected String jdbcUrl() {
		return database.server().jdbcUrl();
	}

	/** A lock wait that cannot end (the test's own thread holds the lock) fails in seconds, not minutes. */
	@Override
	protected String shortLockWait() {
		return "SET SESSION innodb_lock_wait_timeout = 10";
	}

}
