package io.distlock.redis;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.distlock.core.LockEngine;
import io.distlock.core.LockEngineOptions;

/**
 * The {@link io.distlock.LockRegistry} on one Redis deployment, over the application's Spring Data
 * Redis connection factory.
 *
 * <pre>{@code
 * RedisLockRegistry locks = new RedisLockRegistry(connectionFactory, "distlock", LockEngineOptions.defaults());
 * DistLock lock = locks.getLock("order:42");
 * lock.lock();
 * try { ... } finally { lock.unlock(); }
 * }</pre>
 */
public class RedisLockRegistry extends LockEngine {

	/** The key prefix used when none is given. */
	public static final String DEFAULT_KEY_PREFIX = "distlock";

	/**
	 * @param connectionFactory the Redis connection factory; not closed by the registry
	 */
	public RedisLockRegistry(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, DEFAULT_KEY_PREFIX, LockEngineOptions.defaults());
	}

	/**
	 * @param connectionFactory the Redis connection factory; not closed by the registry
	 * @param keyPrefix the namespace of all keys and channels
	 * @param options the engine's settings
	 */
	public RedisLockRegistry(RedisConnectionFactory connectionFactory, String keyPrefix, LockEngineOptions options) {
		super(new RedisLockBackend(connectionFactory, keyPrefix, options.restartGrace()), options);
	}

}
