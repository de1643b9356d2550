package io.distlock.core;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;

import io.distlock.LockListener;
import io.distlock.LockSettings;
import io.distlock.LockWatchdog;

/**
 * Immutable settings of a lock registry's engine ({@link BackendLockRegistry}).
 *
 * @param clientId this client's id, the first half of every owner id; unique per client; no ':', whitespace
 * or control characters
 * @param watchdogTimeout the lease of locks taken without one, renewed every third of it
 * @param listeners told about lost holds
 * @param clock the wall clock for the timestamps in events and snapshots
 * @param restartGrace how long a lock server that lost its data (a restart without persistence,
 * {@code FLUSHALL}, a failover to a replica that missed writes) refuses new holders, so that the
 * holders it forgot can learn of their loss first; {@link Duration#ZERO}: not at all. Backends that
 * can tell a loss (Redis, Redlock's nodes) honour it.
 * @param defaultLease the lease of locks taken without one when the watchdog is off; {@code null}:
 * the watchdog keeps such locks
 * @param watchdog the threads that renew leases, shared with the application's other registries;
 * {@code null}: the engine starts its own and stops them on close
 */
public record LockEngineOptions(String clientId, Duration watchdogTimeout, List<LockListener> listeners, Clock clock,
		Duration restartGrace, Duration defaultLease, LockWatchdog watchdog) {

	/** The watchdog lease when none is configured, as in Redisson. */
	public static final Duration DEFAULT_WATCHDOG_TIMEOUT = Duration.ofSeconds(30);

	/**
	 * Validates and copies the settings.
	 */
	public LockEngineOptions {
		Objects.requireNonNull(clientId, "clientId");
		// Owner ids are clientId:threadId, and hand-off messages ("grant <token> <owner> <ticket>") are split on spaces.
		int bad = firstNotAllowed(clientId);
		if (clientId.isEmpty() || bad >= 0) {
			throw new IllegalArgumentException("clientId must be non-empty and contain no ':', whitespace or control "
					+ "characters (it is the first part of every owner id 'clientId:threadId') but was '" + clientId + "'"
					+ ((bad >= 0) ? String.format(" (U+%04X at index %d)", (int) clientId.charAt(bad), bad) : ""));
		}
		LockSettings.watchdogTimeout(watchdogTimeout);
		listeners = List.copyOf(listeners);
		Objects.requireNonNull(clock, "clock");
		LockSettings.restartGrace(restartGrace);
		if (defaultLease != null) {
			LockSettings.defaultLease(defaultLease);
		}
	}

	/** @return whether the watchdog keeps locks taken without a lease */
	public boolean watchdogEnabled() {
		return this.defaultLease == null;
	}

	/**
	 * 128 random bits in 22 characters (URL-safe Base64): the client id is sent in every lock call,
	 * twice in a release, and a UUID's 36 characters were a tenth of an uncontended pair's request bytes.
	 */
	static String randomClientId() {
		byte[] bits = new byte[16];
		new SecureRandom().nextBytes(bits);
		return Base64.getUrlEncoder().withoutPadding().encodeToString(bits);
	}

	private static int firstNotAllowed(String clientId) {
		for (int i = 0; i < clientId.length(); i++) {
			char c = clientId.charAt(i);
			if (c == ':' || Character.isWhitespace(c) || Character.isSpaceChar(c) || Character.isISOControl(c)) {
				return i;
			}
		}
		return -1;
	}

	/** @return a builder with a random client id and the defaults */
	public static Builder builder() {
		return new Builder();
	}

	/** @return the defaults, with a random client id */
	public static LockEngineOptions defaults() {
		return builder().build();
	}

	/** Builds {@link LockEngineOptions}. */
	public static final class Builder {

		private String clientId = randomClientId();

		private Duration watchdogTimeout = DEFAULT_WATCHDOG_TIMEOUT;

		private final List<LockListener> listeners = new ArrayList<>();

		private Clock clock = Clock.systemUTC();

		private Duration restartGrace = Duration.ZERO;

		private Duration defaultLease;

		private LockWatchdog watchdog;

		private Builder() {
		}

		/**
		 * @param clientId this client's id in owner ids and diagnostics (random by default); no ':',
		 * whitespace or control characters
		 * @return this builder
		 */
		public Builder clientId(String clientId) {
			this.clientId = clientId;
			return this;
		}

		/**
		 * @param watchdogTimeout the lease of locks taken without one, renewed every third of it
		 * (default 30 s, {@link #DEFAULT_WATCHDOG_TIMEOUT})
		 * @return this builder
		 */
		public Builder watchdogTimeout(Duration watchdogTimeout) {
			this.watchdogTimeout = watchdogTimeout;
			return this;
		}

		/**
		 * @param listener told of lost holds and failed renewals; may be called more than once, each
		 * listener added to the others
		 * @return this builder
		 */
		public Builder listener(LockListener listener) {
			this.listeners.add(Objects.requireNonNull(listener, "listener"));
			return this;
		}

		/**
		 * @param clock the wall clock for event timestamps, such as those of lost-hold reports
		 * @return this builder
		 */
		public Builder clock(Clock clock) {
			this.clock = clock;
			return this;
		}

		/**
		 * @param restartGrace how long a server that lost its data refuses new holders; zero (the
		 * default here; Spring Boot's default is the watchdog timeout): not at all
		 * @return this builder
		 */
		public Builder restartGrace(Duration restartGrace) {
			this.restartGrace = restartGrace;
			return this;
		}

		/**
		 * Turns the watchdog off: locks taken without a lease get this one and are never renewed.
		 * @param defaultLease the lease; {@code null} (the default): the watchdog keeps such locks
		 * @return this builder
		 */
		public Builder withoutWatchdog(Duration defaultLease) {
			this.defaultLease = defaultLease;
			return this;
		}

		/**
		 * @param watchdog the threads that renew leases, shared with other registries, which the
		 * engine never stops (the application stops them after its registries); {@code null} (the
		 * default): threads of the engine's own
		 * @return this builder
		 */
		public Builder watchdog(LockWatchdog watchdog) {
			this.watchdog = watchdog;
			return this;
		}

		/** @return the options */
		public LockEngineOptions build() {
			return new LockEngineOptions(this.clientId, this.watchdogTimeout, this.listeners, this.clock,
					this.restartGrace, this.defaultLease, this.watchdog);
		}

	}

}
