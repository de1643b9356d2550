package io.distlock.redis;

import java.util.Objects;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.distlock.core.BackendLockRegistry;
import io.distlock.core.LockEngineOptions;
import io.distlock.core.RegistryBuilder;

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
public class RedisLockRegistry extends BackendLockRegistry {

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
		this(connectionFactory, keyPrefix, options, RedisReplicaAcks.NONE);
	}

	/**
	 * @param connectionFactory the Redis connection factory; not closed by the registry
	 * @param keyPrefix the namespace of all keys and channels
	 * @param options the engine's settings
	 * @param replicaAcks how many replicas must have a hold before its holder goes on
	 */
	public RedisLockRegistry(RedisConnectionFactory connectionFactory, String keyPrefix, LockEngineOptions options,
			RedisReplicaAcks replicaAcks) {
		super(new RedisLockBackend(connectionFactory, keyPrefix, options.restartGrace(), replicaAcks), options);
	}

	/**
	 * Starts a registry on a Redis connection factory (a single server, Sentinel or a Cluster):
	 * {@code RedisLockRegistry.builder(connectionFactory).keyPrefix("orders").build()}.
	 * @param connectionFactory the Redis connection factory; not closed by the registry
	 * @return a builder with the defaults
	 */
	public static Builder builder(RedisConnectionFactory connectionFactory) {
		return new Builder(Objects.requireNonNull(connectionFactory, "connectionFactory"));
	}

	/** Builds a {@link RedisLockRegistry}. */
	public static final class Builder extends RegistryBuilder<Builder, RedisLockRegistry> {

		private final RedisConnectionFactory connectionFactory;

		private String keyPrefix = DEFAULT_KEY_PREFIX;

		private RedisReplicaAcks replicaAcks = RedisReplicaAcks.NONE;

		private Builder(RedisConnectionFactory connectionFactory) {
			this.connectionFactory = connectionFactory;
		}

		/**
		 * @param keyPrefix the namespace of all keys and channels (default {@value #DEFAULT_KEY_PREFIX})
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
			return this;
		}

		/**
		 * @param replicaAcks how many replicas must have a hold before its holder goes on (default
		 * {@link RedisReplicaAcks#NONE})
		 * @return this builder
		 */
		public Builder replicaAcks(RedisReplicaAcks replicaAcks) {
			this.replicaAcks = Objects.requireNonNull(replicaAcks, "replicaAcks");
			return this;
		}

		@Override
		public RedisLockRegistry build() {
			return new RedisLockRegistry(this.connectionFactory, this.keyPrefix, options(), this.replicaAcks);
		}

	}

}
