package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.RedisClusterExtension;

/**
 * Sharded pub/sub subscriptions after the connection to a shard drops and Lettuce reconnects it
 * (failed before distlock subscribed each lock again itself).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisClusterShardedReconnectTest {

	@RegisterExtension
	static final RedisClusterExtension redisCluster = new RedisClusterExtension();

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisCluster);

	/**
	 * A client waits for two locks of one master, in two slots. Its connection to that master drops
	 * (a network blip, CLIENT KILL, a proxy or load balancer idle cut) and Lettuce reconnects it.
	 * Lettuce re-sends all of the node connection's shard channels in ONE SSUBSCRIBE, which the
	 * server refuses with CROSSSLOT (channels of two slots), so both locks' channels stay
	 * unsubscribed, while ShardedReleaseSubscriber still counts them as subscribed (and its waiters
	 * rely on them) for as long as the locks have waiters here.
	 */
	@Test
	void shardSubscriptionsOfTwoSlotsOnOneMasterAreBackAfterTheConnectionToThatMasterReconnects() throws Exception {
		RedisLockRegistry holder = this.clients.registry(Duration.ofSeconds(30));
		RedisLockRegistry waiter = this.clients.registry(Duration.ofSeconds(30));
		RedisServerProcess master = redisCluster.cluster().masters().get(1);
		List<String> names = ShardSubscriptions.namesOnMaster(redisCluster.cluster(), "reconnect:", 1, 2);
		RedisKeys keys = new RedisKeys("distlock", true);
		assertThat(keys.slot(names.get(0))).isNotEqualTo(keys.slot(names.get(1)));
		List<DistLock> held = new ArrayList<>();
		for (String name : names) {
			DistLock lock = holder.getLock(name);
			lock.lock();
			held.add(lock);
		}
		ExecutorService threads = Executors.newFixedThreadPool(names.size());
		try {
			List<Future<Boolean>> acquired = new ArrayList<>();
			for (String name : names) {
				acquired.add(threads.submit(() -> {
					DistLock lock = waiter.getLock(name);
					if (!lock.tryLock(Duration.ofSeconds(60))) {
						return false;
					}
					lock.unlock();
					return true;
				}));
			}
			List<String> channels = names.stream().map(keys::shardChannel).toList();
			ShardSubscriptions.awaitOneSubscriberEach("both locks' channels subscribed", Duration.ofSeconds(10), master,
					channels);
			Set<String> before = clientIds(master);

			assertThat(master.command("CLIENT", "KILL", "TYPE", "pubsub")).doesNotStartWith("-");
			// Lettuce reconnects and re-sends its shard subscriptions (its last command is SSUBSCRIBE).
			await().atMost(Duration.ofSeconds(20)).until(() -> master.query("CLIENT", "LIST").lines()
				.anyMatch(line -> line.contains(" cmd=ssubscribe") && !before.contains(idOf(line))));

			ShardSubscriptions.awaitOneSubscriberEach("both locks' channels subscribed again after the reconnect",
					Duration.ofSeconds(5), master, channels);
			held.forEach(DistLock::unlock);
			for (Future<Boolean> future : acquired) {
				assertThat(future.get(30, TimeUnit.SECONDS)).isTrue();
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	private static Set<String> clientIds(RedisServerProcess master) {
		return master.query("CLIENT", "LIST").lines().map(RedisClusterShardedReconnectTest::idOf)
			.collect(Collectors.toSet());
	}

	private static String idOf(String clientLine) {
		int start = clientLine.indexOf("id=") + 3;
		return clientLine.substring(start, clientLine.indexOf(' ', start));
	}

}
