package io.distlock.redlock;

import java.time.Duration;
import java.util.Objects;

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

	/** Defaults: 100 ms per node, 1% drift, 5 ms + up to 20 ms random back-off. */
	public static final RedlockSettings DEFAULTS = new RedlockSettings(Duration.ofMillis(100), 0.01, Duration.ofMillis(5),
			Duration.ofMillis(20));

	/**
	 * Validates the settings.
	 */
	public RedlockSettings {
		Objects.requireNonNull(nodeTimeout, "nodeTimeout");
		Objects.requireNonNull(retryDelay, "retryDelay");
		Objects.requireNonNull(retryJitter, "retryJitter");
		if (nodeTimeout.isNegative() || nodeTimeout.isZero()) {
			throw new IllegalArgumentException("Redlock node timeout must be positive but was " + nodeTimeout);
		}
		if (clockDriftFactor < 0 || clockDriftFactor >= 0.5) {
			throw new IllegalArgumentException("Redlock clock drift factor must be in [0, 0.5) but was " + clockDriftFactor);
		}
		if (retryDelay.isNegative() || retryJitter.isNegative()) {
			throw new IllegalArgumentException("Redlock retry delay and jitter must not be negative");
		}
	}

}
