package io.distlock.testing;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import io.distlock.embedded.RedisClusterProcess;

/**
 * One real Redis Cluster of three masters per test class, on free ports, emptied before every test
 * and stopped after the class, as {@link RedisServerExtension} does for a single server:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisClusterExtension redisCluster = new RedisClusterExtension();
 * }</pre>
 */
public final class RedisClusterExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {

	private static final int MASTERS = 3;

	private RedisClusterProcess cluster;

	/** @return the running cluster */
	public RedisClusterProcess cluster() {
		if (this.cluster == null) {
			throw new IllegalStateException("RedisClusterExtension must be registered on a static field");
		}
		return this.cluster;
	}

	@Override
	public void beforeAll(ExtensionContext context) {
		this.cluster = RedisClusterProcess.start(MASTERS);
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		this.cluster.flushAll();
	}

	@Override
	public void afterAll(ExtensionContext context) {
		this.cluster.close();
	}

}
