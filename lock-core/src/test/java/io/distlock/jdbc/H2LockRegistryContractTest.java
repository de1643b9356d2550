package io.distlock.jdbc;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

import org.h2.tools.Server;

import com.zaxxer.hikari.HikariConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.distlock.embedded.RedisServerProcess;

/**
 * The contract suite on H2, served over TCP so that the tests can stop and restart it. An
 * in-memory database loses its data on restart.
 */
class H2LockRegistryContractTest extends JdbcLockRegistryContract {

	private static final int PORT = RedisServerProcess.freePort();

	private static Server server;

	@BeforeAll
	static void startServer() throws SQLException {
		server = Server.createTcpServer("-tcpPort", Integer.toString(PORT), "-ifNotExists").start();
	}

	@AfterAll
	static void stopServer() {
		server.stop();
	}

	@Override
	protected String jdbcUrl() {
		return "jdbc:h2:tcp://127.0.0.1:" + PORT + "/mem:distlock;DB_CLOSE_DELAY=-1";
	}

	@Override
	protected void configure(HikariConfig config) {
		config.setExceptionOverrideClassName(H2ClosedConnectionEviction.class.getName());
	}

	@Override
	protected void restartServers() {
		// An in-memory database loses everything on restart; dropping it all, then cutting every
		// connection by stopping the server, is what clients see of that.
		try (Connection connection = DriverManager.getConnection(jdbcUrl())) {
			connection.createStatement().execute("DROP ALL OBJECTS");
		}
		catch (SQLException ex) {
			// Already down.
		}
		server.stop();
		try {
			server = Server.createTcpServer("-tcpPort", Integer.toString(PORT), "-ifNotExists").start();
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
		freshTables();
	}

	@Override
	protected void stopServers() {
		server.stop();
	}

}
