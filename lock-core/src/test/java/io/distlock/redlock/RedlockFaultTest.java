package io.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.embedded.RedisServerProcess;

/**
 * Redlock against real failures of its five masters: dead nodes, a node restarted empty, a frozen
 * node.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedlockFaultTest {

	/** For the tests about the node timeout itself; the others keep the more forgiving default. */
	/**
	 * Short enough to tell a node timeout from Lettuce's command timeout (2 s here), long enough that
	 * a live node on a loaded machine answers within it.
	 */
	private static final RedlockSettings SHORT_NODE_TIMEOUT = new RedlockSettings(Duration.ofMillis(400),
			RedlockNodes.SETTINGS.clockDriftFactor(), RedlockNodes.SETTINGS.retryDelay(),
			RedlockNodes.SETTINGS.retryJitter());

	private static RedlockNodes nodes;

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@BeforeAll
	static void startNodes() {
		nodes = new RedlockNodes(5);
	}

	@AfterAll
	static void stopNodes() throws Exception {
		nodes.close();
	}

	@BeforeEach
	void freshNodes() {
		nodes.flushAll();
	}

	@AfterEach
	void tearDown() throws Exception {
		this.threads.shutdownNow();
		nodes.closeClients();
	}

	private RedisServerProcess node(int index) {
		return nodes.servers().get(index);
	}

	@Test
	void withTwoNodesDeadLocksAreStillTakenAndExclusiveAcrossClients() throws Exception {
		List<RedlockLockRegistry> clients = List.of(nodes.client(Duration.ofSeconds(30)), nodes.client(Duration.ofSeconds(30)));
		node(0).kill();
		node(1).kill();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		long[] counter = new long[1];
		CountDownLatch go = new CountDownLatch(1);
		List<Future<?>> workers = new ArrayList<>();
		for (RedlockLockRegistry client : clients) {
			for (int t = 0; t < 3; t++) {
				workers.add(this.threads.submit(() -> {
					go.await();
					DistLock lock = client.getLock("two-down");
					for (int i = 0; i < 60; i++) {
						assertThat(lock.tryLock(Duration.ofSeconds(20))).isTrue();
						try {
							if (inside.incrementAndGet() > 1) {
								overlaps.incrementAndGet();
							}
							long read = counter[0];
							Thread.yield();
							counter[0] = read + 1;
							inside.decrementAndGet();
						}
						finally {
							lock.unlock();
						}
					}
					return null;
				}));
			}
		}
		go.countDown();
		for (Future<?> worker : workers) {
			worker.get(100, TimeUnit.SECONDS);
		}
		assertThat(overlaps).hasValue(0);
		assertThat(counter[0]).isEqualTo(2 * 3 * 60);
	}

	@Test
	void withThreeNodesDeadAcquisitionFailsWithinItsWaitAndLeavesNoNodeHolding() {
		DistLock lock = nodes.client(Duration.ofSeconds(30), SHORT_NODE_TIMEOUT).getLock("three-down");
		node(0).kill();
		node(1).kill();
		node(2).kill();
		long start = System.nanoTime();
		assertThatThrownBy(() -> lock.tryLock(Duration.ofSeconds(1))).isInstanceOf(LockBackendException.class)
			.hasMessageContaining("'three-down'")
			// A live node that is slow on a loaded machine may be counted too.
			.hasMessageMatching("(?s).*[345] of 5 Redlock nodes did not answer.*")
			.hasMessageContaining("no quorum of 3 is possible");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
		assertThat(lock.getHoldCount()).isZero();
		await().atMost(Duration.ofSeconds(5))
			.until(() -> node(3).command("EXISTS", "distlock:{three-down}").equals(":0")
					&& node(4).command("EXISTS", "distlock:{three-down}").equals(":0"));
	}

	@Test
	void nodesRestartedEmptyDoNotLetASecondClientInWhileTheFirstHoldsAQuorum() throws Exception {
		DistLock first = nodes.client(Duration.ofSeconds(30)).getLock("restarted");
		DistLock second = nodes.client(Duration.ofSeconds(30)).getLock("restarted");
		first.lock();

		node(0).restart();
		assertThat(tryFromAnotherThread(second, Duration.ofMillis(300))).isFalse();
		node(1).restart();
		assertThat(tryFromAnotherThread(second, Duration.ofMillis(300))).isFalse();

		first.unlock();
		assertThat(tryFromAnotherThread(second, Duration.ofSeconds(5))).isTrue();
	}

	@Test
	void aFrozenNodeDoesNotStallAcquisitionBeyondTheNodeTimeout() throws Exception {
		DistLock lock = nodes.client(Duration.ofSeconds(30), SHORT_NODE_TIMEOUT).getLock("frozen");
		node(4).pause();
		try {
			for (int i = 0; i < 10; i++) {
				long start = System.nanoTime();
				assertThat(lock.tryLock(Duration.ofSeconds(2))).isTrue();
				Duration took = Duration.ofNanos(System.nanoTime() - start);
				lock.unlock();
				assertThat(took).as("acquisition %d with a frozen node", i)
					.isLessThan(SHORT_NODE_TIMEOUT.nodeTimeout().plusMillis(600));
			}
		}
		finally {
			node(4).resume();
		}
	}

	@Test
	void healthReportsEachNodeAndWhetherAQuorumIsReachable() {
		RedlockLockRegistry client = nodes.client(Duration.ofSeconds(30));
		// A live node that once missed the node timeout is skipped for ten of them (10 s): wait past that.
		var allUp = await().atMost(Duration.ofSeconds(15)).until(client::backendHealth,
				health -> Integer.valueOf(5).equals(health.details().get("reachable")));
		assertThat(allUp.up()).isTrue();
		assertThat(allUp.details()).containsEntry("reachable", 5).containsEntry("quorum", 3);

		node(0).kill();
		node(1).kill();
		var twoDown = await().atMost(Duration.ofSeconds(15)).until(client::backendHealth,
				health -> Integer.valueOf(3).equals(health.details().get("reachable")));
		assertThat(twoDown.up()).isTrue();
		assertThat(twoDown.details()).containsEntry("reachable", 3);
		@SuppressWarnings("unchecked")
		java.util.Map<String, Object> nodeStates = (java.util.Map<String, Object>) twoDown.details().get("nodes");
		assertThat(nodeStates).containsEntry(node(0).host() + ":" + node(0).port(), "DOWN")
			.containsEntry(node(4).host() + ":" + node(4).port(), "UP");

		node(2).kill();
		assertThat(client.backendHealth().up()).as("no quorum left").isFalse();
		// Health never takes a lock.
		assertThat(node(3).query("KEYS", "distlock:*")).isBlank();
	}

	private boolean tryFromAnotherThread(DistLock lock, Duration wait) throws Exception {
		return this.threads.submit(() -> {
			boolean acquired = lock.tryLock(wait);
			if (acquired) {
				lock.unlock();
			}
			return acquired;
		}).get(30, TimeUnit.SECONDS);
	}

}
