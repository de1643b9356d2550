package io.distlock.redis;

import java.util.List;

import io.distlock.HoldKind;
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

	/** The channel on which a release of the lock is published with classic pub/sub. */
	String releaseChannel(String name) {
		return this.prefix + ":{" + name + "}:released";
	}

	/**
	 * The lock's channel with sharded pub/sub (see {@code announce.lua}): in the lock's slot, as
	 * SPUBLISH from a script must be, and as a subscriber must know to SSUBSCRIBE on the node that
	 * owns that slot. The classic channel, except for a name starting with '}', whose classic channel
	 * (an empty hash tag, hashed whole) is in another slot: that one's is its queue keys' base's.
	 */
	String shardChannel(String name) {
		return queueBase(name, lock(name)) + ":released";
	}

	/**
	 * A client's hand-off channel for one lock with sharded pub/sub: in the lock's slot too (the
	 * shard channel's hash tag comes first), so a hand-off reaches only the shard that owns the lock,
	 * and only the client it is for.
	 * @param shardChannel the lock's {@link #shardChannel(String)} or a family's {@link SharedKeys#shardChannel()}
	 */
	static String handOffShardChannel(String shardChannel, String clientId) {
		return shardChannel + ":" + clientId;
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

	/**
	 * The keys of a read-write lock or a semaphore, all derived from its state hash so that they share
	 * its slot. No exclusive key starts with {@code <prefix>:rw:} or {@code <prefix>:sem:} (theirs
	 * start with {@code <prefix>:{}, {@code <prefix>:q{}, {@code <prefix>:fencing}, {@code <prefix>:grants:}
	 * or {@code <prefix>:anchor}), so the families' key spaces never meet.
	 * @param family {@link HoldKind.Family#READ_WRITE} or {@link HoldKind.Family#SEMAPHORE}
	 */
	SharedKeys shared(HoldKind.Family family, String name) {
		String space = switch (family) {
			case READ_WRITE -> ":rw:";
			case SEMAPHORE -> ":sem:";
			case LOCK -> throw new IllegalArgumentException("An exclusive lock's keys are not shared keys: " + name);
		};
		String state = this.prefix + space + "{" + name + "}";
		int slot = ClusterSlotTags.slot(state);
		// As queueBase: a name starting with '}' gives the state an empty hash tag, so its other keys
		// carry a tag of its slot.
		String base = (this.cluster && name.startsWith("}"))
				? this.prefix + ":q{" + ClusterSlotTags.tagFor(slot) + "}" + space + name : state;
		String counter = this.cluster ? this.prefix + ":fencing:{" + ClusterSlotTags.tagFor(slot) + "}"
				: this.prefix + ":fencing";
		return new SharedKeys(state, counter, base + ":queue", base + ":queued", counter + LAST_SAVE_SEEN,
				counter + REPLICATION_ID_SEEN, base + ":released:", state + ":released", base + ":released", slot);
	}

	/**
	 * The keys of one read-write lock or semaphore (see {@link #shared}).
	 *
	 * @param state the state hash: one field per holder and kind, and the lock's counts
	 * @param counter the fencing counter, the exclusive locks' one (of the state's slot on a cluster)
	 * @param queue the list of queued owners
	 * @param queueEntries the queued owners' entries
	 * @param lastSaveSeen the restart grace's LASTSAVE seen, beside the counter
	 * @param replicationIdSeen the restart grace's replication id seen, beside the counter
	 * @param markerPrefix an owner's release marker, up to its owner id
	 * @param channel the channel on which the scripts announce that a newcomer may enter, with classic pub/sub
	 * @param shardChannel that channel with sharded pub/sub, in the state's slot (see {@link RedisKeys#shardChannel})
	 * @param slot the cluster slot of all of these keys
	 */
	record SharedKeys(String state, String counter, String queue, String queueEntries, String lastSaveSeen,
			String replicationIdSeen, String markerPrefix, String channel, String shardChannel, int slot) {

		/** @return the keys of {@code acquire-shared.lua} in its KEYS order */
		List<String> acquireKeys() {
			return List.of(this.state, this.counter, this.queue, this.queueEntries, this.lastSaveSeen,
					this.replicationIdSeen);
		}

		/** @return the keys of {@code release-shared.lua} in its KEYS order */
		List<String> releaseKeys(String owner) {
			return List.of(this.state, this.counter, this.queue, this.queueEntries, this.markerPrefix + owner,
					this.lastSaveSeen, this.replicationIdSeen);
		}

		/** @return the keys of {@code token-shared.lua} */
		List<String> tokenKeys() {
			return List.of(this.state, this.counter);
		}

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
