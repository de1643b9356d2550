package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.DistLock;
import io.distlock.HoldKind;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.RedisClusterExtension;
import io.distlock.testing.ThreadStates;

/**
 * Hand-offs on a Redis 7+ Cluster travel by sharded pub/sub, on the shard of the lock's slot: a
 * classic PUBLISH crosses the cluster bus to reach a subscriber connected to another node, and a
 * second one back to back arrived there 40 ms late, leaving the lock idle that long.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RedisClusterShardedPubSubTest {

	private static final Logger log = LoggerFactory.getLogger(RedisClusterShardedPubSubTest.class);

	/** Well above a hand-off on an idle machine (1-3 ms), well below the cluster bus's 40 ms delay. */
	private static final Duration LATE = Duration.ofMillis(25);

	@RegisterExtension
	static final RedisClusterExtension redisCluster = new RedisClusterExtension();

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisCluster);

	@Test
	void aLocksShardChannelsAreInItsSlotAndTheClassicChannelWhereThatIsToo() {
		RedisKeys keys = new RedisKeys("distlock", true);
		for (String name : List.of("order:42", "}starts-with-a-brace", "}", "}}", "a}b", "{x}", "x{y}z", "{}")) {
			int slot = keys.slot(name);
			String channel = keys.shardChannel(name);
			assertThat(ClusterSlotTags.slot(channel)).as(name).isEqualTo(slot);
			assertThat(ClusterSlotTags.slot(RedisKeys.handOffShardChannel(channel, "3f2a{c}lient"))).as(name).isEqualTo(slot);
			if (!name.startsWith("}")) {
				assertThat(channel).isEqualTo(keys.releaseChannel(name));
			}
			for (HoldKind.Family family : List.of(HoldKind.Family.READ_WRITE, HoldKind.Family.SEMAPHORE)) {
				RedisKeys.SharedKeys shared = keys.shared(family, name);
				assertThat(ClusterSlotTags.slot(shared.shardChannel())).as("%s %s", family, name).isEqualTo(shared.slot());
				assertThat(ClusterSlotTags.slot(RedisKeys.handOffShardChannel(shared.shardChannel(), "c1")))
					.as("%s %s", family, name).isEqualTo(shared.slot());
			}
		}
	}

	@Test
	void backToBackHandOffsGoBySpublishOnTheLocksShardAndNothingCrossesTheClusterBus()
			throws Exception {
		List<RedisLockRegistry> registries = List.of(this.clients.registry(Duration.ofSeconds(30)),
				this.clients.registry(Duration.ofSeconds(30)), this.clients.registry(Duration.ofSeconds(30)));
		// Opens whatever subscription connections the clients keep.
		contend(registries, List.of("warm-up"), 20);
		int master = masterWithoutClassicSubscribers();
		redisCluster.cluster().onEachMaster("CONFIG", "RESETSTAT");
		long busPublishes = clusterStat("cluster_stats_messages_publish_sent");
		List<Duration> handOffs = contend(registries,
				ShardSubscriptions.namesOnMaster(redisCluster.cluster(), "handoff:", master, 3), 150);
		// Mostly one per hand-off; a release that found the other not queued yet announced nothing.
		assertThat(calls("spublish")).as("SPUBLISH calls").isGreaterThan(handOffs.size() / 2);
		assertThat(calls("publish")).as("PUBLISH calls").isZero();
		assertThat(clusterStat("cluster_stats_messages_publish_sent") - busPublishes)
			.as("messages sent over the cluster bus for classic PUBLISH").isZero();
		assertThat(handOffs).hasSizeGreaterThan(200);
		// Logged, not asserted: how many are late depends on the machine's load (a quarter at a load of
		// 10 on 2 cores), and how fast hand-offs are is measured in the benchmarks module.
		long late = handOffs.stream().filter(handOff -> handOff.compareTo(LATE) > 0).count();
		log.info("{} of {} sharded hand-offs took over {}", late, handOffs.size(), LATE);
	}

	/**
	 * A slot moves to another master while a client waits for a lock in it: the old master ends the
	 * waiter's shard subscriptions, the waiter subscribes again on the new one, and the release made
	 * there hands the lock over, to one holder at a time.
	 */
	@Test
	void aWaiterWhoseSlotMovesToAnotherMasterSubscribesThereAndGetsTheLock() throws Exception {
		RedisLockRegistry holder = this.clients.registry(Duration.ofSeconds(30));
		RedisLockRegistry waiter = this.clients.registry(Duration.ofSeconds(30));
		List<RedisServerProcess> masters = redisCluster.cluster().masters();
		String name = ShardSubscriptions.namesOnMaster(redisCluster.cluster(), "moving:", 1, 1).get(0);
		RedisKeys keys = new RedisKeys("distlock", true);
		int slot = keys.slot(name);
		String channel = keys.shardChannel(name);
		DistLock held = holder.getLock(name);
		held.lock();
		AtomicInteger holders = new AtomicInteger(1);
		AtomicReference<Thread> waiting = new AtomicReference<>();
		ExecutorService threads = Executors.newSingleThreadExecutor();
		boolean moved = false;
		try {
			Future<Boolean> acquired = threads.submit(() -> {
				waiting.set(Thread.currentThread());
				DistLock lock = waiter.getLock(name);
				if (!lock.tryLock(Duration.ofSeconds(60))) {
					return false;
				}
				boolean alone = holders.incrementAndGet() == 1;
				holders.decrementAndGet();
				lock.unlock();
				return alone;
			});
			await().atMost(Duration.ofSeconds(10))
				.until(() -> waiting.get() != null && ThreadStates.parkedWaitingForRelease(waiting.get()));
			// Subscribed in the background, after the waiter queued.
			ShardSubscriptions.awaitOneSubscriberEach("the waiter's channel subscribed on the lock's master",
					Duration.ofSeconds(10), masters.get(1), List.of(channel));

			moveSlot(slot, masters.get(1), masters.get(2));
			moved = true;
			ShardSubscriptions.awaitOneSubscriberEach("the waiter's channel subscribed on the slot's new master",
					Duration.ofSeconds(20), masters.get(2), List.of(channel));
			assertThat(ShardSubscriptions.subscribers(masters.get(1), channel)).as("subscribers left on the old master").isZero();

			holders.decrementAndGet();
			long releasedAt = System.nanoTime();
			held.unlock();
			assertThat(acquired.get(30, TimeUnit.SECONDS)).as("the waiter got the lock, alone").isTrue();
			// Heard, not found by the re-check 2 s later.
			assertThat(Duration.ofNanos(System.nanoTime() - releasedAt)).isLessThan(Duration.ofSeconds(1));
		}
		finally {
			threads.shutdownNow();
			if (moved) {
				moveSlot(slot, masters.get(2), masters.get(1));
			}
		}
	}

	/** Moves a slot with its keys as redis-cli --cluster reshard does: IMPORTING, MIGRATING, MIGRATE, NODE. */
	private static void moveSlot(int slot, RedisServerProcess from, RedisServerProcess to) {
		String fromId = from.query("CLUSTER", "MYID").trim();
		String toId = to.query("CLUSTER", "MYID").trim();
		String number = Integer.toString(slot);
		assertThat(to.command("CLUSTER", "SETSLOT", number, "IMPORTING", fromId)).isEqualTo("+OK");
		assertThat(from.command("CLUSTER", "SETSLOT", number, "MIGRATING", toId)).isEqualTo("+OK");
		List<String> keys = from.query("CLUSTER", "GETKEYSINSLOT", number, "1000").lines().filter(key -> !key.isBlank()).toList();
		if (!keys.isEmpty()) {
			List<String> migrate = new ArrayList<>(List.of("MIGRATE", to.host(), Integer.toString(to.port()), "", "0", "5000", "KEYS"));
			migrate.addAll(keys);
			assertThat(from.command(migrate.toArray(String[]::new))).isEqualTo("+OK");
		}
		for (RedisServerProcess master : List.of(to, from)) {
			assertThat(master.command("CLUSTER", "SETSLOT", number, "NODE", toId)).isEqualTo("+OK");
		}
		for (RedisServerProcess master : redisCluster.cluster().masters()) {
			if (master != to && master != from) {
				master.command("CLUSTER", "SETSLOT", number, "NODE", toId);
			}
		}
	}

	/**
	 * @return the last master that no client is subscribed to with classic SUBSCRIBE: a classic
	 * message published there crosses the cluster bus to reach its subscribers
	 */
	private static int masterWithoutClassicSubscribers() {
		List<RedisServerProcess> masters = redisCluster.cluster().masters();
		for (int master = masters.size() - 1; master >= 0; master--) {
			if (masters.get(master).query("CLIENT", "LIST").lines().noneMatch(line -> line.matches(".* sub=[1-9].*"))) {
				return master;
			}
		}
		throw new IllegalStateException("Every master has a classic subscriber");
	}

	/**
	 * One thread of each client per lock takes that lock {@code acquisitions} times, the two asking
	 * again as soon as they released it, so that every release finds the other queued and hands the
	 * lock on at once; with several locks of one master, their hand-off messages go out back to back.
	 * @return the gaps between a release and the other thread's lock() returning
	 */
	private static List<Duration> contend(List<RedisLockRegistry> registries, List<String> names, int acquisitions)
			throws Exception {
		List<Duration> gaps = new CopyOnWriteArrayList<>();
		ExecutorService pool = Executors.newFixedThreadPool(registries.size() * names.size());
		CountDownLatch start = new CountDownLatch(1);
		List<AtomicInteger> overlaps = new ArrayList<>();
		try {
			List<Future<?>> done = new ArrayList<>();
			for (String name : names) {
				AtomicReference<Release> lastRelease = new AtomicReference<>();
				AtomicInteger taken = new AtomicInteger();
				AtomicInteger holders = new AtomicInteger();
				AtomicInteger overlapping = new AtomicInteger();
				overlaps.add(overlapping);
				for (RedisLockRegistry registry : registries) {
					DistLock lock = registry.getLock(name);
					done.add(pool.submit(() -> {
						start.await();
						while (taken.get() < acquisitions) {
							lock.lock();
							long now = System.nanoTime();
							if (holders.incrementAndGet() != 1) {
								overlapping.incrementAndGet();
							}
							Release before = lastRelease.get();
							if (before != null && before.by() != Thread.currentThread()) {
								gaps.add(Duration.ofNanos(now - before.at()));
							}
							taken.incrementAndGet();
							holders.decrementAndGet();
							lastRelease.set(new Release(Thread.currentThread(), System.nanoTime()));
							lock.unlock();
						}
						return null;
					}));
				}
			}
			start.countDown();
			for (Future<?> thread : done) {
				thread.get(150, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(overlaps).as("two holders at once on %s", names).allSatisfy(overlapping -> assertThat(overlapping).hasValue(0));
		return gaps;
	}

	/** A release: by which thread, when ({@link System#nanoTime()}). */
	private record Release(Thread by, long at) {
	}

	/** @return the sum over the masters of a CLUSTER INFO counter */
	private static long clusterStat(String name) {
		long sum = 0;
		for (RedisServerProcess master : redisCluster.cluster().masters()) {
			for (String line : master.query("CLUSTER", "INFO").split("\\r?\\n")) {
				if (line.startsWith(name + ":")) {
					sum += Long.parseLong(line.substring(name.length() + 1).trim());
				}
			}
		}
		return sum;
	}

	/** @return the calls of a command on every master, as INFO commandstats counts them */
	static long calls(String command) {
		long calls = 0;
		for (RedisServerProcess master : redisCluster.cluster().masters()) {
			for (String line : master.query("INFO", "commandstats").split("\r?\n")) {
				if (line.startsWith("cmdstat_" + command + ":calls=")) {
					calls += Long.parseLong(line.substring(line.indexOf('=') + 1, line.indexOf(',')));
				}
			}
		}
		return calls;
	}

}
