package io.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;

import javax.sql.DataSource;

/**
 * What differs between the supported databases: how to read the database's clock, and which DDL
 * creates the schema.
 */
public enum JdbcDialect {

	/**
	 * MySQL and MariaDB. Reads UTC and counts from the epoch without any time zone: a reading that
	 * converts local time ({@code UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3))}) is an hour ahead during the
	 * repeated hour when a server in a daylight-saving zone puts its clocks back, which frees every
	 * live lock at once and later keeps an abandoned one for an extra hour.
	 */
	MYSQL("TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000", "mysql"),

	/** PostgreSQL; {@code clock_timestamp()} rather than the transaction's start time. */
	POSTGRESQL("CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)", "postgresql"),

	/** H2, for quick tests. */
	H2("CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP(3)) * 1000 AS BIGINT)", "h2");

	private final String nowMillis;

	private final String schemaName;

	JdbcDialect(String nowMillis, String schemaName) {
		this.nowMillis = nowMillis;
		this.schemaName = schemaName;
	}

	/** @return an SQL expression for the database's current time in epoch milliseconds */
	public String nowMillis() {
		return this.nowMillis;
	}

	/** @return the classpath resource of this database's DDL */
	public String schemaResource() {
		return "io/distlock/jdbc/schema-" + this.schemaName + ".sql";
	}

	/**
	 * @param dataSource a data source of a supported database
	 * @return its dialect
	 * @throws IllegalStateException if the database is not supported
	 */
	public static JdbcDialect detect(DataSource dataSource) {
		try (Connection connection = dataSource.getConnection()) {
			String product = connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
			if (product.contains("mysql") || product.contains("mariadb")) {
				return MYSQL;
			}
			if (product.contains("postgres")) {
				return POSTGRESQL;
			}
			if (product.contains("h2")) {
				return H2;
			}
			throw new IllegalStateException("distlock's JDBC lock supports MySQL, MariaDB, PostgreSQL and H2, not "
					+ connection.getMetaData().getDatabaseProductName());
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not detect the database of the lock table's DataSource", ex);
		}
	}

}
