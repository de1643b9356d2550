package io.distlock.autoconfigure;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryUntilElapsed;

import io.distlock.LockRegistry;
import io.distlock.autoconfigure.DistLockProperties.Backend;
import io.distlock.autoconfigure.DistLockSettings.RegistrySpec;
import io.distlock.core.LockEngineOptions;
import io.distlock.zookeeper.ZooKeeperLockRegistry;

/**
 * Builds a ZooKeeper registry, the default one and the named ones alike. Loaded only where Curator
 * is present.
 */
final class ZooKeeperRegistries {

	private ZooKeeperRegistries() {
	}

	/**
	 * @param spec the registry's settings
	 * @param own the application's client, started here if it was declared without
	 * {@code initMethod = "start"}; its own bean definition still closes it
	 * @param zookeeper the ZooKeeper settings: how exclusive locks are held
	 * @param options the engine's options
	 * @return the registry
	 */
	static ZooKeeperLockRegistry create(RegistrySpec spec, CuratorFramework own, DistLockProperties.Zookeeper zookeeper,
			LockEngineOptions options) {
		if (own.getState() == CuratorFrameworkState.LATENT) {
			own.start();
		}
		return new ZooKeeperLockRegistry(own, spec.basePath(), options, zookeeper.getExclusiveProtocol());
	}

	/**
	 * @param spec the registry's settings
	 * @param zookeeper where the ensemble is, the client's timeouts, and how exclusive locks are held
	 * @param options the engine's options
	 * @return a registry that owns, and closes, a client of its own
	 */
	static ZooKeeperLockRegistry owning(RegistrySpec spec, DistLockProperties.Zookeeper zookeeper,
			LockEngineOptions options) {
		if (zookeeper.getConnectString() == null || zookeeper.getConnectString().isBlank()) {
			throw new InvalidDistLockPropertyException("distlock.zookeeper.connect-string", zookeeper.getConnectString(),
					"must be set with distlock.backend=zookeeper when the application defines no (single) "
							+ "CuratorFramework bean",
					"Set distlock.zookeeper.connect-string to the ensemble, e.g. zk1:2181,zk2:2181,zk3:2181, or "
							+ "define a CuratorFramework bean.");
		}
		int connectionTimeout = (int) zookeeper.getConnectionTimeout().toMillis();
		CuratorFramework client = CuratorFrameworkFactory.builder()
			.connectString(zookeeper.getConnectString())
			.sessionTimeoutMs((int) zookeeper.getSessionTimeout().toMillis())
			.connectionTimeoutMs(connectionTimeout)
			// A lock call retries a lost connection only within the connection timeout, so an
			// unreachable ensemble fails acquisitions in about that time rather than in minutes.
			.retryPolicy(new RetryUntilElapsed(connectionTimeout, 100))
			.build();
		client.start();
		try {
			return ZooKeeperLockRegistry.owning(client, spec.basePath(), options, zookeeper.getExclusiveProtocol());
		}
		catch (RuntimeException ex) {
			client.close();
			throw ex;
		}
	}

	/** A registry named in properties, on the application's single CuratorFramework bean. */
	static LockRegistry named(RegistrySpec spec, DistLockProperties.Zookeeper zookeeper, LockEngineOptions options,
			BackendRequirements requirements) {
		CuratorFramework own = requirements.requireBean(spec.prefix() + ".backend", Backend.ZOOKEEPER,
				CuratorFramework.class, "a @Bean CuratorFramework connected to the ensemble");
		return create(spec, own, zookeeper, options);
	}

}
