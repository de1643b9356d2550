package io.distlock.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

import io.distlock.embedded.RedisServerProcess;

/**
 * The life of a private database server process for tests, whatever the database: a temporary
 * directory and a free port of its own, set up once, started, stopped and restarted on the same data
 * and port, and deleted on close. A subclass says how to set up, launch and stop its database.
 */
abstract class DatabaseServerProcess implements DatabaseServer {

	/** Whether the tests run as root, which some servers refuse or must be told about. */
	static final boolean RUNS_AS_ROOT = "root".equals(System.getProperty("user.name"));

	/** How many free ports the first start tries. */
	private static final int MAX_PORTS = 3;

	/** The server's own directory: its data, socket, pid file and logs. */
	protected final Path directory;

	/** The free port the server listens on, kept across restarts (another one if taken at the first start). */
	protected int port;

	private Process process;

	/**
	 * @param directoryPrefix how the name of the server's temporary directory starts
	 */
	protected DatabaseServerProcess(String directoryPrefix) {
		try {
			this.directory = Files.createTempDirectory(directoryPrefix);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.port = RedisServerProcess.freePort();
	}

	/** Sets up the server's data directory, starts it and creates the empty database {@code distlock}. */
	protected final void startWithEmptyDatabase() {
		install();
		for (int attempt = 1;; attempt++) {
			try {
				this.process = launch();
				break;
			}
			catch (DatabaseProcesses.PortTaken taken) {
				if (attempt == MAX_PORTS) {
					throw taken;
				}
				this.port = RedisServerProcess.freePort();
			}
		}
		execute("CREATE DATABASE distlock");
	}

	/** Creates the server's data directory, before its first start. */
	protected abstract void install();

	/** @return the started server process, accepting connections at {@link #adminUrl()} */
	protected abstract Process launch();

	/** @return a JDBC URL the server accepts connections at before {@code distlock} exists */
	protected abstract String adminUrl();

	/**
	 * Asks the running server process to shut down; {@link #stop()} then waits for it to exit.
	 * @param process the running server process
	 */
	protected void shutDown(Process process) {
		process.destroy();
	}

	/** Stops the server; {@link #restart()} starts it again on the same data and port. */
	@Override
	public synchronized void stop() {
		if (this.process != null && this.process.isAlive()) {
			shutDown(this.process);
			DatabaseProcesses.awaitExit(this.process);
		}
	}

	/** Stops and starts the server; its data survives, as a database's does. */
	@Override
	public synchronized void restart() {
		stop();
		this.process = launch();
	}

	@Override
	public void close() {
		stop();
		DatabaseProcesses.deleteRecursively(this.directory);
	}

	private void execute(String sql) {
		DatabaseProcesses.execute(adminUrl(), sql);
	}

}
