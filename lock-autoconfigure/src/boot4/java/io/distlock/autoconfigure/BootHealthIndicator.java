package io.distlock.autoconfigure;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.distlock.LockRegistryStats.BackendHealth;

/**
 * A health indicator of Spring Boot 4's health support ({@code org.springframework.boot.health}),
 * reporting a {@link BackendHealth}: the shared indicator says what it found in lock-core's terms,
 * and only this class knows the package the generation keeps {@code Health} in.
 */
abstract class BootHealthIndicator extends AbstractHealthIndicator {

	BootHealthIndicator(String healthCheckFailedMessage) {
		super(healthCheckFailedMessage);
	}

	/**
	 * @return whether the lock backend answers, with the details to show
	 * @throws Exception if the check itself fails: reported down with the failure, and logged
	 */
	abstract BackendHealth backendHealth() throws Exception;

	@Override
	protected final void doHealthCheck(Health.Builder builder) throws Exception {
		BackendHealth health = backendHealth();
		(health.up() ? builder.up() : builder.down()).withDetails(health.details());
	}

}
