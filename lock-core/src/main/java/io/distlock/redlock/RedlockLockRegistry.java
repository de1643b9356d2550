package io.distlock.redlock;

import java.util.List;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.distlock.core.LockEngine;
import io.distlock.core.LockEngineOptions;
import io.distlock.redis.RedisLockBackend;

/**
 * The {@link io.distlock.LockRegistry} over several independent Redis masters (Redlock), for a lock
 * that outlives the loss of a minority of them. Same API, reentrancy, watchdog and waiting as the
 * single-node registry; no fencing tokens (see {@link RedlockBackend}).
 */
public class RedlockLockRegistry extends LockEngine {

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
				nodes.stream().map(node -> new RedisLockBackend(node, keyPrefix, options.restartGrace())).toList(), settings),
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

}
