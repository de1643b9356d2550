package io.distlock.redlock;

import java.util.List;
import java.util.Objects;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.distlock.core.BackendLockRegistry;
import io.distlock.core.LockEngineOptions;
import io.distlock.core.RegistryBuilder;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.redis.RedisNode;

/**
 * The {@link io.distlock.LockRegistry} over several independent Redis masters (Redlock), for a lock
 * that outlives the loss of a minority of them. Same API, reentrancy, watchdog and waiting as the
 * single-node registry; no fencing tokens (see {@link RedlockBackend}).
 */
public class RedlockLockRegistry extends BackendLockRegistry {

	private final List<? extends RedisConnectionFactory> ownedFactories;

	/**
	 * @param nodes one connection factory per independent master (not closed by the registry)
	 * @param keyPrefix the namespace of all keys and channels
	 * @param settings the algorithm's tuning
	 * @param options the engine's settings
	 */
	public RedlockLockRegistry(List<? extends RedisConnectionFactory> nodes, String keyPrefix, RedlockSettings settings,
			LockEngineOptions options) {
		this(nodes, keyPrefix, settings, options, List.of());
	}

	private RedlockLockRegistry(List<? extends RedisConnectionFactory> nodes, String keyPrefix, RedlockSettings settings,
			LockEngineOptions options, List<? extends RedisConnectionFactory> owned) {
		super(new RedlockBackend(
				nodes.stream().map(node -> new RedisNode(node, keyPrefix, options.restartGrace())).toList(), settings),
				options);
		this.ownedFactories = owned;
	}

	/**
	 * A registry that owns its node connection factories and destroys them on {@link #close()}.
	 * @param nodes the started connection factories
	 * @param keyPrefix the namespace of all keys and channels
	 * @param settings the algorithm's tuning
	 * @param options the engine's settings
	 * @return the registry
	 */
	public static RedlockLockRegistry owning(List<? extends RedisConnectionFactory> nodes, String keyPrefix,
			RedlockSettings settings, LockEngineOptions options) {
		return new RedlockLockRegistry(nodes, keyPrefix, settings, options, nodes);
	}

	@Override
	public void close() {
		super.close();
		for (RedisConnectionFactory factory : this.ownedFactories) {
			if (factory instanceof DisposableBean disposable) {
				try {
					disposable.destroy();
				}
				catch (Exception ex) {
					throw new IllegalStateException("Could not close a Redlock node connection", ex);
				}
			}
		}
	}

	/**
	 * Starts a registry over independent masters, one connection factory each (not closed by the
	 * registry): {@code RedlockLockRegistry.builder(nodes).settings(RedlockSettings.builder()
	 * .nodeTimeout(Duration.ofMillis(50)).build()).build()}.
	 * @param nodes at least three connection factories, one per master
	 * @return a builder with the defaults
	 */
	public static Builder builder(List<? extends RedisConnectionFactory> nodes) {
		return new Builder(List.copyOf(nodes));
	}

	/** Builds a {@link RedlockLockRegistry}. */
	public static final class Builder extends RegistryBuilder<Builder, RedlockLockRegistry> {

		private final List<? extends RedisConnectionFactory> nodes;

		private String keyPrefix = RedisLockRegistry.DEFAULT_KEY_PREFIX;

		private RedlockSettings settings = RedlockSettings.DEFAULTS;

		private Builder(List<? extends RedisConnectionFactory> nodes) {
			this.nodes = nodes;
		}

		/**
		 * @param keyPrefix the namespace of all keys and channels on every node (default
		 * {@value RedisLockRegistry#DEFAULT_KEY_PREFIX})
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
			return this;
		}

		/**
		 * @param settings the algorithm's tuning (default {@link RedlockSettings#DEFAULTS})
		 * @return this builder
		 */
		public Builder settings(RedlockSettings settings) {
			this.settings = Objects.requireNonNull(settings, "settings");
			return this;
		}

		@Override
		public RedlockLockRegistry build() {
			return new RedlockLockRegistry(this.nodes, this.keyPrefix, this.settings, options());
		}

	}

}
