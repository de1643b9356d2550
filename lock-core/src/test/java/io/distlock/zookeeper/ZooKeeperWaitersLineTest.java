package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.LockRegistry;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend;
import io.distlock.core.LockBackend.Acquisition;

/**
 * The line of an exclusive lock's waiters ({@link ZooKeeperQueue}), against one real ZooKeeper
 * server: the order clients are served in, who is woken by a release, and what a waiter that gives
 * up, freezes or loses its session leaves behind. Every wait is for a condition, never a sleep.
 */
class ZooKeeperWaitersLineTest {

	private static final String BASE = "/distlock-line";

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	@RegisterExtension
	static final ZooKeeperServerExtension zooKeeper = new ZooKeeperServerExtension();

	@RegisterExtension
	final ZooKeeperClientsExtension zk = new ZooKeeperClientsExtension(zooKeeper, BASE);

	/** Per backend made here, how often a watch woke one of its waiters (a lock's node or a place went). */
	private final Map<ZooKeeperLockBackend, AtomicInteger> woken = new ConcurrentHashMap<>();

	private ZooKeeperLockBackend backend() {
		ZooKeeperLockBackend backend = this.zk.backend();
		AtomicInteger woken = new AtomicInteger();
		this.woken.put(backend, woken);
		backend.hook = (point, name) -> {
			if (point.startsWith("woken-by-")) {
				woken.incrementAndGet();
			}
		};
		return backend;
	}

	private LockRegistry registry(ZooKeeperLockBackend backend) {
		return this.zk.registry(backend);
	}

	private LockRegistry registry() {
		return registry(backend());
	}

	/** A thread that takes the lock (waiting up to {@link #PATIENCE}), holds it until told, and unlocks. */
	private final class Waiter {

		final CompletableFuture<Boolean> acquired = new CompletableFuture<>();

		final CountDownLatch release = new CountDownLatch(1);

		final Future<?> done;

		Waiter(DistLock lock, Duration wait, List<Integer> order, int position) {
			this.done = ZooKeeperWaitersLineTest.this.zk.threads().submit(() -> {
				boolean got = lock.tryLock(wait);
				if (got) {
					order.add(position);
				}
				this.acquired.complete(got);
				if (got) {
					this.release.await();
					lock.unlock();
				}
				return null;
			});
		}

		boolean awaitAcquired() throws Exception {
			return this.acquired.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
		}

		void releaseAndWait() throws Exception {
			this.release.countDown();
			this.done.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
		}

	}

	/**
	 * A try without a wait passes nobody in line: a first waiter woken by a release that has not
	 * created the lock's node yet keeps its turn, as with Curator's try without a wait. Before, such a
	 * try created the node straight away.
	 */
	@Test
	void aTryWithoutAWaitDoesNotPassTheFirstInLine() throws Exception {
		String name = "no-barging";
		String line = this.zk.lockPath(name) + ".q";
		// The place of a waiter of another client, first in line, about to create the lock's node.
		this.zk.observer().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
			.forPath(line + "/other.1-", new byte[0]);
		DistLock lock = registry().getLock(name);

		assertThat(lock.tryLock()).as("the first in line goes first").isFalse();
		assertThat(this.zk.observer().checkExists().forPath(this.zk.lockPath(name))).as("no node created").isNull();

		for (String place : this.zk.line(name)) {
			this.zk.observer().delete().forPath(line + "/" + place);
		}
		assertThat(lock.tryLock()).as("with nobody in line the free lock is taken").isTrue();
		lock.unlock();
	}

