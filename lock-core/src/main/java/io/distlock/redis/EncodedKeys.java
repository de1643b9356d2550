package io.distlock.redis;

import java.util.Arrays;

/**
 * The keys of a lock's scripts as the bytes Redis is sent, encoded once per lock name rather than
 * on every call: an acquisition sends 5 keys and a release 5, and building their strings and UTF-8
 * copies anew each time was a sixth of what an uncontended lock-and-unlock allocated.
 *
 * <p>A fixed table indexed by the name's hash keeps the names used last. A name whose slot another
 * name took meanwhile is simply encoded again, so memory stays bounded (a few hundred names'
 * keys) however many names a client uses, and no call waits for another.
 */
final class EncodedKeys {

	/** A power of two; a few hundred names' keys are some tens of kilobytes. */
	private static final int SLOTS = 256;

	private final RedisKeys keys;

	/**
	 * Read and written without locks: an entry's keys are final fields, arrays never written after
	 * construction, and its one changing field holds immutable records, so a thread sees either a
	 * whole entry or an older one or none.
	 */
	private final Names[] table = new Names[SLOTS];

	/** How many of acquire.lua's keys are sent: the last two only serve the restart grace. */
	private final int acquireKeyCount;

	/** Keys for a client with a restart grace. */
	EncodedKeys(RedisKeys keys) {
		this(keys, true);
	}

	/**
	 * @param keys the key names
	 * @param restartGrace whether the client serves a restart grace: without one, acquire.lua reads
	 * neither of the grace's keys, and each costs Redis more to take in than its check does
	 */
	EncodedKeys(RedisKeys keys, boolean restartGrace) {
		this.keys = keys;
		this.acquireKeyCount = restartGrace ? 6 : 4;
	}

	/**
	 * @return the keys of {@code acquire.lua} in KEYS order (see {@link RedisKeys#scriptKeys}), without
	 * the restart grace's two for a client without one; shared between calls, so never to be written to
	 */
	byte[][] acquireKeys(String name) {
		return of(name).acquireKeys;
	}

	/**
	 * @param owner the owner id, encoded
	 * @return the keys of {@code release.lua} in KEYS order (see {@link RedisKeys#releaseKeys}); shared
	 * between calls of the same owner, so never to be written to
	 */
	byte[][] releaseKeys(String name, byte[] owner) {
		Names names = of(name);
		// A name is mostly released by the owner that released it last (a thread's own key, a job's).
		ReleaseKeys last = names.lastRelease;
		if (last != null && (last.owner == owner || Arrays.equals(last.owner, owner))) {
			return last.keys;
		}
		byte[][] keys = new byte[5][];
		System.arraycopy(names.scriptKeys, 0, keys, 0, 4);
		byte[] marker = new byte[names.markerPrefix.length + owner.length];
		System.arraycopy(names.markerPrefix, 0, marker, 0, names.markerPrefix.length);
		System.arraycopy(owner, 0, marker, names.markerPrefix.length, owner.length);
		keys[4] = marker;
		names.lastRelease = new ReleaseKeys(owner, keys);
		return keys;
	}

	/** @return the keys of {@code token.lua} (see {@link RedisKeys#tokenKeys}), the first two of acquire's; a new array */
	byte[][] tokenKeys(String name) {
		return Arrays.copyOf(of(name).scriptKeys, 2);
	}

	/** @return the lock's shard channel (see {@link RedisKeys#shardChannel}), encoded; never to be written to */
	byte[] shardChannel(String name) {
		return of(name).shardChannel;
	}

	/** @return the lock hash's key, encoded */
	byte[] lockKey(String name) {
		return of(name).scriptKeys[0];
	}

	private Names of(String name) {
		int hash = name.hashCode();
		int slot = (hash ^ (hash >>> 16)) & (SLOTS - 1);
		Names names = this.table[slot];
		if (names == null || !names.name.equals(name)) {
			names = new Names(name, this.keys, this.acquireKeyCount);
			this.table[slot] = names;
		}
		return names;
	}

	/** One name's encoded keys. */
	private static final class Names {

		final String name;

		final byte[][] scriptKeys;

		/** The first keys of {@link #scriptKeys}: all of them, or those a client without a restart grace sends. */
		final byte[][] acquireKeys;

		/** The release marker's key up to the owner id. */
		final byte[] markerPrefix;

		final byte[] shardChannel;

		/**
		 * The keys of the last release, whose marker names its owner; written without locks, as an
		 * immutable record, so a thread sees a whole one or an older one.
		 */
		volatile ReleaseKeys lastRelease;

		Names(String name, RedisKeys keys, int acquireKeyCount) {
			this.name = name;
			this.scriptKeys = ScriptArguments.text(keys.scriptKeys(name));
			this.acquireKeys = (acquireKeyCount == this.scriptKeys.length) ? this.scriptKeys
					: Arrays.copyOf(this.scriptKeys, acquireKeyCount);
			// Release's keys are acquire's first four and the marker; with no owner, the marker's prefix.
			this.markerPrefix = ScriptArguments.text(keys.releaseKeys(name, ""))[4];
			this.shardChannel = ScriptArguments.text(keys.shardChannel(name));
		}

	}

	/** One owner's release keys for one name: the owner's bytes, and the keys with its marker. */
	private record ReleaseKeys(byte[] owner, byte[][] keys) {
	}

}
