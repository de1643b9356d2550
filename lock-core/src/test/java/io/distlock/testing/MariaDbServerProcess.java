package io.distlock.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A private MariaDB server for tests: {@code mariadbd} on a free port with a temporary data
 * directory, reading no configuration files, started and stopped by the test. Needs MariaDB's server
 * binaries installed ({@code .ci/run} installs them).
 */
public final class MariaDbServerProcess extends DatabaseServerProcess {

	private final ZoneId systemTimeZone;

	private MariaDbServerProcess(ZoneId systemTimeZone) {
		super("distlock-mariadb-");
		this.systemTimeZone = systemTimeZone;
	}

	/** @return whether MariaDB's server binaries are installed here */
	public static boolean installed() {
		try {
			binary("mariadbd", "mysqld");
			binary("mariadb-install-db", "mysql_install_db");
			return true;
		}
		catch (IllegalStateException ex) {
			return false;
		}
	}

	/** @return a started server with an empty database {@code distlock} */
	public static MariaDbServerProcess start() {
		return start(null);
	}

	/**
	 * Starts a server whose operating-system time zone is {@code systemTimeZone}: the process gets it
	 * as {@code TZ}, so its {@code system_time_zone} follows it and sessions ({@code time_zone=SYSTEM})
	 * convert times through it, daylight saving time included, as a server set up in that zone would.
	 * @param systemTimeZone the server's time zone, or {@code null} for this machine's
	 * @return a started server with an empty database {@code distlock}
	 */
	public static MariaDbServerProcess start(ZoneId systemTimeZone) {
		MariaDbServerProcess server = new MariaDbServerProcess(systemTimeZone);
		server.startWithEmptyDatabase();
		return server;
	}

	/** @return a JDBC URL of the {@code distlock} database */
	@Override
	public String jdbcUrl() {
		return "jdbc:mariadb://127.0.0.1:" + this.port + "/distlock?user=root";
	}

	@Override
	protected void install() {
		List<String> command = new ArrayList<>(List.of(binary("mariadb-install-db", "mysql_install_db"), "--no-defaults",
				"--datadir=" + this.directory.resolve("data"), "--auth-root-authentication-method=normal",
				"--skip-test-db"));
		if (RUNS_AS_ROOT) {
			command.add("--user=root");
		}
		DatabaseProcesses.runTool(command, this.directory.resolve("install.log"));
	}

	@Override
	protected Process launch() {
		List<String> command = new ArrayList<>(List.of(binary("mariadbd", "mysqld"), "--no-defaults",
				"--datadir=" + this.directory.resolve("data"), "--port=" + this.port, "--bind-address=127.0.0.1",
				"--socket=" + this.directory.resolve("mysqld.sock"), "--pid-file=" + this.directory.resolve("mysqld.pid"),
				"--skip-grant-tables", "--skip-log-bin", "--innodb-buffer-pool-size=32M", "--max-connections=500"));
		if (RUNS_AS_ROOT) {
			command.add("--user=root");
		}
		Map<String, String> environment = (this.systemTimeZone != null) ? Map.of("TZ", this.systemTimeZone.getId())
				: Map.of();
		return DatabaseProcesses.startAndAwait(command, environment, this.directory.resolve("mariadbd.log"), adminUrl(),
				Process::destroyForcibly);
	}

	@Override
	protected String adminUrl() {
		return "jdbc:mariadb://127.0.0.1:" + this.port + "/?user=root";
	}

	private static String binary(String... names) {
		String path = System.getenv("PATH");
		List<String> directories = new ArrayList<>(List.of(((path != null) ? path : "").split(java.io.File.pathSeparator)));
		directories.addAll(List.of("/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin", "/usr/libexec"));
		for (String name : names) {
			for (String directory : directories) {
				Path candidate = Path.of(directory, name);
				if (!directory.isBlank() && Files.isExecutable(candidate)) {
					return candidate.toString();
				}
			}
		}
		throw new IllegalStateException("None of " + List.of(names) + " is installed; install MariaDB's server "
				+ "(apt-get install mariadb-server) to run the MariaDB lock tests");
	}

}
