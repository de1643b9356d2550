package io.distlock.zookeeper;

import java.time.Duration;

import org.apache.curator.framework.CuratorFramework;

import io.distlock.core.LockEngine;
import io.distlock.core.LockEngineOptions;

/**
 * The {@link io.distlock.LockRegistry} on a ZooKeeper ensemble, through Apache Curator: locks held by
 * consensus, fencing tokens that are ZooKeeper's own zxids, and holds that end with their client's
 * session. Same API, reentrancy, watchdog, waiting and lost-hold reporting as the other registries;
 * see {@link ZooKeeperLockBackend} for what a lease means here.
 */
public class ZooKeeperLockRegistry extends LockEngine {

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

}
