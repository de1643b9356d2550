package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongPredicate;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.LockListener;
import io.distlock.LockLostException;
import io.distlock.LostHold;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisSentinelGroup;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.ClosedAfterEach;

/**
 * Locks through Redis Sentinel ({@code spring.data.redis.sentinel.*}: a Lettuce connection factory
 * over a {@link RedisSentinelConfiguration}) while the master is SIGKILLed and the sentinels promote
 * its replica.
 *
 * <p>Replication is asynchronous, and a hold whose lease runs out during the failover is gone, so a
 * failover may let a second holder in; the test does not pretend otherwise. It asserts what must hold
 * (locks work again for every client, fencing tokens still grow from one hold to the next, a hold
 * under the default watchdog lease survives, no thread is stuck) and logs what was lost: holds,
 * overlapping holders (told of the loss or not), counter updates.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RedisSentinelFailoverTest {

	private static final Logger log = LoggerFactory.getLogger(RedisSentinelFailoverTest.class);

	/** The locks the workers take in turn, each for a few milliseconds. */
	private static final List<String> KEYS = List.of("failover-a", "failover-b", "failover-c");

	/** Held from before the kill until locks work again, under {@link #WATCHDOG_TIMEOUT}, and tried all along by a rival. */
	private static final String SHORT_LEASE_KEY = "failover-short-lease";

	/** Held like {@link #SHORT_LEASE_KEY}, under the default watchdog lease, and tried all along by a rival. */
	private static final String DEFAULT_LEASE_KEY = "failover-default-lease";

	private static final int CLIENTS = 3;

	private static final int THREADS_PER_CLIENT = 2;

	/** Renewed every second: shorter than the failover plus the client's reconnect. */
	private static final Duration WATCHDOG_TIMEOUT = Duration.ofSeconds(3);

	private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

	private static final Duration WAIT = Duration.ofSeconds(1);

	/** Holds each client completes before the kill, and again after the new master is announced. */
	private static final int HOLDS_PER_PHASE = 20;

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void tearDown() throws Exception {
		this.threads.shutdownNow();
	}

	@Test
	void afterTheMasterIsKilledLocksWorkAgainTokensStillGrowAndADefaultLeaseHoldSurvives() throws Exception {
		RedisSentinelGroup group = RedisSentinelGroup.start();
		this.opened.add(group);
		Run run = new Run();
		List<RedisLockRegistry> clients = new ArrayList<>();
		for (int c = 0; c < CLIENTS; c++) {
			clients.add(client(group, WATCHDOG_TIMEOUT, run.lostHolds::add));
		}
		AtomicBoolean running = new AtomicBoolean(true);
		CountDownLatch go = new CountDownLatch(1);
		List<Future<?>> workers = new ArrayList<>();
		for (int c = 0; c < CLIENTS; c++) {
			for (int t = 0; t < THREADS_PER_CLIENT; t++) {
				int client = c;
				String owner = "client" + c + "-thread" + t;
				workers.add(this.threads.submit(() -> {
					go.await();
					work(clients.get(client), client, owner, KEYS, running, run);
					return null;
				}));
			}
		}
		CountDownLatch longHeld = new CountDownLatch(2);
		CountDownLatch releaseLong = new CountDownLatch(1);
		LongHold shortLease = new LongHold(SHORT_LEASE_KEY, "short-lease-holder");
		LongHold defaultLease = new LongHold(DEFAULT_LEASE_KEY, "default-lease-holder");
		for (LongHold hold : List.of(shortLease, defaultLease)) {
			Duration lease = (hold == shortLease) ? WATCHDOG_TIMEOUT : LockEngineOptions.DEFAULT_WATCHDOG_TIMEOUT;
			DistLock lock = client(group, lease, run.lostHolds::add).getLock(hold.key);
			workers.add(this.threads.submit(() -> {
				holdAcrossFailover(lock, hold, longHeld, releaseLong, run);
				return null;
			}));
		}
		workers.add(this.threads.submit(() -> {
			go.await();
			work(clients.get(1), 1, "client1-rival", List.of(SHORT_LEASE_KEY), running, run);
			return null;
		}));
		workers.add(this.threads.submit(() -> {
			go.await();
			work(clients.get(2), 2, "client2-rival", List.of(DEFAULT_LEASE_KEY), running, run);
			return null;
		}));

		assertThat(longHeld.await(20, TimeUnit.SECONDS)).as("the long holds are taken").isTrue();
		go.countDown();
		boolean stopped;
		try {
			await().atMost(Duration.ofSeconds(20))
				.alias("every client holds locks before the kill")
				.until(() -> run.history.fewestHoldsPerClient(start -> true) >= HOLDS_PER_PHASE);
			RedisServerProcess former = group.master();
			run.formerPort = former.port();
			run.killedAt = System.nanoTime();
			former.kill();
			run.promotedPort = group.awaitNewMaster(former, Duration.ofSeconds(30)).port();
			run.announcedAt = System.nanoTime();
			await().atMost(Duration.ofSeconds(30))
				.alias("every client holds locks again after the failover")
				.until(() -> run.history.fewestHoldsPerClient(start -> start > run.announcedAt) >= HOLDS_PER_PHASE);
		}
		finally {
			releaseLong.countDown();
			running.set(false);
			// Each worker's last round is bounded by the wait, the command timeout and the critical section.
			stopped = awaitEnd(workers, Duration.ofSeconds(15));
			// Also when a phase failed: the figures tell where it stopped.
			log.info(run.summary(shortLease, defaultLease));
		}
		assertThat(stopped).as("every worker ended within 15 s of being told to stop").isTrue();
		for (Future<?> worker : workers) {
			worker.get();
		}
		assertThat(run.history.tokensNotGrowing()).as("holds whose token is not above that of a hold of the same lock "
				+ "that ended before they began (of %d holds)", run.history.size()).isEmpty();
		assertThat(defaultLease.outcome).as("the hold under the default watchdog lease of %s, across a failover of %s",
				LockEngineOptions.DEFAULT_WATCHDOG_TIMEOUT, run.failoverTime()).isEqualTo("kept");
		assertThat(run.history.overlaps(DEFAULT_LEASE_KEY)).as("holds of %s beside the one that kept it",
				DEFAULT_LEASE_KEY).isEmpty();
	}

	@Test
	void holdHistoryFindsOverlappingHoldersAndTokensThatDoNotGrow() {
		HoldHistory history = new HoldHistory();
		history.add(new Hold("k", 0, "a", 10, 0, 5));
		history.add(new Hold("k", 1, "b", 20, 6, 9));
		// Inside b's critical section: its smaller token is no violation, the overlap is.
		history.add(new Hold("k", 2, "c", 15, 8, 12));
		// Began after b ended, yet drew a smaller token.
		history.add(new Hold("k", 0, "a", 18, 13, 14));

		assertThat(history.overlaps("k")).singleElement().asString().contains("b on k").contains("c on k");
		assertThat(history.tokensNotGrowing()).singleElement()
			.asString()
			.contains("a on k with token 18")
			.contains("b on k with token 20");
	}

	@Test
	void holdHistoryAcceptsAnEqualTokenOnlyFromTheOwnerThatTakesItsHoldUpAgain() {
		HoldHistory history = new HoldHistory();
		history.add(new Hold("k", 0, "a", 7, 0, 5));
		history.add(new Hold("k", 0, "a", 7, 6, 9));
		assertThat(history.tokensNotGrowing()).isEmpty();
		assertThat(history.retaken()).isOne();

		history.add(new Hold("k", 1, "b", 7, 10, 12));
		assertThat(history.tokensNotGrowing()).hasSize(2).allSatisfy(violation -> assertThat(violation).startsWith("b on k"));
	}

	/** An independent client, configured as {@code spring.data.redis.sentinel.*} would configure it. */
	private RedisLockRegistry client(RedisSentinelGroup group, Duration watchdogTimeout, LockListener listener) {
		RedisSentinelConfiguration sentinel = new RedisSentinelConfiguration(group.masterName(),
				new HashSet<>(group.sentinelNodes()));
		LettuceConnectionFactory factory = new LettuceConnectionFactory(sentinel,
				LettuceClientConfiguration.builder().commandTimeout(COMMAND_TIMEOUT).build());
		factory.afterPropertiesSet();
		factory.start();
		this.opened.add(factory::destroy);
		RedisLockRegistry registry = new RedisLockRegistry(factory, "distlock",
				LockEngineOptions.builder().watchdogTimeout(watchdogTimeout).listener(listener).build());
		this.opened.add(registry);
		return registry;
	}

	private static void holdAcrossFailover(DistLock lock, LongHold hold, CountDownLatch held, CountDownLatch release,
			Run run) throws InterruptedException {
		assertThat(lock.tryLock(Duration.ofSeconds(10))).isTrue();
		long start = System.nanoTime();
		long token = lock.getFencingToken();
		AtomicLong counter = run.counters.computeIfAbsent(hold.key, k -> new AtomicLong());
		long read = counter.get();
		held.countDown();
		release.await();
		counter.set(read + 1);
		run.history.add(new Hold(hold.key, Hold.NO_CLIENT, hold.owner, token, start, System.nanoTime()));
		try {
			lock.unlock();
			hold.outcome = "kept";
		}
		catch (LockLostException ex) {
			hold.outcome = "lost (" + ex.getLostHold().reason() + ")";
		}
		catch (RuntimeException ex) {
			hold.outcome = "unlock failed (" + ex + ")";
		}
	}

	private static void work(RedisLockRegistry registry, int client, String owner, List<String> keys,
			AtomicBoolean running, Run run) throws InterruptedException {
		for (int i = 0; running.get(); i++) {
			String key = keys.get(i % keys.size());
			DistLock lock = registry.getLock(key);
			boolean acquired;
			try {
				acquired = lock.tryLock(WAIT);
			}
			catch (LockBackendException ex) {
				run.acquireFailed.increment();
				// A backend that fails fast (rather than after the command timeout) must not make this a busy loop.
				Thread.sleep(50);
				continue;
			}
			if (!acquired) {
				run.acquireTimedOut.increment();
				continue;
			}
			long start = System.nanoTime();
			long token;
			try {
				// Issued on request: one more round trip, which a failover in progress can fail.
				token = lock.getFencingToken();
			}
			catch (LockBackendException | LockLostException ex) {
				// No token, no write: the hold is in doubt. Counted as an acquisition that failed.
				run.acquireFailed.increment();
				try {
					lock.unlock();
				}
				catch (RuntimeException releaseFailed) {
					// It expires within its lease.
				}
				Thread.sleep(50);
				continue;
			}
			// A read-modify-write that loses updates whenever two holders overlap.
			AtomicLong counter = run.counters.computeIfAbsent(key, k -> new AtomicLong());
			long read = counter.get();
			Thread.sleep(ThreadLocalRandom.current().nextInt(1, 10));
			counter.set(read + 1);
			run.history.add(new Hold(key, client, owner, token, start, System.nanoTime()));
			try {
				lock.unlock();
			}
			catch (LockLostException ex) {
				run.unlockLost.increment();
			}
			catch (RuntimeException ex) {
				// LockBackendException, or whatever else a release that cannot reach Redis throws: counted
				// and named in the summary, so that the worker lives on to show whether locks work again.
				run.unlockFailed.increment();
				String message = String.valueOf(ex.getMessage());
				run.unlockFailures.add(ex.getClass().getSimpleName() + ": " + message.substring(0, Math.min(80, message.length())));
			}
		}
	}

	private static boolean awaitEnd(List<Future<?>> workers, Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		for (Future<?> worker : workers) {
			try {
				worker.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			}
			catch (ExecutionException ex) {
				// Ended; the caller's get() reports how.
			}
			catch (TimeoutException ex) {
				return false;
			}
		}
		return true;
	}

	private static long millis(long nanos) {
		return TimeUnit.NANOSECONDS.toMillis(nanos);
	}

	/** One hold taken before the kill and released once locks work again, and how it ended. */
	private static final class LongHold {

		final String key;

		final String owner;

		volatile String outcome = "not released";

		LongHold(String key, String owner) {
			this.key = key;
			this.owner = owner;
		}

	}

	/** What happened during the run, and when. */
	private static final class Run {

		final HoldHistory history = new HoldHistory();

		final Queue<LostHold> lostHolds = new ConcurrentLinkedQueue<>();

		/** One counter per lock, incremented by read-modify-write in the critical sections. */
		final Map<String, AtomicLong> counters = new ConcurrentHashMap<>();

		final LongAdder acquireFailed = new LongAdder();

		final LongAdder acquireTimedOut = new LongAdder();

		final LongAdder unlockLost = new LongAdder();

		final LongAdder unlockFailed = new LongAdder();

		final Set<String> unlockFailures = ConcurrentHashMap.newKeySet();

		volatile int formerPort;

		volatile int promotedPort;

		volatile long killedAt = Long.MAX_VALUE;

		volatile long announcedAt = Long.MAX_VALUE;

		String failoverTime() {
			long killed = this.killedAt;
			long announced = this.announcedAt;
			return (killed == Long.MAX_VALUE || announced == Long.MAX_VALUE) ? "(not reached)"
					: millis(announced - killed) + " ms";
		}

		/** Whether the registry told its listeners that this hold was lost. */
		boolean reportedLost(Hold hold) {
			return this.lostHolds.stream()
				.anyMatch(lost -> lost.lockName().equals(hold.key()) && lost.fencingToken() == hold.token());
		}

		String summary(LongHold shortLease, LongHold defaultLease) {
			long killed = this.killedAt;
			long announced = this.announcedAt;
			List<Hold[]> overlaps = this.history.overlappingPairs();
			long told = overlaps.stream().filter(pair -> reportedLost(pair[0]) || reportedLost(pair[1])).count();
			List<String> silent = overlaps.stream()
				.filter(pair -> !reportedLost(pair[0]) && !reportedLost(pair[1]))
				.map(pair -> pair[0] + " and " + pair[1])
				.toList();
			long counted = this.counters.values().stream().mapToLong(AtomicLong::get).sum();
			List<Long> gaps = IntStream.range(0, CLIENTS)
				.mapToObj(client -> millis(this.history.longestGapBetweenHolds(client)))
				.toList();
			return String.format("Sentinel failover: master on port %d SIGKILLed; sentinels named port %d after %s; "
					+ "longest time without a new hold, per client: %s ms. Holds before the kill %d, during the failover "
					+ "%d, after it %d (fewest of one client %d). Holds reported lost to listeners %d; unlock threw "
					+ "LockLostException %d, failed otherwise %d %s; tryLock threw LockBackendException %d, timed out "
					+ "%d; holds taken up again after a failed unlock %d. Hold across the failover under a %s lease: "
					+ "%s; under a %s lease: %s. Overlapping holds %d, of which with a hold reported lost %d, silent "
					+ "%d %s; counter updates lost %d of %d", this.formerPort, this.promotedPort, failoverTime(), gaps,
					this.history.count(start -> start < killed),
					this.history.count(start -> start >= killed && start <= announced),
					this.history.count(start -> start > announced), this.history.fewestHoldsPerClient(start -> start > announced),
					this.lostHolds.size(), this.unlockLost.sum(), this.unlockFailed.sum(), this.unlockFailures,
					this.acquireFailed.sum(), this.acquireTimedOut.sum(), this.history.retaken(), WATCHDOG_TIMEOUT,
					shortLease.outcome, LockEngineOptions.DEFAULT_WATCHDOG_TIMEOUT, defaultLease.outcome,
					overlaps.size(), told, silent.size(), silent, this.history.size() - counted, this.history.size());
		}

	}

	/**
	 * One critical section as its owner saw it, from {@code tryLock} returning to just before
	 * {@code unlock}, in {@link System#nanoTime()}: every client runs in this JVM, so the times compare.
	 */
	private record Hold(String key, int client, String owner, long token, long startNanos, long endNanos) {

		/** The client index of the long holders, which have clients of their own. */
		static final int NO_CLIENT = -1;

		boolean overlaps(Hold other) {
			return this.startNanos < other.endNanos && other.startNanos < this.endNanos;
		}

		@Override
		public String toString() {
			return this.owner + " on " + this.key + " with token " + this.token;
		}

	}

	/** Every hold of the run, and what can be checked across them. */
	private static final class HoldHistory {

		private final Queue<Hold> holds = new ConcurrentLinkedQueue<>();

		void add(Hold hold) {
			this.holds.add(hold);
		}

		long size() {
			return this.holds.size();
		}

		long count(LongPredicate start) {
			return this.holds.stream().filter(hold -> start.test(hold.startNanos())).count();
		}

		long fewestHoldsPerClient(LongPredicate start) {
			long[] counts = new long[CLIENTS];
			this.holds.stream()
				.filter(hold -> hold.client() != Hold.NO_CLIENT && start.test(hold.startNanos()))
				.forEach(hold -> counts[hold.client()]++);
			return java.util.Arrays.stream(counts).min().orElse(0);
		}

		/** @return the longest time between one hold of the client beginning and its next one beginning */
		long longestGapBetweenHolds(int client) {
			long[] starts = this.holds.stream()
				.filter(hold -> hold.client() == client)
				.mapToLong(Hold::startNanos)
				.sorted()
				.toArray();
			long longest = 0;
			for (int i = 1; i < starts.length; i++) {
				longest = Math.max(longest, starts[i] - starts[i - 1]);
			}
			return longest;
		}

		/** @return pairs of holds of one lock by different owners whose critical sections intersect */
		List<Hold[]> overlappingPairs() {
			List<Hold[]> overlaps = new ArrayList<>();
			for (List<Hold> holds : byKey().values()) {
				for (int i = 0; i < holds.size(); i++) {
					for (int j = i + 1; j < holds.size(); j++) {
						Hold a = holds.get(i);
						Hold b = holds.get(j);
						if (!a.owner().equals(b.owner()) && a.overlaps(b)) {
							overlaps.add(new Hold[] { a, b });
						}
					}
				}
			}
			return overlaps;
		}

		/** @return the {@link #overlappingPairs() overlapping pairs} of one lock, in words */
		List<String> overlaps(String key) {
			return overlappingPairs().stream()
				.filter(pair -> pair[0].key().equals(key))
				.map(pair -> pair[0] + " and " + pair[1])
				.toList();
		}

		/**
		 * @return holds whose token is not above the token of a hold of the same lock that ended
		 * before they began: the guarantee fencing tokens give, failover or not. The one exception is
		 * {@link #retaken() a hold taken up again}.
		 */
		List<String> tokensNotGrowing() {
			List<String> violations = new ArrayList<>();
			for (List<Hold> holds : byKey().values()) {
				for (Hold later : holds) {
					for (Hold earlier : holds) {
						if (earlier.endNanos() < later.startNanos() && later.token() <= earlier.token()
								&& !isRetaken(earlier, later)) {
							violations.add(later + " began " + millis(later.startNanos() - earlier.endNanos())
									+ " ms after " + earlier + " ended");
						}
					}
				}
			}
			return violations;
		}

		/**
		 * An unlock that could not reach Redis leaves the hold on the server until its lease runs out;
		 * if the same thread locks again before that, it takes up that very hold, token and all. Nobody
		 * can have held the lock in between, so the equal token fences nothing wrongly.
		 * @return how many holds took up an earlier hold of their owner
		 */
		long retaken() {
			return byKey().values()
				.stream()
				.mapToLong(holds -> holds.stream()
					.filter(later -> holds.stream()
						.anyMatch(earlier -> earlier.endNanos() < later.startNanos() && isRetaken(earlier, later)))
					.count())
				.sum();
		}

		private static boolean isRetaken(Hold earlier, Hold later) {
			return later.owner().equals(earlier.owner()) && later.token() == earlier.token();
		}

		private Map<String, List<Hold>> byKey() {
			return this.holds.stream()
				.sorted(Comparator.comparingLong(Hold::startNanos))
				.collect(Collectors.groupingBy(Hold::key));
		}

	}

}
