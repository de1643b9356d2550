package io.distlock.redis;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import io.distlock.embedded.RedisClusterProcess;
import io.distlock.embedded.RedisServerProcess;

/**
 * Shard channel subscriptions as a Cluster master counts them, for the sharded pub/sub tests. A
 * client subscribes in the background, after its waiter queued, and again after a reconnect or a
 * slot's move; so a test that needs the subscription in place waits until the master counts it.
 */
final class ShardSubscriptions {

	private ShardSubscriptions() {
	}

	/** @return how many clients {@code master} counts on the shard channel ({@code PUBSUB SHARDNUMSUB}) */
	static long subscribers(RedisServerProcess master, String channel) {
		String[] reply = master.query("PUBSUB", "SHARDNUMSUB", channel).split("\n");
		return Long.parseLong(reply[1].trim());
	}

	/**
	 * Waits until {@code master} counts exactly one subscriber on each of {@code channels}: the
	 * SSUBSCRIBE has taken effect, and no second one (a subscription left behind) is there.
	 * @param alias what is awaited, for the failure's message
	 */
	static void awaitOneSubscriberEach(String alias, Duration atMost, RedisServerProcess master,
			Collection<String> channels) {
		await(alias).atMost(atMost)
			.until(() -> channels.stream().allMatch(channel -> subscribers(master, channel) == 1));
	}

	/**
	 * @return {@code count} lock names (of the default key prefix) whose keys live on the master at
	 * {@code master} in {@link RedisClusterProcess#masters()}; the masters own equal slot ranges, in order
	 */
	static List<String> namesOnMaster(RedisClusterProcess cluster, String prefix, int master, int count) {
		int masters = cluster.masters().size();
		List<String> names = new ArrayList<>();
		for (int i = 0; names.size() < count; i++) {
			int slot = ClusterSlotTags.slot("distlock:{" + prefix + i + "}");
			if (slot * masters / 16384 == master) {
				names.add(prefix + i);
			}
		}
		return names;
	}

}
