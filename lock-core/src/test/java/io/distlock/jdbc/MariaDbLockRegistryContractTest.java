package io.distlock.jdbc;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.testing.DatabaseServerExtension;

/**
 * The contract suite on a real MariaDB server started for this class.
 */
class MariaDbLockRegistryContractTest extends DatabaseServerContract {

	@RegisterExtension
	static final DatabaseServerExtension database = DatabaseServerExtension.mariaDb();

	@Override
	protected DatabaseServerExtension database() {
		return database;
	}

}
