package io.distlock.core;

import java.time.Clock;
import java.time.Duration;

import io.distlock.LockListener;
import io.distlock.LockWatchdog;

/**
 * What every registry's builder sets: the engine's settings, shared so that
 * {@code RedisLockRegistry.builder(...)}, {@code JdbcLockRegistry.builder(...)} and the others read
 * alike. Users never name this type; they chain its methods on a registry's own builder.
 *
 * @param <B> the concrete builder, returned by every setter
 * @param <R> the registry it builds
 */
public abstract class RegistryBuilder<B extends RegistryBuilder<B, R>, R> {

	private final LockEngineOptions.Builder options = LockEngineOptions.builder();

	/** For the registries' own builders. */
	protected RegistryBuilder() {
	}

	/**
	 * @param clientId this client's id in owner ids and diagnostics (random by default); no ':',
	 * whitespace or control characters
	 * @return this builder
	 */
	public B clientId(String clientId) {
		this.options.clientId(clientId);
		return self();
	}

	/**
	 * @param watchdogTimeout the lease of locks taken without one, renewed every third of it
	 * (default 30 s, {@link LockEngineOptions#DEFAULT_WATCHDOG_TIMEOUT})
	 * @return this builder
	 */
	public B watchdogTimeout(Duration watchdogTimeout) {
		this.options.watchdogTimeout(watchdogTimeout);
		return self();
	}

	/**
	 * Turns the watchdog off: locks taken without a lease get this one and are never renewed.
	 * @param defaultLease the lease of such locks
	 * @return this builder
	 */
	public B withoutWatchdog(Duration defaultLease) {
		this.options.withoutWatchdog(defaultLease);
		return self();
	}

	/**
	 * @param watchdog the threads that renew leases, shared with the application's other registries
	 * and stopped by the application after them; by default the registry starts its own
	 * @return this builder
	 */
	public B watchdog(LockWatchdog watchdog) {
		this.options.watchdog(watchdog);
		return self();
	}

	/**
	 * @param listener told of lost holds and failed renewals; may be called more than once
	 * @return this builder
	 */
	public B listener(LockListener listener) {
		this.options.listener(listener);
		return self();
	}

	/**
	 * @param restartGrace how long a server that lost its data refuses new holders (default zero:
	 * not at all; Spring Boot's default is the watchdog timeout)
	 * @return this builder
	 */
	public B restartGrace(Duration restartGrace) {
		this.options.restartGrace(restartGrace);
		return self();
	}

	/**
	 * @param clock the wall clock for the timestamps of lost-hold reports
	 * @return this builder
	 */
	public B clock(Clock clock) {
		this.options.clock(clock);
		return self();
	}

	/** @return the registry; its settings are checked here */
	public abstract R build();

	/** @return the engine's settings as set so far, checked */
	protected LockEngineOptions options() {
		return this.options.build();
	}

	@SuppressWarnings("unchecked")
	private B self() {
		return (B) this;
	}

}
