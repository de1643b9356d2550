package io.distlock.jdbc;

import javax.sql.DataSource;

import io.distlock.core.LockEngine;
import io.distlock.core.LockEngineOptions;

/**
 * The {@link io.distlock.LockRegistry} on a relational table (MySQL, MariaDB, PostgreSQL, H2), for
 * applications with a database but no Redis. Same API, reentrancy, watchdog, lost-hold reporting and
 * fencing tokens as the Redis registry; waiters poll instead of being notified.
 */
public class JdbcLockRegistry extends LockEngine {

	/** The table name used when none is given. */
	public static final String DEFAULT_TABLE_NAME = "distributed_locks";

	/**
	 * @param dataSource the application's data source
	 * @param tableName the lock table
	 * @param options the engine's settings
	 */
	public JdbcLockRegistry(DataSource dataSource, String tableName, LockEngineOptions options) {
		this(new JdbcLockBackend(dataSource, tableName), options);
	}

	/**
	 * @param backend a configured backend (e.g. after {@link JdbcLockBackend#createSchema()})
	 * @param options the engine's settings
	 */
	public JdbcLockRegistry(JdbcLockBackend backend, LockEngineOptions options) {
		super(backend, options);
	}

}
