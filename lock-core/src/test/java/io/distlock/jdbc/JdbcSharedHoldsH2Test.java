package io.distlock.jdbc;

/** {@link JdbcSharedHoldsRaces} on an in-memory H2. */
class JdbcSharedHoldsH2Test extends JdbcSharedHoldsRaces {

	@Override
	protected String jdbcUrl() {
		return "jdbc:h2:mem:shared-races;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";
	}

}
