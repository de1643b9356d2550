package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.HoldRef;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.ReleaseRequest;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.HoldsOnThreads;
import io.distlock.testing.RedisClusterExtension;
import io.distlock.testing.ThreadStates;

/**
 * What is particular to Redis Cluster: a lock's keys share a slot, renewals are batched per slot,
 * and a release on any master wakes waiters subscribed through any node.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisClusterLockTest {

	@RegisterExtension
	static final RedisClusterExtension redisCluster = new RedisClusterExtension();

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisCluster);

	@Test
	void everyMasterThatMayEvictLockKeysIsNamed() {
		RedisServerProcess evicting = redisCluster.cluster().masters().get(2);
		assertThat(evicting.command("CONFIG", "SET", "maxmemory", "512mb")).isEqualTo("+OK");
		assertThat(evicting.command("CONFIG", "SET", "maxmemory-policy", "volatile-lfu")).isEqualTo("+OK");
		try {
			assertThat(this.clients.registry(Duration.ofSeconds(30)).serverWarnings()).singleElement()
				.asString()
				.contains(":" + evicting.port() + " may evict lock keys")
				.contains("maxmemory-policy volatile-lfu");
		}
		finally {
			evicting.command("CONFIG", "SET", "maxmemory", "0");
			evicting.command("CONFIG", "SET", "maxmemory-policy", "noeviction");
		}
	}

	@Test
	void aLocksKeysShareItsSlotAndFencingCountersStayFew() {
		RedisKeys keys = new RedisKeys("distlock", true);
		Set<String> counters = new HashSet<>();
		for (int i = 0; i < 5000; i++) {
			String name = "order:" + i;
			assertThat(ClusterSlotTags.slot(keys.fencingCounter(name))).isEqualTo(ClusterSlotTags.slot(keys.lock(name)));
			counters.add(keys.fencingCounter(name));
		}
		assertThat(counters.size()).isLessThanOrEqualTo(16384);
	}

	@Test
	void aLocksQueueKeysShareItsSlotEvenWhenItsNameHasNoHashTag() {
		RedisKeys keys = new RedisKeys("distlock", true);
		for (String name : List.of("order:42", "}starts-with-a-brace", "a}b", "{x}")) {
			int slot = ClusterSlotTags.slot(keys.lock(name));
			assertThat(ClusterSlotTags.slot(keys.queue(name))).as(name).isEqualTo(slot);
			assertThat(ClusterSlotTags.slot(keys.queueEntries(name))).as(name).isEqualTo(slot);
			assertThat(ClusterSlotTags.slot(keys.fencingCounter(name))).as(name).isEqualTo(slot);
			assertThat(keys.scriptKeys(name)).as(name)
				.startsWith(keys.lock(name), keys.fencingCounter(name), keys.queue(name), keys.queueEntries(name))
				.hasSize(6)
				.allSatisfy(key -> assertThat(ClusterSlotTags.slot(key)).isEqualTo(slot));
			assertThat(keys.releaseKeys(name, "client-1:42")).as(name).startsWith(keys.scriptKeys(name).subList(0, 4).toArray(String[]::new)).hasSize(5);
			assertThat(ClusterSlotTags.slot(keys.releaseKeys(name, "client-1:42").get(4))).as(name).isEqualTo(slot);
			assertThat(keys.tokenKeys(name)).as(name).allSatisfy(key -> assertThat(ClusterSlotTags.slot(key)).isEqualTo(slot));
		}
	}

	@Test
	void locksOnEveryMasterAreTakenRenewedInPerSlotBatchesAndReleased() throws Exception {
		// 3 s: renewals must not fall behind a lease on a loaded machine.
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(3));
		int holds = 120;
		try (HoldsOnThreads held = HoldsOnThreads.take(registry, "spread:", holds)) {
			assertThat(keysPerMaster()).allSatisfy(count -> assertThat(count).isPositive());
			long before = registry.watchdogRenewals();
			// Five rounds (a third of a lease apart) outlast every lease taken before them.
			await().atMost(Duration.ofSeconds(30)).until(() -> registry.watchdogRenewals() >= before + 5L * holds);
			assertThat(countKeys("distlock:{spread:*}")).as("every lock is still held, a lease later").isEqualTo(holds);
		}
		assertThat(registry.heldLocks()).isEmpty();
		assertThat(countKeys("distlock:{spread:*}")).isZero();
		// Once the release markers lapse (15 s), only fencing counters are left.
		await().atMost(Duration.ofSeconds(45))
			.until(() -> keysPerMaster().stream().mapToLong(Long::longValue).sum() == countKeys("distlock:fencing:*"));
	}

	@Test
	void releaseOnAnyMasterWakesAWaiterPromptly() throws Exception {
		RedisLockRegistry holder = this.clients.registry(Duration.ofSeconds(30));
		RedisLockRegistry waiter = this.clients.registry(Duration.ofSeconds(30));
		ExecutorService threads = Executors.newCachedThreadPool();
		try {
			// Names whose keys live on different masters than the waiter's subscription connection.
			for (String name : namesOnEachMaster()) {
				DistLock held = holder.getLock(name);
				held.lock();
				AtomicReference<Thread> waiting = new AtomicReference<>();
				Future<Long> acquiredAt = threads.submit(() -> {
					waiting.set(Thread.currentThread());
					DistLock lock = waiter.getLock(name);
					if (!lock.tryLock(Duration.ofSeconds(20))) {
						return -1L;
					}
					long now = System.nanoTime();
					lock.unlock();
					return now;
				});
				// Parked after its failed attempt: without the release message it would sleep the 30 s TTL.
				await().atMost(Duration.ofSeconds(10))
					.until(() -> waiting.get() != null && ThreadStates.parkedWaitingForRelease(waiting.get()));
				held.unlock();
				long releasedAt = System.nanoTime();
				long acquired = acquiredAt.get(20, TimeUnit.SECONDS);
				assertThat(acquired).as("waiter on %s acquired", name).isPositive();
				assertThat(Duration.ofNanos(acquired - releasedAt)).as("wake-up for %s", name).isLessThan(Duration.ofSeconds(2));
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	@Test
	void aPerSlotRenewalBatchRenewsTheHoldsItWasSentForAndNoLaterHoldOfTheirOwners() {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		try {
			Duration watchdogLease = Duration.ofSeconds(30);
			Duration shortLease = Duration.ofSeconds(2);
			List<HoldRef> batch = new ArrayList<>();
			for (int i = 0; i < 12; i++) {
				String name = "batch:" + i;
				Acquisition first = backend.acquire(new AcquireRequest(name, "o:1", 0, shortLease, Duration.ZERO, "t" + i));
				assertThat(first.status()).isEqualTo(Acquisition.Status.ACQUIRED);
				batch.add(new HoldRef(name, "o:1", first.attemptId()));
				if (i % 2 == 1) {
					// Released and taken again before the renewal lands: the renewal names the first hold.
					assertThat(backend.release(new ReleaseRequest(name, "o:1", 1, first.attemptId(), Acquisition.NO_TOKEN, null)))
						.isEqualTo(Release.RELEASED);
					assertThat(backend.acquire(new AcquireRequest(name, "o:1", 0, shortLease, Duration.ZERO, "u" + i)).status())
						.isEqualTo(Acquisition.Status.ACQUIRED);
				}
			}
			assertThat(batch.stream().map(ref -> ClusterSlotTags.slot("distlock:{" + ref.name() + "}")).distinct().count())
				.as("slots in the batch").isGreaterThan(1);

			assertThat(backend.renew(batch, watchdogLease, Duration.ofSeconds(10)))
				.containsExactly(true, false, true, false, true, false, true, false, true, false, true, false);
			for (int i = 0; i < batch.size(); i++) {
				Duration left = backend.remainingLease(batch.get(i).name());
				if (i % 2 == 0) {
					assertThat(left).as("lease of the renewed %s", batch.get(i).name()).isGreaterThan(shortLease);
				}
				else {
					assertThat(left).as("lease of the later hold of %s", batch.get(i).name()).isLessThanOrEqualTo(shortLease);
				}
			}
		}
		finally {
			backend.close();
		}
	}

	private List<String> namesOnEachMaster() {
		List<String> names = new ArrayList<>();
		int masters = redisCluster.cluster().masters().size();
		for (int master = 0; master < masters; master++) {
			int from = master * 16384 / masters;
			int to = (master + 1) * 16384 / masters;
			for (int i = 0;; i++) {
				int slot = ClusterSlotTags.slot("distlock:{wake:" + i + "}");
				if (slot >= from && slot < to) {
					names.add("wake:" + i);
					break;
				}
			}
		}
		return names;
	}

	private List<Long> keysPerMaster() {
		List<Long> counts = new ArrayList<>();
		for (RedisServerProcess master : redisCluster.cluster().masters()) {
			counts.add(Long.parseLong(master.query("DBSIZE").trim()));
		}
		return counts;
	}

	private long countKeys(String pattern) {
		long count = 0;
		for (RedisServerProcess master : redisCluster.cluster().masters()) {
			count += master.query("KEYS", pattern).lines().filter(line -> !line.isBlank()).count();
		}
		return count;
	}

}
