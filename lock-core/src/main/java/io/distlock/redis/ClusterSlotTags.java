package io.distlock.redis;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

/**
 * For every Redis Cluster slot, a short hash tag that maps to it. A helper key that must share a
 * lock key's slot (a Lua script may only touch keys of one slot) is given the tag of that slot,
 * so there are at most 16384 such helper keys however many lock names come and go.
 */
final class ClusterSlotTags {

	private static final String[] TAGS = computeTags();

	private ClusterSlotTags() {
	}

	/** @return the slot of a key, honouring its {hash tag} */
	static int slot(String key) {
		return ClusterSlotHashUtil.calculateSlot(key);
	}

	/** @return a tag whose key {@code {tag}} lives in the given slot */
	static String tagFor(int slot) {
		return TAGS[slot];
	}

	private static String[] computeTags() {
		String[] tags = new String[ClusterSlotHashUtil.SLOT_COUNT];
		int found = 0;
		for (long candidate = 0; found < tags.length; candidate++) {
			String tag = Long.toString(candidate, 36);
			int slot = ClusterSlotHashUtil.calculateSlot(tag);
			if (tags[slot] == null) {
				tags[slot] = tag;
				found++;
			}
		}
		return tags;
	}

}
