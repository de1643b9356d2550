package io.distlock.testing;

/**
 * A real database server a test started and stops: MariaDB or PostgreSQL, on a free port.
 */
public interface DatabaseServer extends AutoCloseable {

	/** @return a JDBC URL of its test database */
	String jdbcUrl();

	/** Stops it; {@link #restart()} brings it back with its data. */
	void stop();

	/** Stops it if running and starts it again on the same port, with its data. */
	void restart();

	@Override
	void close();

}
