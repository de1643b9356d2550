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

	/**
	 * A registry on the application's own Curator client, which it never closes, holding exclusive
	 * locks by {@code protocol}.
	 * @param client a started Curator client
	 * @param basePath the parent of all lock nodes, e.g. {@value #DEFAULT_BASE_PATH}
	 * @param options the engine's settings
	 * @param protocol how exclusive locks are held, see {@link ExclusiveProtocol}
	 */
	public ZooKeeperLockRegistry(CuratorFramework client, String basePath, LockEngineOptions options,
			ExclusiveProtocol protocol) {
		this(client, basePath, options, false, Objects.requireNonNull(protocol, "protocol"));
	}

	private ZooKeeperLockRegistry(CuratorFramework client, String basePath, LockEngineOptions options, boolean owning) {
		this(client, basePath, options, owning, ExclusiveProtocol.LOCK_NODE);
	}

	private ZooKeeperLockRegistry(CuratorFramework client, String basePath, LockEngineOptions options, boolean owning,
			ExclusiveProtocol protocol) {
		super(new ZooKeeperLockBackend(client, basePath,
				Duration.ofMillis(client.getZookeeperClient().getConnectionTimeoutMs()), owning, protocol), options);
	}

	/**
	 * How an exclusive lock is held in ZooKeeper. Both keep today's reentrancy, leases, fencing tokens
	 * (the zxid that created the holder's node) and lost-hold reports. Instances of the two exclude
	 * each other by ZooKeeper's own rules, so a switch can roll through a running service: a line's
	 * parent is a node at the lock node's path, and an ephemeral node (a lock node) can have no
	 * children. While instances of both share a lock, those of {@link #LOCK_NODE} find it free only
	 * when nobody is in the line, so they may wait longer than the others. Instances of versions before
	 * {@link #LINE} existed also exclude those of {@link #LINE}, but wait for the ensemble to remove an
	 * empty line's parent (about a minute, or for good if the line was never joined): upgrade every
	 * instance before switching.
	 */
	public enum ExclusiveProtocol {

		/**
		 * The default, and what every earlier version uses: the holder is the lock's own node,
		 * {@code <basePath>/<encoded name>}; waiters queue beside it and the first of them creates it.
		 * A waiter that stops calling while the lock is free (a paused process) holds the others up
		 * for at most one place time.
		 */
		LOCK_NODE,

		/**
		 * The holder is the first node of the lock's line, under {@code <basePath>/<encoded name>}, as with
		 * Curator's {@code InterProcessMutex}: a hand-off costs one write less, so contended locks
		 * change hands faster. A waiter whose turn comes while its process is paused holds the others
		 * up until it resumes or its session expires, as a paused holder does.
		 */
		LINE

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
	 * As {@link #owning(CuratorFramework, String, LockEngineOptions)}, holding exclusive locks by
	 * {@code protocol}.
	 * @param client a started Curator client
	 * @param basePath the parent of all lock nodes
	 * @param options the engine's settings
	 * @param protocol how exclusive locks are held, see {@link ExclusiveProtocol}
	 * @return the registry
	 */
	public static ZooKeeperLockRegistry owning(CuratorFramework client, String basePath, LockEngineOptions options,
			ExclusiveProtocol protocol) {
		return new ZooKeeperLockRegistry(client, basePath, options, true, Objects.requireNonNull(protocol, "protocol"));
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

		private ExclusiveProtocol exclusiveProtocol = ExclusiveProtocol.LOCK_NODE;

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

		/**
		 * @param exclusiveProtocol how exclusive locks are held (default
		 * {@link ExclusiveProtocol#LOCK_NODE}); instances of both exclude each other
		 * @return this builder
		 */
		public Builder exclusiveProtocol(ExclusiveProtocol exclusiveProtocol) {
			this.exclusiveProtocol = Objects.requireNonNull(exclusiveProtocol, "exclusiveProtocol");
			return this;
		}

		@Override
		public ZooKeeperLockRegistry build() {
			return new ZooKeeperLockRegistry(this.client, this.basePath, options(), false, this.exclusiveProtocol);
		}

	}

}
