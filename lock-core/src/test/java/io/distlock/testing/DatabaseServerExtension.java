package io.distlock.testing;

import java.time.ZoneId;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One real database server per test class, stopped after it; the class is reported as skipped, not
 * passed, where the server's binaries are missing ({@code .ci/run} installs them):
 *
 * <pre>{@code
 * @RegisterExtension
 * static final DatabaseServerExtension database = DatabaseServerExtension.mariaDb();
 * }</pre>
 */
public final class DatabaseServerExtension implements BeforeAllCallback, AfterAllCallback {

	private final BooleanSupplier installed;

	private final String missing;

	private final Supplier<? extends DatabaseServer> start;

	private DatabaseServer server;

	private DatabaseServerExtension(BooleanSupplier installed, String missing, Supplier<? extends DatabaseServer> start) {
		this.installed = installed;
		this.missing = missing;
		this.start = start;
	}

	/** @return a MariaDB server per class */
	public static DatabaseServerExtension mariaDb() {
		return mariaDb(null);
	}

	/**
	 * @param systemTimeZone the server's operating-system time zone, as
	 * {@link MariaDbServerProcess#start(ZoneId)} takes it, or {@code null} for this machine's
	 * @return a MariaDB server per class
	 */
	public static DatabaseServerExtension mariaDb(ZoneId systemTimeZone) {
		return new DatabaseServerExtension(MariaDbServerProcess::installed,
				"MariaDB's server binaries are not installed (apt-get install mariadb-server)",
				() -> MariaDbServerProcess.start(systemTimeZone));
	}

	/** @return a PostgreSQL server per class */
	public static DatabaseServerExtension postgres() {
		return new DatabaseServerExtension(() -> PostgresServerProcess.binaries() != null,
				"PostgreSQL's server binaries are not installed (apt-get install postgresql)", PostgresServerProcess::start);
	}

	/** @return the running server */
	public DatabaseServer server() {
		if (this.server == null) {
			throw new IllegalStateException("DatabaseServerExtension must be registered on a static field");
		}
		return this.server;
	}

	@Override
	public void beforeAll(ExtensionContext context) {
		Assumptions.assumeTrue(this.installed.getAsBoolean(), this.missing);
		this.server = this.start.get();
	}

	@Override
	public void afterAll(ExtensionContext context) {
		if (this.server != null) {
			this.server.close();
		}
	}

}