	@Test
	void waitersOfDifferentClientsAreServedInTheOrderTheyQueued() throws Exception {
		String name = "arrival";
		DistLock held = registry().getLock(name);
		assertThat(held.tryLock()).isTrue();
		List<Integer> order = new CopyOnWriteArrayList<>();
		List<Waiter> waiters = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			waiters.add(new Waiter(registry().getLock(name), PATIENCE, order, i));
			int queued = i + 1;
			// Each one in line before the next arrives, so arrival order is known.
			await().atMost(PATIENCE).until(() -> this.zk.line(name).size() == queued);
		}
		held.unlock();
		for (Waiter waiter : waiters) {
			assertThat(waiter.awaitAcquired()).isTrue();
			waiter.releaseAndWait();
		}
		assertThat(order).containsExactly(0, 1, 2, 3);
		await().atMost(PATIENCE).until(() -> this.zk.line(name).isEmpty());
	}

	@Test
	void eachHandOffWakesOneWaiterOnceAndOnlyTheFirstWatchesTheLocksNode() throws Exception {
		String name = "one-woken";
		DistLock held = registry().getLock(name);
		assertThat(held.tryLock()).isTrue();
		List<ZooKeeperLockBackend> backends = new ArrayList<>();
		List<Waiter> waiters = new ArrayList<>();
		List<Integer> order = new CopyOnWriteArrayList<>();
		for (int i = 0; i < 3; i++) {
			ZooKeeperLockBackend backend = backend();
			backends.add(backend);
			waiters.add(new Waiter(registry(backend).getLock(name), PATIENCE, order, i));
			int queued = i + 1;
			await().atMost(PATIENCE).until(() -> this.zk.line(name).size() == queued);
		}
		// Each place is watched by the one behind it, and the lock's node by the first in line only;
		// without a line, every waiting client watched the lock's node, and each release woke them all.
		await().atMost(PATIENCE).until(() -> this.zk.serverWatchesOn(this.zk.lockPath(name)) == 1);
		List<String> line = this.zk.line(name);
		assertThat(this.zk.serverWatchesOn(this.zk.lockPath(name) + ".q/" + line.get(0))).isEqualTo(1);
		assertThat(this.zk.serverWatchesOn(this.zk.lockPath(name) + ".q/" + line.get(1))).isEqualTo(1);
		assertThat(this.zk.serverWatchesOn(this.zk.lockPath(name) + ".q/" + line.get(2))).isZero();

		held.unlock();
		for (int i = 0; i < 3; i++) {
			assertThat(waiters.get(i).awaitAcquired()).isTrue();
			// The holder's place stays first until it releases: the one behind sleeps through the take.
			assertThat(this.zk.line(name)).as("the holder's place and those behind it").hasSize(3 - i);
			waiters.get(i).releaseAndWait();
		}
		assertThat(order).containsExactly(0, 1, 2);
		for (ZooKeeperLockBackend backend : backends) {
			assertThat(this.woken.get(backend).get()).as("wake-ups of this client, for its one turn").isEqualTo(1);
		}
		await().atMost(PATIENCE).until(() -> this.zk.line(name).isEmpty());
	}

	@Test
	void aFrozenFirstWaiterHoldsOthersUpForAboutOnePlaceTime() throws Exception {
		String name = "frozen";
		DistLock held = registry().getLock(name);
		assertThat(held.tryLock()).isTrue();
		// A client that queues and then stops calling, its session alive (a paused process).
		ZooKeeperLockBackend frozen = backend();
		Acquisition queued = frozen.acquire(new AcquireRequest(name, "frozen:1", 0, Duration.ofSeconds(30),
				LockBackend.QUEUE_PLACE, "1"));
		assertThat(queued.status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(this.zk.line(name)).hasSize(1);
		String frozenPlace = this.zk.line(name).get(0);
		Waiter behind = new Waiter(registry().getLock(name), PATIENCE, new CopyOnWriteArrayList<>(), 0);
		await().atMost(PATIENCE).until(() -> this.zk.line(name).size() == 2);

		long released = System.nanoTime();
		held.unlock();
		assertThat(behind.awaitAcquired()).isTrue();
		Duration heldUp = Duration.ofNanos(System.nanoTime() - released);
		// Half a place time to see the lock free under the same first place, half to be sure; a call
		// of the engine's at least every half place time rounds it up to one.
		assertThat(heldUp).as("held up by the frozen waiter").isLessThan(LockBackend.QUEUE_PLACE.plusSeconds(2));
		assertThat(this.zk.line(name)).as("the frozen waiter's place lapsed").doesNotContain(frozenPlace);
		behind.releaseAndWait();

		// Back again, it finds the lock free and takes it.
		Acquisition back = frozen.acquire(new AcquireRequest(name, "frozen:1", 0, Duration.ofSeconds(30),
				LockBackend.QUEUE_PLACE, "1"));
		assertThat(back.status()).isEqualTo(Acquisition.Status.ACQUIRED);
	}

	@Test
	void aWaiterThatGivesUpLeavesNoPlaceBehind() throws Exception {
		String name = "gives-up";
		DistLock held = registry().getLock(name);
		assertThat(held.tryLock()).isTrue();
		DistLock other = registry().getLock(name);
		CompletableFuture<Boolean> gotIt = CompletableFuture.supplyAsync(() -> {
			try {
				return other.tryLock(Duration.ofMillis(1500));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return true;
			}
		}, this.zk.threads());
		await().atMost(PATIENCE).until(() -> this.zk.line(name).size() == 1);
		assertThat(gotIt.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isFalse();
		assertThat(this.zk.line(name)).as("its place left with it").isEmpty();
		held.unlock();
	}

	@Test
	void aCrashedWaitersPlaceDoesNotBlockTheWaitersBehindIt() throws Exception {
		String name = "crashed-waiter";
		DistLock held = registry().getLock(name);
		assertThat(held.tryLock()).isTrue();
		CuratorFramework crashingCurator = this.zk.clients().newCurator(ZooKeeperTestClients.SESSION_TIMEOUT);
		LockRegistry crashing = this.zk.registry(this.zk.backend(crashingCurator));
		CompletableFuture.runAsync(() -> {
			try {
				crashing.getLock(name).tryLock(PATIENCE);
			}
			catch (Exception ex) {
				// Its client is cut off under it.
			}
		}, this.zk.threads());
		await().atMost(PATIENCE).until(() -> this.zk.line(name).size() == 1);
		Waiter behind = new Waiter(registry().getLock(name), PATIENCE, new CopyOnWriteArrayList<>(), 0);
		await().atMost(PATIENCE).until(() -> this.zk.line(name).size() == 2);
		this.zk.clients().cutOff(crashingCurator);
		held.unlock();
		assertThat(behind.awaitAcquired()).isTrue();
		behind.releaseAndWait();
	}

	/**
	 * An instance of an earlier version never queues: it creates the lock's node whenever it finds
	 * it gone. Beside it, queued clients still never hold the lock at the same time as it.
	 */
	@Test
	void aClientThatNeverQueuesAndQueuedClientsNeverHoldTogether() throws Exception {
		String name = "mixed-versions";
		String path = this.zk.lockPath(name);
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger oldTurns = new AtomicInteger();
		AtomicInteger newTurns = new AtomicInteger();
		AtomicBoolean stop = new AtomicBoolean();
		CuratorFramework old = this.zk.clients().newCurator(ZooKeeperTestClients.SESSION_TIMEOUT);
		this.zk.closeAfterTest(old);
		List<Future<?>> workers = new ArrayList<>();
		workers.add(this.zk.threads().submit(() -> {
			while (!stop.get()) {
				try {
					old.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
						.forPath(path, ZooKeeperNodeData.nodeData("old:1", "-.old"));
				}
				catch (KeeperException.NodeExistsException taken) {
					// As the earlier version waits: a watch on the node, then a try once it is gone.
					CountDownLatch gone = new CountDownLatch(1);
					if (old.checkExists().usingWatcher((org.apache.zookeeper.Watcher) event -> gone.countDown())
						.forPath(path) != null) {
						gone.await(1, TimeUnit.SECONDS);
					}
					continue;
				}
				if (inside.incrementAndGet() > 1) {
					overlaps.incrementAndGet();
				}
				oldTurns.incrementAndGet();
				inside.decrementAndGet();
				old.delete().forPath(path);
			}
			return null;
		}));
		for (int client = 0; client < 3; client++) {
			LockRegistry registry = registry();
			for (int thread = 0; thread < 2; thread++) {
				workers.add(this.zk.threads().submit(() -> {
					DistLock lock = registry.getLock(name);
					while (!stop.get()) {
						if (!lock.tryLock(PATIENCE)) {
							continue;
						}
						try {
							if (inside.incrementAndGet() > 1) {
								overlaps.incrementAndGet();
							}
							newTurns.incrementAndGet();
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
		await().atMost(PATIENCE).until(() -> oldTurns.get() >= 20 && newTurns.get() >= 100);
		stop.set(true);
		for (Future<?> worker : workers) {
			worker.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
		}
		assertThat(overlaps).as("times two holders were inside at once").hasValue(0);
	}

}
