package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.codec.CRC16;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.HoldKind;
import io.distlock.LostHold;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.HoldRef;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.LockNotice;
import io.distlock.core.ReleaseRequest;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.HoldsOnThreads;
import io.distlock.testing.RedisClusterExtension;
import io.distlock.testing.ThreadStates;

/**
 * What is particular to Redis Cluster: a lock's keys share a slot (a read-write lock's and a
 * semaphore's share their state hash's), renewals are batched per slot, and a release on any master
 * wakes waiters subscribed through any node.
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

	@Test
	void aReadWriteLocksAndASemaphoresKeysShareTheirStateHashsSlot() {
		RedisKeys keys = new RedisKeys("distlock", true);
		for (String name : List.of("order:42", "}starts-with-a-brace", "}", "}}", "a}b", "{x}", "x{y}z", "{}")) {
			for (HoldKind.Family family : List.of(HoldKind.Family.READ_WRITE, HoldKind.Family.SEMAPHORE)) {
				RedisKeys.SharedKeys shared = keys.shared(family, name);
				String space = (family == HoldKind.Family.READ_WRITE) ? "rw" : "sem";
				assertThat(shared.state()).isEqualTo("distlock:" + space + ":{" + name + "}");
				int slot = ClusterSlotTags.slot(shared.state());
				assertThat(shared.slot()).as(name).isEqualTo(slot);
				assertThat(shared.acquireKeys()).as(name).hasSize(6).allSatisfy(key -> assertThat(ClusterSlotTags.slot(key)).isEqualTo(slot));
				assertThat(shared.releaseKeys("client-1:42")).as(name).hasSize(7)
					.allSatisfy(key -> assertThat(ClusterSlotTags.slot(key)).isEqualTo(slot));
				assertThat(shared.tokenKeys()).as(name).allSatisfy(key -> assertThat(ClusterSlotTags.slot(key)).isEqualTo(slot));
				// The counter of the state's slot, which for a name starting with '}' is not the exclusive lock's.
				assertThat(shared.counter()).as(name).isEqualTo("distlock:fencing:{" + ClusterSlotTags.tagFor(slot) + "}");
				if (name.startsWith("}")) {
					// An empty hash tag: the state is hashed whole, and its other keys carry a tag of its slot.
					assertThat(slot).as(name).isEqualTo(CRC16.crc16(shared.state().getBytes(StandardCharsets.UTF_8)) % 16384);
					String base = "distlock:q{" + ClusterSlotTags.tagFor(slot) + "}:" + space + ":" + name;
					assertThat(shared.queue()).isEqualTo(base + ":queue");
					assertThat(shared.queueEntries()).isEqualTo(base + ":queued");
					assertThat(shared.markerPrefix()).isEqualTo(base + ":released:");
				}
				else {
					assertThat(shared.queue()).isEqualTo(shared.state() + ":queue");
					assertThat(shared.queueEntries()).isEqualTo(shared.state() + ":queued");
					assertThat(shared.markerPrefix()).isEqualTo(shared.state() + ":released:");
				}
				assertThat(shared.channel()).isEqualTo(shared.state() + ":released");
				// A name starting with '}' keeps its families' queues apart from its exclusive lock's.
				assertThat(List.of(shared.queue(), shared.queueEntries())).as(name)
					.doesNotContainAnyElementsOf(keys.scriptKeys(name));
			}
		}
	}

	/**
	 * A name starting with '}' gives the state hash an empty hash tag: every key the scripts touch must
	 * still be in the state's slot (or the Cluster refuses the script with CROSSSLOT), also the queue,
	 * the release marker and the fencing counter, which only a waiter, a release and a token reach.
	 */
	@Test
	void aReadWriteLockAndASemaphoreWhoseNamesStartWithABraceQueueHandOverAndCountInTheirStatesSlot() throws Exception {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		List<AutoCloseable> subscriptions = new ArrayList<>();
		try {
			assertThat(backend.supportedKinds()).isEqualTo(EnumSet.allOf(HoldKind.class));
			for (String name : List.of("}brace", "}")) {
				for (HoldKind.Family family : List.of(HoldKind.Family.READ_WRITE, HoldKind.Family.SEMAPHORE)) {
					RedisKeys.SharedKeys keys = backend.calls().keys().shared(family, name);
					assertThat(keys.queue()).as("%s %s", family, name).startsWith("distlock:q{");
					assertThat(keys.slot()).as("%s %s: in another slot than its exclusive lock", family, name)
						.isNotEqualTo(backend.calls().keys().slot(name));
					boolean semaphore = family == HoldKind.Family.SEMAPHORE;
					HoldKind holding = semaphore ? HoldKind.PERMIT : HoldKind.WRITE;
					HoldKind waiting = semaphore ? HoldKind.PERMIT : HoldKind.READ;
					int permits = semaphore ? 1 : 0;
					BlockingQueue<LockNotice> notices = new LinkedBlockingQueue<>();
					subscriptions.add(backend.subscribe(name, family, "b", notices::add));

					Acquisition held = backend.acquire(new AcquireRequest(name, "a:1", 0, Duration.ofSeconds(30), Duration.ZERO,
							"h-" + family, holding, permits));
					assertThat(held.status()).isEqualTo(Acquisition.Status.ACQUIRED);
					long heldToken = backend.issueToken(name, holding, "a:1", held.attemptId());
					assertThat(heldToken).isPositive();
					assertThat(backend.acquire(new AcquireRequest(name, "b:1", 0, Duration.ofSeconds(30), Duration.ofSeconds(30),
							"w-" + family, waiting, permits)).status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
					assertThat(keysOnMasterOf(keys.slot())).contains(keys.state(), keys.queue(), keys.queueEntries(),
							keys.counter());

					assertThat(backend.release(new ReleaseRequest(name, "a:1", 1, held.attemptId(), heldToken, null, holding)))
						.isEqualTo(Release.RELEASED);
					LockNotice.Granted grant = nextGrant(notices, "b:1");
					assertThat(grant.ticket()).isEqualTo("w-" + family);
					assertThat(grant.token()).as("drawn from the counter of the state's slot").isGreaterThan(heldToken);
					assertThat(keysOnMasterOf(keys.slot())).contains(keys.markerPrefix() + "a:1");
					Acquisition takenUp = backend.acquire(new AcquireRequest(name, "b:1", 0, Duration.ofSeconds(30),
							Duration.ofSeconds(30), "w-" + family, waiting, permits));
					assertThat(takenUp.status()).isEqualTo(Acquisition.Status.ACQUIRED);
					assertThat(takenUp.token()).isEqualTo(grant.token());
					assertThat(backend.isHeldBy(name, waiting, "b:1")).isTrue();
					assertThat(backend.renew(List.of(new HoldRef(name, "b:1", takenUp.attemptId(), waiting)), Duration.ofSeconds(30),
							Duration.ofSeconds(10))).containsExactly(true);
					if (semaphore) {
						assertThat(backend.availablePermits(name, 1)).isZero();
					}
					assertThat(backend.release(new ReleaseRequest(name, "b:1", 1, takenUp.attemptId(), grant.token(), null,
							waiting))).isEqualTo(Release.RELEASED);
					assertThat(countKeys(keys.state())).isZero();
					assertThat(countKeys(keys.queue())).isZero();
				}
			}
		}
		finally {
			for (AutoCloseable subscription : subscriptions) {
				subscription.close();
			}
			backend.close();
		}
	}

	@Test
	void readWriteLocksAndSemaphoresOnEveryMasterWakeTheirWaitersPromptly() throws Exception {
		RedisLockRegistry holder = this.clients.registry(Duration.ofSeconds(30));
		RedisLockRegistry waiter = this.clients.registry(Duration.ofSeconds(30));
		ExecutorService threads = Executors.newCachedThreadPool();
		try {
			for (HoldKind.Family family : List.of(HoldKind.Family.READ_WRITE, HoldKind.Family.SEMAPHORE)) {
				for (String name : sharedNamesOnEachMaster(family)) {
					boolean semaphore = family == HoldKind.Family.SEMAPHORE;
					DistLock held = semaphore ? holder.getSemaphore(name, 1).asLock() : holder.getReadWriteLock(name).writeLock();
					held.lock();
					AtomicReference<Thread> waiting = new AtomicReference<>();
					Future<Long> acquiredAt = threads.submit(() -> {
						waiting.set(Thread.currentThread());
						DistLock lock = semaphore ? waiter.getSemaphore(name, 1).asLock() : waiter.getReadWriteLock(name).readLock();
						if (!lock.tryLock(Duration.ofSeconds(20))) {
							return -1L;
						}
						long now = System.nanoTime();
						lock.unlock();
						return now;
					});
					await().atMost(Duration.ofSeconds(10))
						.until(() -> waiting.get() != null && ThreadStates.parkedWaitingForRelease(waiting.get()));
					held.unlock();
					long releasedAt = System.nanoTime();
					long acquired = acquiredAt.get(20, TimeUnit.SECONDS);
					assertThat(acquired).as("waiter on %s %s acquired", family, name).isPositive();
					assertThat(Duration.ofNanos(acquired - releasedAt)).as("wake-up for %s %s", family, name)
						.isLessThan(Duration.ofSeconds(2));
				}
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	@Test
	void aPerSlotRenewalBatchOfEveryKindAnswersEachHoldInItsPlace() {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		try {
			Duration shortLease = Duration.ofSeconds(2);
			List<HoldRef> batch = new ArrayList<>();
			List<Boolean> expected = new ArrayList<>();
			List<String> names = List.of("mix:0", "mix:1", "mix:2", "}mix", "mix:3", "}");
			for (int i = 0; i < names.size(); i++) {
				String name = names.get(i);
				for (HoldKind kind : HoldKind.values()) {
					// A writer of its own name: a reader of the same one would keep it out.
					String holdName = (kind == HoldKind.WRITE) ? "w" + name : name;
					int permits = (kind == HoldKind.PERMIT) ? 2 : 0;
					Acquisition taken = backend.acquire(new AcquireRequest(holdName, "o:1", 0, shortLease, Duration.ZERO,
							kind + "-" + i, kind, permits));
					assertThat(taken.status()).as("%s %s", kind, holdName).isEqualTo(Acquisition.Status.ACQUIRED);
					batch.add(new HoldRef(holdName, "o:1", taken.attemptId(), kind));
					expected.add(true);
					// An attempt that holds nothing (any more), between the live ones.
					batch.add(new HoldRef(holdName, "o:1", "gone-" + kind + "-" + i, kind));
					expected.add(false);
				}
			}
			assertThat(batch.stream().map(backend.calls()::slot).distinct().count()).as("slots in the batch")
				.isGreaterThan(6);

			assertThat(backend.renew(batch, Duration.ofSeconds(30), Duration.ofSeconds(10))).containsExactlyElementsOf(expected);
			for (String name : names) {
				for (HoldKind kind : HoldKind.values()) {
					String holdName = (kind == HoldKind.WRITE) ? "w" + name : name;
					assertThat(backend.remainingLease(holdName, kind)).as("lease of %s %s", kind, holdName)
						.isGreaterThan(shortLease);
				}
			}
		}
		finally {
			backend.close();
		}
	}

	@Test
	void theWatchdogKeepsHoldsOfEveryKindInManySlots() throws Exception {
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		// 3 s: renewals must not fall behind a lease on a loaded machine.
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(3), lost::add);
		RedisKeys keys = new RedisKeys("distlock", true);
		List<DistLock> locks = new ArrayList<>();
		Set<Integer> slots = new HashSet<>();
		for (String name : List.of("tick:0", "tick:1", "tick:2", "tick:3", "}tick", "}")) {
			locks.add(registry.getLock(name));
			locks.add(registry.getReadWriteLock(name).readLock());
			locks.add(registry.getReadWriteLock("w" + name).writeLock());
			locks.add(registry.getSemaphore(name, 3).asLock());
			slots.add(keys.slot(name));
			slots.add(keys.shared(HoldKind.Family.READ_WRITE, name).slot());
			slots.add(keys.shared(HoldKind.Family.READ_WRITE, "w" + name).slot());
			slots.add(keys.shared(HoldKind.Family.SEMAPHORE, name).slot());
		}
		assertThat(slots).as("slots of the holds").hasSizeGreaterThan(12);
		ExecutorService threads = Executors.newFixedThreadPool(locks.size());
		CountDownLatch allHeld = new CountDownLatch(locks.size());
		CountDownLatch release = new CountDownLatch(1);
		try {
			for (DistLock lock : locks) {
				threads.submit(() -> {
					lock.lock();
					try {
						allHeld.countDown();
						release.await();
					}
					finally {
						lock.unlock();
					}
					return null;
				});
			}
			assertThat(allHeld.await(30, TimeUnit.SECONDS)).isTrue();
			long before = registry.watchdogRenewals();
			// Five rounds (a third of a lease apart) outlast every lease taken before them.
			await().atMost(Duration.ofSeconds(30)).until(() -> registry.watchdogRenewals() >= before + 5L * locks.size());
			assertThat(lost).isEmpty();
			assertThat(registry.heldLocks()).hasSize(locks.size());
			assertThat(countKeys("distlock:rw:{*}")).as("read-write locks' states").isEqualTo(12);
			assertThat(countKeys("distlock:sem:{*}")).as("semaphores' states").isEqualTo(6);
		}
		finally {
			release.countDown();
			threads.shutdown();
			assertThat(threads.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
		}
		assertThat(registry.heldLocks()).isEmpty();
		assertThat(lost).isEmpty();
		assertThat(countKeys("distlock:rw:{*}") + countKeys("distlock:sem:{*}")).isZero();
	}

	/**
	 * The next grant for {@code owner}: a client's listeners of a lock hear every grant of that lock
	 * that reaches the client.
	 */
	private static LockNotice.Granted nextGrant(BlockingQueue<LockNotice> notices, String owner) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (System.nanoTime() < deadline) {
			LockNotice notice = notices.poll(100, TimeUnit.MILLISECONDS);
			if (notice instanceof LockNotice.Granted granted && granted.owner().equals(owner)) {
				return granted;
			}
		}
		throw new AssertionError("No grant for " + owner + " within 10 s");
	}

	/** @return a name of the family whose state hash lives on each master, in the masters' order */
	private List<String> sharedNamesOnEachMaster(HoldKind.Family family) {
		RedisKeys keys = new RedisKeys("distlock", true);
		List<String> names = new ArrayList<>();
		int masters = redisCluster.cluster().masters().size();
		for (int master = 0; master < masters; master++) {
			for (int i = 0;; i++) {
				if (masterOf(keys.shared(family, "wake:" + i).slot()) == master) {
					names.add("wake:" + i);
					break;
				}
			}
		}
		return names;
	}

	/** The masters own equal ranges of slots, in their order (see {@code RedisClusterProcess}). */
	private static int masterOf(int slot) {
		int masters = redisCluster.cluster().masters().size();
		return slot * masters / 16384;
	}

	/** @return the keys on the master of the slot */
	private Set<String> keysOnMasterOf(int slot) {
		RedisServerProcess master = redisCluster.cluster().masters().get(masterOf(slot));
		Set<String> found = new HashSet<>();
		master.query("KEYS", "distlock:*").lines().filter(line -> !line.isBlank()).forEach(found::add);
		return found;
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
