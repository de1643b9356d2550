package io.distlock.autoconfigure;

import javax.sql.DataSource;

import io.distlock.LockRegistry;
import io.distlock.autoconfigure.DistLockSettings.RegistrySpec;
import io.distlock.core.LockEngineOptions;
import io.distlock.jdbc.JdbcLockBackend;
import io.distlock.jdbc.JdbcLockRegistry;

/**
 * Builds a table lock, the default one and the named ones alike. Loaded only where Spring JDBC is
 * present.
 */
final class JdbcRegistries {

	private JdbcRegistries() {
	}

	/**
	 * A table lock on the spec's table, its tables created first if asked, else checked to exist.
	 * @param spec the registry's settings
	 * @param dataSource the application's DataSource
	 * @param options the engine's options
	 * @return the registry
	 */
	static JdbcLockRegistry create(RegistrySpec spec, DataSource dataSource, LockEngineOptions options) {
		JdbcLockBackend backend = new JdbcLockBackend(dataSource, spec.tableName());
		if (spec.createSchema()) {
			backend.createSchema();
		}
		else {
			BackendRequirements.requireSchema(spec.jdbcPrefix(), backend, spec.tableName());
		}
		return new JdbcLockRegistry(backend, options);
	}

	/** A registry named in properties, on the application's single DataSource. */
	static LockRegistry named(RegistrySpec spec, LockEngineOptions options, BackendRequirements requirements) {
		return create(spec, requirements.requireDataSource(spec.prefix() + ".backend"), options);
	}

}
