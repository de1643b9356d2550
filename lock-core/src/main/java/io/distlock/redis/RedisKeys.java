package io.distlock.redis;

import java.util.List;

import io.distlock.LockSettings;

/**
 * Names the Redis keys and channels of a lock. Every key one script touches lives in the lock's
 * Redis Cluster slot: the lock hash carries the lock name as its hash tag ({@code {name}}), and on a
 * cluster the fencing counter is the one kept for that slot.
 *
 * @param prefix the namespace of all keys, e.g. {@code distlock}
 * @param cluster whether keys must be slot-aligned (Redis Cluster)
 */
record RedisKeys(String prefix, boolean cluster) {

	private static final String LAST_SAVE_SEEN = ":lastsave";

	private static final String REPLICATION_ID_SEEN = ":replid";


	RedisKeys {
		LockSettings.keyPrefix(prefix);
	}

	/** The hash holding owner -> hold count and the fencing token. */
	String lock(String name) {
		return this.prefix + ":{" + name + "}";
	}

	/** The list of owners queued for the lock, in arrival order. */
	String queue(String name) {
		return queueBase(name, lock(name)) + ":queue";
	}

	/** The queued owners' entries: owner -> {@code <deadline ms>:<lease ms>:<ticket>}. */
	String queueEntries(String name) {
		return queueBase(name, lock(name)) + ":queued";
	}

	/**
	 * The keys of {@code acquire.lua} in its KEYS order (lock, fencing counter, queue, queue entries,
	 * the server's last save seen, the replication id seen), building the lock key once: this runs on
	 * every acquisition.
	 */
	List<String> scriptKeys(String name) {
		String lock = lock(name);
		String queueBase = queueBase(name, lock);
		String counter = fencingCounter(name);
		return List.of(lock, counter, queueBase + ":queue", queueBase + ":queued", counter + LAST_SAVE_SEEN,
				counter + REPLICATION_ID_SEEN);
	}

	/**
	 * Where {@code acquire.lua} keeps the server's LASTSAVE from its last check for a restart: beside
	 * the fencing counter, shared as it is (one for the key space, or one per slot on a cluster).
	 */
	String lastSaveSeen(String name) {
		return fencingCounter(name) + LAST_SAVE_SEEN;
	}

	/**
	 * Where {@code acquire.lua} keeps the server's replication id from its last check for a promotion:
	 * beside the fencing counter, shared as it is. Written through a master, it reaches its replicas,
	 * which is how a promoted replica is recognised (see {@code grace.lua}'s {@code promotedGraceUntil}).
	 */
	String replicationIdSeen(String name) {
		return fencingCounter(name) + REPLICATION_ID_SEEN;
	}

	/**
	 * The keys of {@code release.lua}: the first four of {@link #scriptKeys(String)} and the owner's
	 * release marker, which lets a release re-sent after a reconnect recognise that it was applied already.
	 */
	List<String> releaseKeys(String name, String owner) {
		String lock = lock(name);
		String queueBase = queueBase(name, lock);
		return List.of(lock, fencingCounter(name), queueBase + ":queue", queueBase + ":queued",
				queueBase + ":released:" + owner);
	}

	/** The keys of {@code token.lua}: the lock hash and its fencing counter. */
	List<String> tokenKeys(String name) {
		return List.of(lock(name), fencingCounter(name));
	}

	/**
	 * The lock key, which the queue keys extend. A name starting with '}' gives the lock key an
	 * empty hash tag, so Redis Cluster hashes it whole; there the queue keys carry a tag of the
	 * lock key's slot instead, as one script must touch keys of one slot only. Those keys start with
	 * {@code <prefix>:q{}, which no lock key does: as {@code <prefix>:{<tag>}:<name>} they were the
	 * lock key of the name {@code <tag>}:<name>} (lock {@code "}"} shared its queue with lock
	 * {@code "btt}:"}).
	 */
	private String queueBase(String name, String lock) {
		if (this.cluster && name.startsWith("}")) {
			return this.prefix + ":q{" + ClusterSlotTags.tagFor(ClusterSlotTags.slot(lock)) + "}:" + name;
		}
		return lock;
	}

	/** The channel on which a release of the lock is published. */
	String releaseChannel(String name) {
		return this.prefix + ":{" + name + "}:released";
	}

	/**
	 * The counter the lock's fencing tokens are drawn from: one for the key space, or on a cluster one
	 * per slot (a lock name always maps to the same slot, so its tokens still only grow). Memory stays
	 * constant either way.
	 */
	String fencingCounter(String name) {
		if (!this.cluster) {
			return this.prefix + ":fencing";
		}
		return this.prefix + ":fencing:{" + ClusterSlotTags.tagFor(slot(name)) + "}";
	}

	/** The cluster slot of the lock's keys. */
	int slot(String name) {
		return ClusterSlotTags.slot(lock(name));
	}

	/**
	 * The start of every client's hand-off channel: release.lua publishes a hand-off on the channel
	 * of the client whose owner it is for, this followed by the client id.
	 */
	String grantChannelPrefix() {
		return this.prefix + ":grants:";
	}

	/** A channel that keeps the subscription connection subscribed while no lock has waiters. */
	String anchorChannel() {
		return this.prefix + ":anchor";
	}

}
