package io.distlock.jdbc;

import java.util.Objects;

import javax.sql.DataSource;

import io.distlock.core.BackendLockRegistry;
import io.distlock.core.LockEngineOptions;
import io.distlock.core.RegistryBuilder;

/**
 * The {@link io.distlock.LockRegistry} on a relational table (MySQL, MariaDB, PostgreSQL, H2), for
 * applications with a database but no Redis. Same API, reentrancy, watchdog, lost-hold reporting and
 * fencing tokens as the Redis registry; waiters poll instead of being notified.
 */
public class JdbcLockRegistry extends BackendLockRegistry {

	/** The table name used when none is given. */
	public static final String DEFAULT_TABLE_NAME = "distributed_locks";

	/** The length of the shipped schemas' {@code lock_name VARCHAR(255)}. */
	public static final int MAX_NAME_LENGTH = 255;

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

	/**
	 * Starts a registry on a database table: {@code JdbcLockRegistry.builder(dataSource).createSchema().build()}.
	 * @param dataSource the application's data source
	 * @return a builder with the defaults
	 */
	public static Builder builder(DataSource dataSource) {
		return new Builder(Objects.requireNonNull(dataSource, "dataSource"));
	}

	/** Builds a {@link JdbcLockRegistry}. */
	public static final class Builder extends RegistryBuilder<Builder, JdbcLockRegistry> {

		private final DataSource dataSource;

		private String tableName = DEFAULT_TABLE_NAME;

		private boolean createSchema;

		private Builder(DataSource dataSource) {
			this.dataSource = dataSource;
		}

		/**
		 * @param tableName the lock table (default {@value #DEFAULT_TABLE_NAME})
		 * @return this builder
		 */
		public Builder tableName(String tableName) {
			this.tableName = tableName;
			return this;
		}

		/**
		 * Creates the lock table when the registry is built, if it does not exist yet.
		 * @return this builder
		 */
		public Builder createSchema() {
			this.createSchema = true;
			return this;
		}

		@Override
		public JdbcLockRegistry build() {
			JdbcLockBackend backend = new JdbcLockBackend(this.dataSource, this.tableName);
			if (this.createSchema) {
				backend.createSchema();
			}
			return new JdbcLockRegistry(backend, options());
		}

	}

}
