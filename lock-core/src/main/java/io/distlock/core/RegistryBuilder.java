package io.distlock.core;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

import io.distlock.LockListener;
import io.distlock.LockWatchdog;

/**
 * What every registry's builder sets: the engine's settings, shared so that
 * {@code RedisLockRegistry.builder(...)}, {@code JdbcLockRegistry.builder(...)} and the others read
 * alike. Users never name this type; they chain its methods on a registry's own builder, the
 * engine's settings through {@link #options(Consumer)}:
 * <pre>{@code
 * RedisLockRegistry.builder(connectionFactory)
 *     .keyPrefix("orders")
 *     .options(options -> options.watchdogTimeout(Duration.ofSeconds(10)).listener(lost -> alert(lost)))
 *     .build();
 * }</pre>
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
	 * Sets the engine's settings that every registry has (client id, watchdog, listeners, restart
	 * grace, clock) on their own builder, so that each is documented and checked in one place. May
	 * be called more than once: each call changes the settings made so far.
	 * @param settings sets what differs from the defaults of {@link LockEngineOptions#builder()}
	 * @return this builder
	 */
	public B options(Consumer<LockEngineOptions.Builder> settings) {
		Objects.requireNonNull(settings, "settings").accept(this.options);
		return self();
	}

	/**
	 * @param clientId this client's id in owner ids and diagnostics (random by default); no ':',
	 * whitespace or control characters
	 * @return this builder
	 * @deprecated set it in {@link #options(Consumer)}: {@code .options(options -> options.clientId(…))}
	 */
	@Deprecated
	public B clientId(String clientId) {
		this.options.clientId(clientId);
		return self();
	}

	/**
	 * @param watchdogTimeout the lease of locks taken without one, renewed every third of it
	 * (default 30 s, {@link LockEngineOptions#DEFAULT_WATCHDOG_TIMEOUT})
	 * @return this builder
	 * @deprecated set it in {@link #options(Consumer)}: {@code .options(options -> options.watchdogTimeout(…))}
	 */
	@Deprecated
	public B watchdogTimeout(Duration watchdogTimeout) {
		this.options.watchdogTimeout(watchdogTimeout);
		return self();
	}

	/**
	 * Turns the watchdog off: locks taken without a lease get this one and are never renewed.
	 * @param defaultLease the lease of such locks
	 * @return this builder
	 * @deprecated set it in {@link #options(Consumer)}: {@code .options(options -> options.withoutWatchdog(…))}
	 */
	@Deprecated
	public B withoutWatchdog(Duration defaultLease) {
		this.options.withoutWatchdog(defaultLease);
		return self();
	}

	/**
	 * @param watchdog the threads that renew leases, shared with the application's other registries
	 * and stopped by the application after them; by default the registry starts its own
	 * @return this builder
	 * @deprecated set it in {@link #options(Consumer)}: {@code .options(options -> options.watchdog(…))}
	 */
	@Deprecated
	public B watchdog(LockWatchdog watchdog) {
		this.options.watchdog(watchdog);
		return self();
	}

	/**
	 * @param listener told of lost holds and failed renewals; may be called more than once
	 * @return this builder
	 * @deprecated set it in {@link #options(Consumer)}: {@code .options(options -> options.listener(…))}
	 */
	@Deprecated
	public B listener(LockListener listener) {
		this.options.listener(listener);
		return self();
	}

	/**
	 * @param restartGrace how long a server that lost its data refuses new holders (default zero:
	 * not at all; Spring Boot's default is the watchdog timeout)
	 * @return this builder
	 * @deprecated set it in {@link #options(Consumer)}: {@code .options(options -> options.restartGrace(…))}
	 */
	@Deprecated
	public B restartGrace(Duration restartGrace) {
		this.options.restartGrace(restartGrace);
		return self();
	}

	/**
	 * @param clock the wall clock for the timestamps of lost-hold reports
	 * @return this builder
	 * @deprecated set it in {@link #options(Consumer)}: {@code .options(options -> options.clock(…))}
	 */
	@Deprecated
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
