package io.distlock.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A private PostgreSQL server for tests: {@code initdb} into a temporary directory and
 * {@code postgres} on a free port, started and stopped by the test. PostgreSQL refuses to run as
 * root, so as root both run as the {@code postgres} user.
 */
public final class PostgresServerProcess extends DatabaseServerProcess {

	private final Path binaries;

	private PostgresServerProcess(Path binaries) {
		super("distlock-postgres-");
		this.binaries = binaries;
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
		PostgresServerProcess server = new PostgresServerProcess(binaries);
		server.startWithEmptyDatabase();
		return server;
	}

	/** @return a JDBC URL of the {@code distlock} database */
	@Override
	public String jdbcUrl() {
		return "jdbc:postgresql://127.0.0.1:" + this.port + "/distlock?user=postgres";
	}

	@Override
	protected void install() {
		if (RUNS_AS_ROOT) {
			run(List.of("chown", "-R", "postgres", this.directory.toString()));
		}
		run(asServerUser(this.binaries.resolve("initdb").toString(), "-D", this.directory.resolve("data").toString(),
				"-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"));
	}

	@Override
	protected Process launch() {
		List<String> command = asServerUser(this.binaries.resolve("postgres").toString(), "-D",
				this.directory.resolve("data").toString(), "-p", Integer.toString(this.port), "-k",
				this.directory.toString(), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c",
				"max_connections=300");
		return DatabaseProcesses.startAndAwait(command, this.directory.resolve("postgres.log"), adminUrl(),
				started -> stop());
	}

	/** A fast shutdown through the postmaster's pid: as root, the process started is {@code runuser}. */
	@Override
	protected void shutDown(Process process) {
		try {
			List<String> pidFile = Files.readAllLines(this.directory.resolve("data/postmaster.pid"));
			run(List.of("kill", "-INT", pidFile.get(0).trim()));
		}
		catch (IOException | RuntimeException ex) {
			process.destroy();
		}
	}

	@Override
	protected String adminUrl() {
		return "jdbc:postgresql://127.0.0.1:" + this.port + "/postgres?user=postgres";
	}

	private List<String> asServerUser(String... command) {
		List<String> full = new ArrayList<>();
		if (RUNS_AS_ROOT) {
			full.addAll(List.of("runuser", "-u", "postgres", "--"));
		}
		full.addAll(List.of(command));
		return full;
	}

	private void run(List<String> command) {
		DatabaseProcesses.runTool(command, this.directory.resolve("tool-" + System.nanoTime() + ".log"));
	}

}
