package io.distlock.zookeeper;

import java.time.Duration;
import java.util.Objects;

import org.apache.curator.framework.CuratorFramework;

import io.distlock.core.BackendLockRegistry;
import io.distlock.core.LockEngineOptions;
import io.distlock.core.RegistryBuilder;

/**
 * The {@link io.distlock.LockRegistry} on a ZooKeeper ensemble, through Apache Curator: locks held by
 * consensus, fencing tokens that are ZooKeeper's own zxids, and holds that end with their client's
 * session. Same API, reentrancy, watchdog, waiting and lost-hold reporting as the other registries;
 * see {@link ZooKeeperLockBackend} for what a lease means here.
 */
public class ZooKeeperLockRegistry extends BackendLockRegistry {

	/** The parent of all lock nodes when none is given. */
	public static final String DEFAULT_BASE_PATH = "/distlock";

	/**
	 * A registry on the application's own Curator client, which it never closes.
	 * @param client a started Curator client
	 * @param basePath the parent of all lock nodes, e.g. {@value #DEFAULT_BASE_PATH}
	 * @param options the engine's settings
	 */
	public ZooKeeperLockRegistry(CuratorFramework client, String basePath, LockEngineOptions options) {
		this(client, basePath, options, false);
	}

	private ZooKeeperLockRegistry(CuratorFramework client, String basePath, LockEngineOptions options, boolean owning) {
		super(new ZooKeeperLockBackend(client, basePath,
				Duration.ofMillis(client.getZookeeperClient().getConnectionTimeoutMs()), owning), options);
	}

	/**
	 * A registry that owns its Curator client and closes it on {@link #close()}, which ends the
	 * client's ZooKeeper session and so frees the locks it still holds at once.
	 * @param client a started Curator client
	 * @param basePath the parent of all lock nodes
	 * @param options the engine's settings
	 * @return the registry
	 */
	public static ZooKeeperLockRegistry owning(CuratorFramework client, String basePath, LockEngineOptions options) {
		return new ZooKeeperLockRegistry(client, basePath, options, true);
	}

	/**
	 * Starts a registry on the application's started Curator client, which it never closes:
	 * {@code ZooKeeperLockRegistry.builder(curator).basePath("/orders/locks").build()}.
	 * @param client a started Curator client
	 * @return a builder with the defaults
	 */
	public static Builder builder(CuratorFramework client) {
		return new Builder(Objects.requireNonNull(client, "client"));
	}

	/** Builds a {@link ZooKeeperLockRegistry}. */
	public static final class Builder extends RegistryBuilder<Builder, ZooKeeperLockRegistry> {

		private final CuratorFramework client;

		private String basePath = DEFAULT_BASE_PATH;

		private Builder(CuratorFramework client) {
			this.client = client;
		}

		/**
		 * @param basePath the parent of all lock nodes (default {@value #DEFAULT_BASE_PATH})
		 * @return this builder
		 */
		public Builder basePath(String basePath) {
			this.basePath = basePath;
			return this;
		}

		@Override
		public ZooKeeperLockRegistry build() {
			return new ZooKeeperLockRegistry(this.client, this.basePath, options());
		}

	}

}
