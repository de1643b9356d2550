package io.distlock.redlock;

import java.time.Duration;
import java.util.Objects;

import io.distlock.LockSettings;

/**
 * Tuning of the Redlock algorithm.
 *
 * @param nodeTimeout how long one node may take to answer before it counts as failed; small
 * against the lease, so that a dead or paused node cannot eat the validity time
 * @param clockDriftFactor the share of the lease allowed for clock drift between the client and the
 * nodes; the drift allowance is {@code lease * factor + 2 ms}
 * @param retryDelay the least pause after a failed attempt, before trying again
 * @param retryJitter the most random time added to the pause, so that clients that split the nodes
 * between them do not retry in lockstep
 */
public record RedlockSettings(Duration nodeTimeout, double clockDriftFactor, Duration retryDelay, Duration retryJitter) {

	/** How long one node may take to answer by default. */
	public static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofMillis(100);

	/** The share of the lease allowed for clock drift by default (1%). */
	public static final double DEFAULT_CLOCK_DRIFT_FACTOR = 0.01;

	/** The least pause after a failed attempt by default. */
	public static final Duration DEFAULT_RETRY_DELAY = Duration.ofMillis(5);

	/** The most random time added to that pause by default. */
	public static final Duration DEFAULT_RETRY_JITTER = Duration.ofMillis(20);

	/** Defaults: 100 ms per node, 1% drift, 5 ms + up to 20 ms random back-off. */
	public static final RedlockSettings DEFAULTS = new RedlockSettings(DEFAULT_NODE_TIMEOUT, DEFAULT_CLOCK_DRIFT_FACTOR,
			DEFAULT_RETRY_DELAY, DEFAULT_RETRY_JITTER);

	/**
	 * Validates the settings.
	 */
	public RedlockSettings {
		LockSettings.nodeTimeout(nodeTimeout);
		LockSettings.clockDriftFactor(clockDriftFactor);
		LockSettings.retryPause("retryDelay", retryDelay);
		LockSettings.retryPause("retryJitter", retryJitter);
	}

	/** @return a builder starting from the defaults, naming each setting (two adjacent durations are easy to swap) */
	public static Builder builder() {
		return DEFAULTS.mutate();
	}

	/** @return a builder starting from these settings */
	public Builder mutate() {
		return new Builder(this);
	}

	/** Builds {@link RedlockSettings}, checked by {@link #build()}. */
	public static final class Builder {

		private Duration nodeTimeout;

		private double clockDriftFactor;

		private Duration retryDelay;

		private Duration retryJitter;

		private Builder(RedlockSettings from) {
			this.nodeTimeout = from.nodeTimeout;
			this.clockDriftFactor = from.clockDriftFactor;
			this.retryDelay = from.retryDelay;
			this.retryJitter = from.retryJitter;
		}

		/**
		 * @param nodeTimeout how long one node may take to answer before it counts as failed
		 * @return this builder
		 */
		public Builder nodeTimeout(Duration nodeTimeout) {
			this.nodeTimeout = nodeTimeout;
			return this;
		}

		/**
		 * @param clockDriftFactor the share of the lease allowed for clock drift, in [0, 0.5)
		 * @return this builder
		 */
		public Builder clockDriftFactor(double clockDriftFactor) {
			this.clockDriftFactor = clockDriftFactor;
			return this;
		}

		/**
		 * @param retryDelay the least pause after a failed attempt
		 * @return this builder
		 */
		public Builder retryDelay(Duration retryDelay) {
			this.retryDelay = retryDelay;
			return this;
		}

		/**
		 * @param retryJitter the most random time added to the pause
		 * @return this builder
		 */
		public Builder retryJitter(Duration retryJitter) {
			this.retryJitter = retryJitter;
			return this;
		}

		/** @return the settings */
		public RedlockSettings build() {
			return new RedlockSettings(this.nodeTimeout, this.clockDriftFactor, this.retryDelay, this.retryJitter);
		}

	}

}
