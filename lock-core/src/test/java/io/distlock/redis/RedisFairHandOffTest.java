package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.data.redis.connection.RedisConnection;

import io.distlock.DistLock;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.ReleaseRequest;
import io.distlock.testing.RedisServerExtension;

/**
 * The Redis backend's wait queue: a release hands the lock to the longest-waiting live owner across
 * clients, nobody barges past the queue, and owners that give up or vanish do not hold it up.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisFairHandOffTest {

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisServer);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void tearDown() throws Exception {
		this.threads.shutdownNow();
	}

	@Test
	void releaseHandsTheLockToWaitersOfOtherClientsInArrivalOrder() throws Exception {
		DistLock holder = this.clients.registry(Duration.ofSeconds(30)).getLock("fifo");
		holder.lock();
		long firstToken = holder.getFencingToken();
		List<String> order = new CopyOnWriteArrayList<>();
		List<Long> tokens = new CopyOnWriteArrayList<>();
		List<Future<?>> waiters = new ArrayList<>();
		for (String client : List.of("b", "c", "d", "e")) {
			DistLock lock = this.clients.registry(Duration.ofSeconds(30)).getLock("fifo");
			long queuedBefore = queueLength("fifo");
			waiters.add(this.threads.submit(() -> {
				lock.lock();
				try {
					order.add(client);
					tokens.add(lock.getFencingToken());
				}
				finally {
					lock.unlock();
				}
				return null;
			}));
			// Each waiter is queued in Redis before the next one starts, so arrival order is known.
			await().atMost(Duration.ofSeconds(10)).until(() -> queueLength("fifo") == queuedBefore + 1);
		}
		holder.unlock();
		for (Future<?> waiter : waiters) {
			waiter.get(20, TimeUnit.SECONDS);
		}
		assertThat(order).containsExactly("b", "c", "d", "e");
		assertThat(tokens).isSorted().doesNotHaveDuplicates().allSatisfy(token -> assertThat(token).isGreaterThan(firstToken));
		// Hand-offs write the counter, so later tokens rest on it, not on a clock a failover may set back.
		assertThat(this.clients.redis().opsForValue().get("distlock:fencing")).isEqualTo(Long.toString(tokens.get(3)));
		assertThat(lockState("fifo")).isEmpty();
	}

	/**
	 * A hand-off is announced on the channel of the client whose owner it is for: with four clients
	 * waiting, each hand-off reaches one client and none is broadcast on the lock's channel. Each
	 * waiter takes its hand-off from that message: without it, it would learn of the hand-off only
	 * when it calls again, half its place's time (2 s) after its last call.
	 */
	@Test
	void eachHandOffIsAnnouncedOnlyToTheClientItIsFor() throws Exception {
		List<String[]> published = new CopyOnWriteArrayList<>();
		RedisConnection observer = this.clients.connectionFactory().getConnection();
		observer.pSubscribe((message, pattern) -> published.add(new String[] {
				new String(message.getChannel(), StandardCharsets.UTF_8), new String(message.getBody(), StandardCharsets.UTF_8) }),
				"distlock:*".getBytes(StandardCharsets.UTF_8));
		try {
			DistLock holder = this.clients.registry(Duration.ofSeconds(30)).getLock("one-client");
			holder.lock();
			List<String> clientIds = new ArrayList<>();
			List<Future<Long>> waiters = new ArrayList<>();
			AtomicLong releasedAt = new AtomicLong();
			for (int i = 0; i < 4; i++) {
				RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(30));
				clientIds.add(registry.options().clientId());
				DistLock lock = registry.getLock("one-client");
				long queuedBefore = queueLength("one-client");
				waiters.add(this.threads.submit(() -> {
					lock.lock();
					long waitedSinceTheRelease = System.nanoTime() - releasedAt.get();
					releasedAt.set(System.nanoTime());
					lock.unlock();
					return waitedSinceTheRelease;
				}));
				await().atMost(Duration.ofSeconds(10)).until(() -> queueLength("one-client") == queuedBefore + 1);
			}
			releasedAt.set(System.nanoTime());
			holder.unlock();
			for (Future<Long> waiter : waiters) {
				assertThat(Duration.ofNanos(waiter.get(20, TimeUnit.SECONDS))).as("taken from the message")
					.isLessThan(Duration.ofMillis(1500));
			}
			// Messages reach a subscriber in the order they were published: once this one is in, all are.
			this.clients.redis().convertAndSend("distlock:end-of-test", "end");
			await().atMost(Duration.ofSeconds(5)).until(() -> published.stream().anyMatch(m -> m[1].equals("end")));
			List<String> grantChannels = published.stream().filter(m -> m[1].startsWith("grant ")).map(m -> m[0]).toList();
			assertThat(grantChannels).as("one hand-off to each waiting client, on that client's channel")
				.containsExactlyElementsOf(clientIds.stream().map(id -> "distlock:grants:" + id).toList());
			assertThat(published).filteredOn(m -> m[0].equals("distlock:{one-client}:released"))
				.as("the last release, which nobody was queued for, announces nothing")
				.isEmpty();
			for (String[] grant : published.stream().filter(m -> m[1].startsWith("grant ")).toList()) {
				String owner = grant[1].split(" ")[2];
				assertThat(grant[0]).isEqualTo("distlock:grants:" + owner.substring(0, owner.indexOf(':')));
				assertThat(grant[1]).endsWith(" distlock:{one-client}:released");
			}
		}
		finally {
			observer.close();
		}
	}

	@Test
	void aFreshCallerCannotBargePastQueuedWaiters() throws Exception {
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(30));
		DistLock holder = registry.getLock("no-barging");
		holder.lock();
		CountDownLatch waiterHolds = new CountDownLatch(1);
		CountDownLatch mayRelease = new CountDownLatch(1);
		DistLock other = this.clients.registry(Duration.ofSeconds(30)).getLock("no-barging");
		Future<?> waiter = this.threads.submit(() -> {
			other.lock();
			waiterHolds.countDown();
			mayRelease.await();
			other.unlock();
			return null;
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> queueLength("no-barging") == 1);
		holder.unlock();
		// The release handed the lock over; the releasing thread cannot take it back, even without waiting.
		assertThat(holder.tryLock()).isFalse();
		assertThat(waiterHolds.await(10, TimeUnit.SECONDS)).isTrue();
		mayRelease.countDown();
		waiter.get(10, TimeUnit.SECONDS);
		assertThat(holder.tryLock(Duration.ofSeconds(10))).isTrue();
		holder.unlock();
	}

	@Test
	void aWaiterThatTimesOutLeavesTheQueue() throws Exception {
		DistLock holder = this.clients.registry(Duration.ofSeconds(30)).getLock("impatient");
		holder.lock();
		DistLock other = this.clients.registry(Duration.ofSeconds(30)).getLock("impatient");
		assertThat(this.threads.submit(() -> other.tryLock(Duration.ofMillis(300))).get(10, TimeUnit.SECONDS)).isFalse();
		assertThat(queueLength("impatient")).isZero();
		holder.unlock();
		assertThat(this.clients.redis().hasKey("distlock:{impatient}")).as("freed, not handed to the departed waiter").isFalse();
	}

	@Test
	void aLockHandedToAnOwnerThatGaveUpMeanwhileIsPassedOn() {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		Duration lease = Duration.ofSeconds(30);
		Duration queueFor = Duration.ofSeconds(10);
		assertThat(backend.acquire(AcquireRequest.of("gave-up", "a:1", 0, lease)).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(backend.acquire(new AcquireRequest("gave-up", "b:1", 0, lease, queueFor, "t")).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(backend.acquire(new AcquireRequest("gave-up", "c:1", 0, lease, queueFor, "t")).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(backend.release(ReleaseRequest.of("gave-up", "a:1", 1))).isEqualTo(Release.RELEASED);
		assertThat(backend.isHeldBy("gave-up", "b:1")).as("handed to the first in line").isTrue();

		// b's thread stopped waiting before it heard of the hand-off: leaving passes the lock to c.
		backend.leaveQueue("gave-up", "b:1", "t", true);
		assertThat(backend.isHeldBy("gave-up", "b:1")).isFalse();
		assertThat(backend.isHeldBy("gave-up", "c:1")).isTrue();
		// c learns of it on its next call (e.g. after a lost message) without counting it twice.
		assertThat(backend.acquire(new AcquireRequest("gave-up", "c:1", 0, lease, queueFor, "t")).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(backend.release(ReleaseRequest.of("gave-up", "c:1", 1))).isEqualTo(Release.RELEASED);
		assertThat(lockState("gave-up")).isEmpty();
		backend.close();
	}

	@Test
	void aVanishedWaitersPlaceLapsesAndIsSkipped() {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		Duration lease = Duration.ofSeconds(30);
		assertThat(backend.acquire(AcquireRequest.of("lapsed", "a:1", 0, lease)).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		// A waiter that crashed: its place was good for 300 ms and was never renewed.
		assertThat(backend.acquire(new AcquireRequest("lapsed", "crashed:1", 0, lease, Duration.ofMillis(300), "t")).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(backend.acquire(new AcquireRequest("lapsed", "c:1", 0, lease, Duration.ofSeconds(10), "t")).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(queueLength("lapsed")).isEqualTo(2);
		await().atMost(Duration.ofSeconds(5)).until(() -> lapsedFor("lapsed", "crashed:1"));
		assertThat(backend.release(ReleaseRequest.of("lapsed", "a:1", 1))).isEqualTo(Release.RELEASED);
		assertThat(backend.isHeldBy("lapsed", "crashed:1")).isFalse();
		assertThat(backend.isHeldBy("lapsed", "c:1")).isTrue();
		backend.close();
	}

	@Test
	void aHandOffLastsOnlyAQueuePlaceUntilTheNewHolderExtendsIt() throws Exception {
		// Backend level: nobody takes the hold up, as when the waiter's instance died a moment ago.
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		Duration lease = Duration.ofSeconds(30);
		backend.acquire(AcquireRequest.of("provisional", "a:1", 0, lease));
		backend.acquire(new AcquireRequest("provisional", "vanished:1", 0, lease, Duration.ofSeconds(10), "t"));
		assertThat(backend.release(ReleaseRequest.of("provisional", "a:1", 1))).isEqualTo(Release.RELEASED);
		assertThat(backend.isHeldBy("provisional", "vanished:1")).isTrue();
		assertThat(backend.remainingLease("provisional")).isLessThanOrEqualTo(io.distlock.core.LockBackend.QUEUE_PLACE);
		backend.close();

		// Engine level: the live waiter that takes a hand-off up extends it to its watchdog lease.
		DistLock holder = this.clients.registry(Duration.ofSeconds(30)).getLock("extended");
		holder.lock();
		DistLock waiter = this.clients.registry(Duration.ofSeconds(30)).getLock("extended");
		CountDownLatch taken = new CountDownLatch(1);
		CountDownLatch mayRelease = new CountDownLatch(1);
		Future<?> waiting = this.threads.submit(() -> {
			waiter.lock();
			taken.countDown();
			mayRelease.await();
			waiter.unlock();
			return null;
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> queueLength("extended") == 1);
		holder.unlock();
		assertThat(taken.await(10, TimeUnit.SECONDS)).isTrue();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> holder.remainingLease().compareTo(io.distlock.core.LockBackend.QUEUE_PLACE) > 0);
		mayRelease.countDown();
		waiting.get(10, TimeUnit.SECONDS);
	}

	@Test
	void aHandedOverExplicitLeaseEndsItsLeaseAfterTheHandOffNotAfterTheExtension() throws Exception {
		// The extension lands a quarter of a queue place after the hand-off: asking for the whole lease
		// then would keep a crashed holder's lock about a second longer than it asked for.
		Duration lease = Duration.ofSeconds(6);
		DistLock holder = this.clients.registry(Duration.ofSeconds(30)).getLock("explicit-handed");
		holder.lock();
		DistLock waiter = this.clients.registry(Duration.ofSeconds(30)).getLock("explicit-handed");
		CountDownLatch mayRelease = new CountDownLatch(1);
		long[] takenAt = new long[1];
		Future<?> waiting = this.threads.submit(() -> {
			assertThat(waiter.tryLock(Duration.ofSeconds(20), lease)).isTrue();
			takenAt[0] = System.nanoTime();
			mayRelease.await();
			waiter.unlock();
			return null;
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> queueLength("explicit-handed") == 1);
		holder.unlock();
		// Extended: more left than the provisional lease (a queue place) could give.
		await().atMost(Duration.ofSeconds(10)).until(() -> takenAt[0] != 0
				&& leftAfter(holder, takenAt[0]) > io.distlock.core.LockBackend.QUEUE_PLACE.toMillis() + 200);
		assertThat(leftAfter(holder, takenAt[0])).as("ms from the take-up to the end of the hold's lease")
			.isLessThanOrEqualTo(lease.toMillis() + 50);
		mayRelease.countDown();
		waiting.get(10, TimeUnit.SECONDS);
	}

	/** @return how long after {@code takenAt} the lock's lease ends, in ms, as Redis says now */
	private static long leftAfter(DistLock lock, long takenAt) {
		long left = lock.remainingLease().toMillis();
		return left + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - takenAt);
	}

	@Test
	void closingAClientTakesItsWaitersOutOfTheQueue() throws Exception {
		DistLock holder = this.clients.registry(Duration.ofSeconds(30)).getLock("closing");
		holder.lock();
		RedisLockRegistry closing = this.clients.registry(Duration.ofSeconds(30));
		Future<?> waiting = this.threads.submit(() -> {
			closing.getLock("closing").lock();
			return null;
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> queueLength("closing") == 1);
		closing.close();
		assertThat(queueLength("closing")).isZero();
		assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class)
			.hasMessageContaining("closed");
		holder.unlock();
		assertThat(this.clients.redis().hasKey("distlock:{closing}")).as("freed, not handed to the closed client").isFalse();
	}

	/** The lock's keys but its owners' release markers, which lapse by themselves within 30 s. */
	private Set<String> lockState(String name) {
		Set<String> keys = new TreeSet<>(this.clients.redis().keys("distlock:{" + name + "}*"));
		keys.removeIf(key -> key.startsWith("distlock:{" + name + "}:released:"));
		return keys;
	}

	private long queueLength(String name) {
		Long length = this.clients.redis().opsForList().size("distlock:{" + name + "}:queue");
		return (length != null) ? length : 0;
	}

	private boolean lapsedFor(String name, String owner) {
		Object entry = this.clients.redis().opsForHash().get("distlock:{" + name + "}:queued", owner);
		return entry != null && Long.parseLong(entry.toString().split(":")[0]) < redisMillis();
	}

	private long redisMillis() {
		Long millis = this.clients.redis().execute((org.springframework.data.redis.core.RedisCallback<Long>) connection -> connection
			.serverCommands()
			.time(TimeUnit.MILLISECONDS));
		return (millis != null) ? millis : 0;
	}

}
