package io.distlock.jdbc;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;

import io.distlock.testing.PostgresServerProcess;

/**
 * The contract suite on a real PostgreSQL server started for this class.
 */
class PostgresLockRegistryContractTest extends JdbcLockRegistryContract {

	private static PostgresServerProcess server;

	@BeforeAll
	static void startServer() {
		// Reported as skipped, not passed, where PostgreSQL is missing; .ci/run installs it.
		Assumptions.assumeTrue(PostgresServerProcess.binaries() != null,
				"PostgreSQL's server binaries are not installed (apt-get install postgresql)");
		server = PostgresServerProcess.start();
	}

	@AfterAll
	static void stopServer() {
		if (server != null) {
			server.close();
		}
	}

	@Override
	protected String jdbcUrl() {
		return server.jdbcUrl();
	}

	@Override
	protected void restartServers() {
		server.restart();
	}

	@Override
	protected void stopServers() {
		server.stop();
	}

	@Override
	protected boolean restartLosesData() {
		return false;
	}

}
