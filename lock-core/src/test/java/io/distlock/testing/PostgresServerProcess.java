package io.distlock.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import io.distlock.embedded.RedisServerProcess;

/**
 * A private PostgreSQL server for tests: {@code initdb} into a temporary directory and
 * {@code postgres} on a free port, started and stopped by the test. PostgreSQL refuses to run as
 * root, so as root both run as the {@code postgres} user.
 */
public final class PostgresServerProcess implements DatabaseServer {

	private static final boolean ROOT = "root".equals(System.getProperty("user.name"));

	private final Path directory;

	private final Path binaries;

	private final int port;

	private Process process;

	private PostgresServerProcess(Path directory, Path binaries, int port) {
		this.directory = directory;
		this.binaries = binaries;
		this.port = port;
	}

	/** @return the directory of PostgreSQL's server binaries, or {@code null} if not installed */
	public static Path binaries() {
		Path root = Path.of("/usr/lib/postgresql");
		if (!Files.isDirectory(root)) {
			return null;
		}
		try (Stream<Path> versions = Files.list(root)) {
			return versions.map(version -> version.resolve("bin"))
				.filter(bin -> Files.isExecutable(bin.resolve("postgres")) && Files.isExecutable(bin.resolve("initdb")))
				.max(Comparator.naturalOrder())
				.orElse(null);
		}
		catch (IOException ex) {
			return null;
		}
	}

	/** @return a started server with an empty database {@code distlock} */
	public static PostgresServerProcess start() {
		Path binaries = binaries();
		if (binaries == null) {
			throw new IllegalStateException("PostgreSQL's server binaries are not installed (apt-get install postgresql)");
		}
		try {
			Path directory = Files.createTempDirectory("distlock-postgres-");
			PostgresServerProcess server = new PostgresServerProcess(directory, binaries, RedisServerProcess.freePort());
			if (ROOT) {
				run(List.of("chown", "-R", "postgres", directory.toString()), directory);
			}
			run(server.asServerUser(binaries.resolve("initdb").toString(), "-D", directory.resolve("data").toString(),
					"-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"), directory);
			server.launch();
			server.execute("CREATE DATABASE distlock");
			return server;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** @return a JDBC URL of the {@code distlock} database */
	@Override
	public String jdbcUrl() {
		return "jdbc:postgresql://127.0.0.1:" + this.port + "/distlock?user=postgres";
	}

	/** Stops the server (fast shutdown); {@link #restart()} starts it again on the same data and port. */
	@Override
	public synchronized void stop() {
		if (this.process == null || !this.process.isAlive()) {
			return;
		}
		try {
			List<String> pidFile = Files.readAllLines(this.directory.resolve("data/postmaster.pid"));
			run(List.of("kill", "-INT", pidFile.get(0).trim()), this.directory);
		}
		catch (IOException | RuntimeException ex) {
			this.process.destroy();
		}
		DatabaseProcesses.awaitExit(this.process);
	}

	/** Stops and starts the server; its data survives. */
	@Override
	public synchronized void restart() {
		stop();
		launch();
	}

	@Override
	public void close() {
		stop();
		DatabaseProcesses.deleteRecursively(this.directory);
	}

	private List<String> asServerUser(String... command) {
		List<String> full = new ArrayList<>();
		if (ROOT) {
			full.addAll(List.of("runuser", "-u", "postgres", "--"));
		}
		full.addAll(List.of(command));
		return full;
	}

	private void launch() {
		List<String> command = asServerUser(this.binaries.resolve("postgres").toString(), "-D",
				this.directory.resolve("data").toString(), "-p", Integer.toString(this.port), "-k",
				this.directory.toString(), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c",
				"max_connections=300");
		this.process = DatabaseProcesses.startAndAwait(command, this.directory.resolve("postgres.log"), adminUrl(),
				started -> stop());
	}

	private String adminUrl() {
		return "jdbc:postgresql://127.0.0.1:" + this.port + "/postgres?user=postgres";
	}

	private void execute(String sql) {
		DatabaseProcesses.execute(adminUrl(), sql);
	}

	private static void run(List<String> command, Path directory) {
		DatabaseProcesses.runTool(command, directory.resolve("tool-" + System.nanoTime() + ".log"));
	}

}
