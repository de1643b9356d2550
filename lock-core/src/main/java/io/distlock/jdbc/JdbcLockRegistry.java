package io.distlock.jdbc;

import java.util.Objects;

import javax.sql.DataSource;

import io.distlock.core.LockEngine;
import io.distlock.core.LockEngineOptions;
import io.distlock.core.RegistryBuilder;

/**
 * The {@link io.distlock.LockRegistry} on a relational table (MySQL, MariaDB, PostgreSQL, H2), for
 * applications with a database but no Redis. Same API, reentrancy, watchdog, lost-hold reporting and
 * fencing tokens as the Redis registry; waiters poll instead of being notified.
 */
public class JdbcLockRegistry extends LockEngine {

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
	 * Checked before the database sees the name: a strict database fails the insert with an error
	 * that reads like an outage, and MySQL without strict mode cuts the name to fit, making it the
	 * same lock as every name that shares its first 255 characters. PostgreSQL refuses a NUL
	 * character the same way.
	 * @throws IllegalArgumentException also if the name is longer than {@value #MAX_NAME_LENGTH}
	 * characters, which the lock table cannot hold, or has a NUL character
	 */
	@Override
	protected String checkName(String name) {
		if (name != null && name.length() > MAX_NAME_LENGTH) {
			throw new IllegalArgumentException("Lock name '" + name.substring(0, 40) + "…' is " + name.length()
					+ " characters long; the lock table's lock_name column holds " + MAX_NAME_LENGTH
					+ ". Use a shorter name (for a long key, a hash of it).");
		}
		// PostgreSQL's text cannot hold NUL; refused on every database, so a name works on all of them.
		int nul = (name != null) ? name.indexOf('\u0000') : -1;
		if (nul >= 0) {
			throw new IllegalArgumentException("Lock name has a NUL character at index " + nul
					+ ", which the lock table cannot store on PostgreSQL; use a name without control characters.");
		}
		return name;
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
