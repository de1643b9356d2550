package io.distlock.autoconfigure;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.distlock.LockRegistryStats;

/**
 * Whether the lock backend answers: a PING to the Redis server, or to each Redlock node with the
 * quorum state. Takes no lock, so it can never collide with a real one.
 */
class DistLockHealthIndicator extends AbstractHealthIndicator {

	private final LockRegistryStats stats;

	DistLockHealthIndicator(LockRegistryStats stats) {
		super("distlock backend health check failed");
		this.stats = stats;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		LockRegistryStats.BackendHealth health = this.stats.backendHealth();
		(health.up() ? builder.up() : builder.down()).withDetails(health.details());
	}

}
