package io.distlock.autoconfigure;

import static io.distlock.autoconfigure.BackendRequirements.REDIS_BEAN_ADVICE;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.distlock.LockRegistry;
import io.distlock.autoconfigure.DistLockProperties.Backend;
import io.distlock.autoconfigure.DistLockSettings.RegistrySpec;
import io.distlock.core.LockEngineOptions;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.redis.RedisReplicaAcks;

/**
 * Builds a registry on the application's own Redis, the default one and the named ones alike.
 * Loaded only where Spring Data Redis is present.
 */
final class RedisRegistries {

	private RedisRegistries() {
	}

	/**
	 * @param spec the registry's settings
	 * @param connectionFactory the application's connection factory
	 * @param options the engine's options
	 * @param replicaAcks how many replicas must have a hold
	 * @return the registry
	 */
	static RedisLockRegistry create(RegistrySpec spec, RedisConnectionFactory connectionFactory,
			LockEngineOptions options, RedisReplicaAcks replicaAcks) {
		return new RedisLockRegistry(connectionFactory, spec.keyPrefix(), options, replicaAcks);
	}

	/** A registry named in properties, on the application's single connection factory. */
	static LockRegistry named(RegistrySpec spec, LockEngineOptions options, RedisReplicaAcks replicaAcks,
			BackendRequirements requirements) {
		RedisConnectionFactory connectionFactory = requirements.requireBean(spec.prefix() + ".backend", Backend.REDIS,
				RedisConnectionFactory.class, REDIS_BEAN_ADVICE);
		return create(spec, connectionFactory, options, replicaAcks);
	}

}
