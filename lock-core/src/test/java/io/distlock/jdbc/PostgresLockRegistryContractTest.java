package io.distlock.jdbc;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.testing.DatabaseServerExtension;

/**
 * The contract suite on a real PostgreSQL server started for this class.
 */
class PostgresLockRegistryContractTest extends DatabaseServerContract {

	@RegisterExtension
	static final DatabaseServerExtension database = DatabaseServerExtension.postgres();

	@Override
	protected DatabaseServerExtension database() {
		return database;
	}

}
