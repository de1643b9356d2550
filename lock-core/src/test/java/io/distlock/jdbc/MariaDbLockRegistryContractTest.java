package io.distlock.jdbc;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;

import io.distlock.testing.MariaDbServerProcess;

/**
 * The contract suite on a real MariaDB server started for this class. A database keeps its rows
 * across a restart, so holds survive it.
 */
class MariaDbLockRegistryContractTest extends JdbcLockRegistryContract {

	private static MariaDbServerProcess server;

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
