package io.distlock.redis;

import java.time.Duration;

import io.distlock.LockSettings;

/**
 * How many replicas must have an acquisition before it counts, and how long to wait for them: with
 * replicas greater than zero, every acquisition on a master is followed by {@code WAIT}, so a
 * failover to one of those replicas cannot lose the hold. An acquisition that fewer replicas
 * acknowledge in time is given back and fails with {@link io.distlock.LockBackendException}.
 *
 * @param replicas how many replicas must acknowledge each acquisition; 0 for none (asynchronous
 * replication, as Redis does by default)
 * @param timeout how long to wait for them
 */
public record ReplicaAcks(int replicas, Duration timeout) {

	/** No acknowledgement: the hold counts as soon as the master has it. */
	public static final ReplicaAcks NONE = new ReplicaAcks(0, Duration.ofSeconds(1));

	/**
	 * @throws io.distlock.InvalidLockSettingException if {@code replicas} is negative, or the timeout is
	 * not positive
	 */
	public ReplicaAcks {
		LockSettings.replicaAcks(replicas);
		LockSettings.replicaAckTimeout(timeout);
	}

	/** @return whether acquisitions wait for replicas */
	public boolean required() {
		return this.replicas > 0;
	}

}
