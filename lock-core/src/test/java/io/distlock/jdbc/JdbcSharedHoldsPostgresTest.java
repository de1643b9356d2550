package io.distlock.jdbc;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.testing.DatabaseServerExtension;

/** {@link JdbcSharedHoldsRaces} on a real PostgreSQL server started for this class. */
class JdbcSharedHoldsPostgresTest extends JdbcSharedHoldsRaces {

	@RegisterExtension
	static final DatabaseServerExtension database = DatabaseServerExtension.postgres();

	@Override
	protected String jdbcUrl() {
		return database.server().jdbcUrl();
	}

}
