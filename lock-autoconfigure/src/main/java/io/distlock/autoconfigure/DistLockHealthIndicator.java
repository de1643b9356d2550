package io.distlock.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.distlock.LockRegistryStats;

/**
 * Whether the lock backend answers: a PING to the Redis server, or to each Redlock node with the
 * quorum state. Takes no lock, so it can never collide with a real one.
 */
class DistLockHealthIndicator extends AbstractHealthIndicator {

	private final LockRegistries registries;

	DistLockHealthIndicator(LockRegistries registries) {
		super("distlock backend health check failed");
		this.registries = registries;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		Map<String, LockRegistryStats> all = this.registries.all();
		if (all.size() == 1) {
			LockRegistryStats.BackendHealth health = all.values().iterator().next().backendHealth();
			(health.up() ? builder.up() : builder.down()).withDetails(health.details());
			return;
		}
		// With several registries every one is needed by some method: up only if all are.
		boolean up = true;
		for (Map.Entry<String, LockRegistryStats> registry : all.entrySet()) {
			LockRegistryStats.BackendHealth health = registry.getValue().backendHealth();
			up &= health.up();
			Map<String, Object> details = new LinkedHashMap<>(health.details());
			details.put("status", health.up() ? "UP" : "DOWN");
			builder.withDetail(registry.getKey(), details);
		}
		if (up) {
			builder.up();
		}
		else {
			builder.down();
		}
	}

}
