package io.distlock.testing;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import io.distlock.embedded.RedisServerProcess;

/**
 * One real {@code redis-server} per test class, on a free port, emptied before every test and
 * stopped after the class:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisServerExtension redis = new RedisServerExtension();
 * }</pre>
 */
public final class RedisServerExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {

	private RedisServerProcess server;

	/** @return the running server */
	public RedisServerProcess server() {
		if (this.server == null) {
			throw new IllegalStateException("RedisServerExtension must be registered on a static field");
		}
		return this.server;
	}

	@Override
	public void beforeAll(ExtensionContext context) {
		this.server = RedisServerProcess.start();
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		if (!this.server.isRunning()) {
			// A test that killed the server and failed before restarting it must not break the next.
			this.server.restart();
		}
		this.server.command("FLUSHALL");
	}

	@Override
	public void afterAll(ExtensionContext context) {
		this.server.close();
	}

}
