package io.distlock.jdbc;

import io.distlock.testing.DatabaseServerExtension;

/**
 * The contract suite on a real database server the subclass starts with a
 * {@link DatabaseServerExtension}. A database keeps its rows across a restart, so holds survive it.
 */
abstract class DatabaseServerContract extends JdbcLockRegistryContract {

	/** @return the subclass's extension, registered on a static field */
	protected abstract DatabaseServerExtension database();

	@Override
	protected String jdbcUrl() {
		return database().server().jdbcUrl();
	}

	@Override
	protected void restartServers() {
		database().server().restart();
	}

	@Override
	protected void stopServers() {
		database().server().stop();
	}

	@Override
	protected boolean restartLosesData() {
		return false;
	}

}
