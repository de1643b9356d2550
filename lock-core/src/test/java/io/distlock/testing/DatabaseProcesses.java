package io.distlock.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * What the MariaDB and PostgreSQL fixtures do alike: run a set-up tool, start the server with its
 * output in a log, wait until it accepts JDBC connections, and clean up.
 */
final class DatabaseProcesses {

	private static final long START_TIMEOUT_MILLIS = 60_000;

	private DatabaseProcesses() {
	}

	/** Runs a tool to completion; fails with its output if it fails. */
	static void runTool(List<String> command, Path log) {
		try {
			Process tool = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
			if (!tool.waitFor(120, TimeUnit.SECONDS) || tool.exitValue() != 0) {
				throw new IllegalStateException(command + " failed: " + Files.readString(log));
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Starts the server and waits until {@code adminUrl} accepts connections; {@code onJvmExit} gets
	 * the process when the JVM exits, so that no server outlives the tests.
	 * @return the running server process
	 */
	static Process startAndAwait(List<String> command, Path log, String adminUrl, Consumer<Process> onJvmExit) {
		return startAndAwait(command, Map.of(), log, adminUrl, onJvmExit);
	}

	/**
	 * Starts the server as {@link #startAndAwait(List, Path, String, Consumer)} does, with
	 * {@code environment} added to this process's environment.
	 * @return the running server process
	 */
	static Process startAndAwait(List<String> command, Map<String, String> environment, Path log, String adminUrl,
			Consumer<Process> onJvmExit) {
		Process process;
		try {
			ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
			builder.environment().putAll(environment);
			process = builder.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start " + command, ex);
		}
		Process started = process;
		Runtime.getRuntime().addShutdownHook(new Thread(() -> onJvmExit.accept(started)));
		long deadline = System.currentTimeMillis() + START_TIMEOUT_MILLIS;
		while (System.currentTimeMillis() < deadline) {
			try (Connection connection = DriverManager.getConnection(adminUrl)) {
				return process;
			}
			catch (SQLException notYet) {
				if (!process.isAlive()) {
					if (portTaken(log)) {
						throw new PortTaken(command.get(0) + " found its port taken; see " + log);
					}
					throw new IllegalStateException(command.get(0) + " exited at start; see " + log);
				}
				try {
					Thread.sleep(100);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(ex);
				}
			}
		}
		throw new IllegalStateException(command.get(0) + " did not accept connections at " + adminUrl + " within "
				+ START_TIMEOUT_MILLIS + " ms; see " + log);
	}

	/**
	 * The server exited at start because another process took its port between the fixture's check
	 * that it was free and the server's bind: the other test JVM's servers pick free ports too.
	 */
	static final class PortTaken extends IllegalStateException {

		PortTaken(String message) {
			super(message);
		}

	}

	private static boolean portTaken(Path log) {
		try {
			// What both MariaDB and PostgreSQL log when their bind fails so (EADDRINUSE's text).
			return Files.readString(log).contains("Address already in use");
		}
		catch (IOException ex) {
			return false;
		}
	}

	static void execute(String url, String sql) {
		try (Connection connection = DriverManager.getConnection(url)) {
			connection.createStatement().execute(sql);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not run " + sql, ex);
		}
	}

	/** Waits for a stopping process, killing it if it lingers. */
	static void awaitExit(Process process) {
		try {
			if (!process.waitFor(30, TimeUnit.SECONDS)) {
				process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	static void deleteRecursively(Path directory) {
		try (Stream<Path> files = Files.walk(directory)) {
			files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
		}
		catch (IOException ex) {
			// A leftover temporary directory is harmless.
		}
	}

}
