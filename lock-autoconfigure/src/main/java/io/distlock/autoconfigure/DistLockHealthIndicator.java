package io.distlock.autoconfigure;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.distlock.core.LockBackend;
import io.distlock.core.LockEngine;

/**
 * Whether the lock backend answers: a PING to the Redis server, or to each Redlock node with the
 * quorum state. Takes no lock, so it can never collide with a real one.
 */
class DistLockHealthIndicator extends AbstractHealthIndicator {

	private final LockEngine engine;

	DistLockHealthIndicator(LockEngine engine) {
		super("distlock backend health check failed");
		this.engine = engine;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		LockBackend.Health health = this.engine.backendHealth();
		(health.up() ? builder.up() : builder.down()).withDetails(health.details());
	}

}
