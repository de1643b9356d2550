package io.distlock.redis;

import java.time.Duration;
import java.util.Objects;

/**
 * How many replicas must have a hold before its holder goes on. Replication is asynchronous: a
 * master that crashes right after a grant may leave a replica promoted without it, and a second
 * client can then take the lock while the first still runs. With acknowledgements, an acquisition
 * (and the take-up of a hold handed over) counts only once {@code WAIT} (or {@code WAITAOF}) says that
 * many replicas have it; otherwise the hold is given back and the acquisition fails.
 *
 * <pre>{@code
 * RedisLockRegistry.builder(connectionFactory).replicaAcks(RedisReplicaAcks.of(1, Duration.ofSeconds(1))).build();
 * }</pre>
 *
 * @param replicas how many replicas must acknowledge; 0: none, no {@code WAIT} is sent
 * @param timeout how long to wait for them at most; also bounded by the caller's own wait and by
 * half the lease
 * @param appendOnly whether a replica counts only once it has written the hold to its append-only
 * file ({@code WAITAOF 0 replicas timeout}, Redis 7.2+); otherwise once it has received it
 * ({@code WAIT})
 */
public record RedisReplicaAcks(int replicas, Duration timeout, boolean appendOnly) {

	/** No acknowledgement: acquisitions return as soon as the master has the hold (the default). */
	public static final RedisReplicaAcks NONE = new RedisReplicaAcks(0, Duration.ofSeconds(1), false);

	/**
	 * @throws IllegalArgumentException on a negative count or a timeout that is not positive
	 */
	public RedisReplicaAcks {
		Objects.requireNonNull(timeout, "timeout");
		if (replicas < 0) {
			throw new IllegalArgumentException("replicas must be 0 or more, not " + replicas);
		}
		if (timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("The replica acknowledgement timeout must be positive, not " + timeout);
		}
	}

	/**
	 * @param replicas how many replicas must have a hold before its holder goes on
	 * @param timeout how long to wait for them at most
	 * @return acknowledgement by {@code WAIT}
	 */
	public static RedisReplicaAcks of(int replicas, Duration timeout) {
		return new RedisReplicaAcks(replicas, timeout, false);
	}

	/** @return whether any acknowledgement is asked for */
	public boolean enabled() {
		return this.replicas > 0;
	}

}
