package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;

import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.LockRegistry;
import io.distlock.contract.SharedCounter;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.LockNotice;
import io.distlock.core.ReleaseRequest;
import io.distlock.zookeeper.ZooKeeperLockRegistry.ExclusiveProtocol;

/**
 * Exclusive locks held by {@link ExclusiveProtocol#LINE}, whose holder is the first node of the
 * lock's line: what a hand-off asks of the server (counted by the server itself), that a release
 * wakes only the waiter behind the holder, and that instances of the two protocols never hold a lock
 * at once. The contract suite runs on this protocol in {@link ZooKeeperLineProtocolContractTest}, and
 * {@link ZooKeeperServerRequestsTest} counts an uncontended pair under both.
 */
class ZooKeeperLineProtocolTest {

	private static final Duration LONG = Duration.ofMinutes(1);

	@RegisterExtension
	static final ZooKeeperServerExtension zooKeeper = new ZooKeeperServerExtension();

	@RegisterExtension
	final ZooKeeperClientsExtension zk = new ZooKeeperClientsExtension(zooKeeper, "/distlock-line");

	/**
	 * Each waiter watches only the node before its own, so the holder's release is heard by the one
	 * waiter behind it, which then holds without a write of its own: a hand-off costs the release's
	 * delete alone (the lock-node protocol's costs that and the waiter's create).
	 */
	@Test
	void aReleaseWakesOnlyTheWaiterBehindAndAHandOffCostsOneWrite() throws Exception {
		ZooKeeperLockBackend first = this.zk.backend(ExclusiveProtocol.LINE);
		ZooKeeperLockBackend second = this.zk.backend(ExclusiveProtocol.LINE);
		ZooKeeperLockBackend third = this.zk.backend(ExclusiveProtocol.LINE);
		Acquisition held = first.acquire(AcquireRequest.of("h", "owner-1", 0, LONG));
		assertThat(held.status()).isEqualTo(Acquisition.Status.ACQUIRED);
		AtomicInteger secondWoken = new AtomicInteger();
		AtomicInteger thirdWoken = new AtomicInteger();
		AutoCloseable secondListens = second.subscribe("h", null, notice -> count(notice, secondWoken));
		AutoCloseable thirdListens = third.subscribe("h", null, notice -> count(notice, thirdWoken));
		assertThat(second.acquire(waiting("h", "owner-2", "2")).status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(third.acquire(waiting("h", "owner-3", "3")).status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		List<String> line = line("h");
		assertThat(line).hasSize(3);
		assertThat(zooKeeper.watchesOn(this.zk.lockPath("h") + "/" + line.get(0))).as("watching the holder").isEqualTo(1);
		assertThat(zooKeeper.watchesOn(this.zk.lockPath("h") + "/" + line.get(1))).as("watching the second").isEqualTo(1);

		long transactions = zooKeeper.transactions();
		assertThat(first.release(ReleaseRequest.of("h", "owner-1", 1))).isEqualTo(Release.RELEASED);
		await().atMost(Duration.ofSeconds(30)).until(() -> secondWoken.get() > 0);
		Acquisition handedOff = second.acquire(waiting("h", "owner-2", "2"));
		assertThat(handedOff.status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(zooKeeper.transactions() - transactions).as("writes of the hand-off").isEqualTo(1);
		assertThat(handedOff.token()).as("the next holder's token is higher").isGreaterThan(held.token());
		// Its watch was on the second's node, which still stands: nothing could have woken it.
		assertThat(zooKeeper.watchesOn(this.zk.lockPath("h") + "/" + line.get(1))).isEqualTo(1);
		assertThat(thirdWoken).hasValue(0);

		assertThat(second.release(ReleaseRequest.of("h", "owner-2", 1))).isEqualTo(Release.RELEASED);
		await().atMost(Duration.ofSeconds(30)).until(() -> thirdWoken.get() > 0);
		assertThat(third.acquire(waiting("h", "owner-3", "3")).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		secondListens.close();
		thirdListens.close();
	}

	/**
	 * An instance of either protocol never holds beside one of the other: a line cannot form under a
	 * lock node (an ephemeral node has no children), and a lock node cannot be made where a line's
	 * parent stands. Each waits for the other's release, and a lock-node instance takes a lock whose
	 * line is empty again. (Run with the line under a path of its own, the line's instance held
	 * beside the lock node's.)
	 */
	@Test
	void theTwoProtocolsExcludeEachOtherAndHandTheLockOver() throws Exception {
		ZooKeeperLockBackend node = this.zk.backend(ExclusiveProtocol.LOCK_NODE);
		ZooKeeperLockBackend line = this.zk.backend(ExclusiveProtocol.LINE);
		assertThat(tryOnce(node, "m", "node-owner")).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(tryOnce(line, "m", "line-owner")).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		CountDownLatch woken = new CountDownLatch(1);
		AutoCloseable listens = line.subscribe("m", null, notice -> woken.countDown());
		assertThat(line.acquire(waiting("m", "line-owner", "1")).status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(node.release(ReleaseRequest.of("m", "node-owner", 1))).isEqualTo(Release.RELEASED);
		assertThat(woken.await(30, TimeUnit.SECONDS)).as("the line's waiter is woken by the lock node's release").isTrue();
		assertThat(line.acquire(waiting("m", "line-owner", "1")).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		listens.close();

		assertThat(tryOnce(node, "m", "node-owner")).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(line.release(ReleaseRequest.of("m", "line-owner", 1))).isEqualTo(Release.RELEASED);
		Acquisition taken = node.acquire(AcquireRequest.of("m", "node-owner", 0, LONG));
		assertThat(taken.status()).as("the empty line is no hold").isEqualTo(Acquisition.Status.ACQUIRED);
		Stat stat = this.zk.observer().checkExists().forPath(this.zk.lockPath("m"));
		assertThat(stat.getEphemeralOwner()).as("a lock node again").isNotZero();
		assertThat(node.renew(List.of(new LockBackend.HoldRef("m", "node-owner", taken.attemptId(),
				io.distlock.HoldKind.EXCLUSIVE)), LONG, null)).containsExactly(true);
		assertThat(this.zk.observer().checkExists().forPath(this.zk.lockPath("m")).getVersion())
			.as("a lock node's data version, which an empty line's parent never has").isZero();
		assertThat(tryOnce(line, "m", "line-owner")).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
	}

	/**
	 * Clients of both protocols, several threads each, on one lock during a switch: a counter read
	 * and written in two steps under the lock keeps every update. (With the line under a path of its
	 * own, updates were lost.)
	 */
	@Test
	void clientsOfBothProtocolsOnOneLockKeepEveryUpdate() throws Exception {
		List<LockRegistry> registries = List.of(this.zk.registry(this.zk.backend(ExclusiveProtocol.LOCK_NODE)),
				this.zk.registry(this.zk.backend(ExclusiveProtocol.LINE)),
				this.zk.registry(this.zk.backend(ExclusiveProtocol.LOCK_NODE)),
				this.zk.registry(this.zk.backend(ExclusiveProtocol.LINE)));
		SharedCounter counter = this.zk.clients().counter("mixed-" + System.nanoTime());
		int threadsPerClient = 2;
		int updates = 40;
		List<Future<?>> workers = new ArrayList<>();
		CountDownLatch start = new CountDownLatch(1);
		for (LockRegistry registry : registries) {
			for (int t = 0; t < threadsPerClient; t++) {
				workers.add(this.zk.threads().submit(() -> {
					start.await();
					Lock lock = registry.getLock("mixed");
					for (int i = 0; i < updates; i++) {
						lock.lock();
						try {
							long value = counter.get();
							Thread.yield();
							counter.set(value + 1);
						}
						finally {
							lock.unlock();
						}
					}
					return null;
				}));
			}
		}
		start.countDown();
		for (Future<?> worker : workers) {
			worker.get(5, TimeUnit.MINUTES);
		}
		assertThat(counter.get()).isEqualTo((long) registries.size() * threadsPerClient * updates);
	}

	/**
	 * A lock-node instance deletes an empty line's parent in its way by the parent's data version, which
	 * must not be a lock node's (0): a lock node another instance made at the path after the parent was
	 * read stays. (With the parent born at version 0, it was deleted, and both instances held.)
	 */
	@Test
	void anEmptyLineDeletedByVersionNeverDeletesALockNodeMadeSince() throws Exception {
		ZooKeeperLockBackend line = this.zk.backend(ExclusiveProtocol.LINE);
		ZooKeeperLockBackend a = this.zk.backend(ExclusiveProtocol.LOCK_NODE);
		ZooKeeperLockBackend c = this.zk.backend(ExclusiveProtocol.LOCK_NODE);
		// An empty line's parent at the lock's path (as any LINE release leaves it).
		assertThat(tryOnce(line, "e", "line-owner")).isEqualTo(Acquisition.Status.ACQUIRED);
		line.release(ReleaseRequest.of("e", "line-owner", 1));
		assertThat(this.zk.observer().checkExists().forPath(this.zk.lockPath("e")).getEphemeralOwner()).isZero();

		AtomicBoolean once = new AtomicBoolean();
		AtomicReference<Acquisition> cTook = new AtomicReference<>();
		a.hook = (at, name) -> {
			if (at.equals("empty-line-read") && once.compareAndSet(false, true)) {
				// Between A's read of the empty parent and A's delete: C, of the same protocol, deletes the parent
				// itself and takes the lock (its node has data version 0 as the parent had).
				cTook.set(c.acquire(AcquireRequest.of("e", "c-owner", 0, LONG)));
			}
		};
		Acquisition aTook = a.acquire(AcquireRequest.of("e", "a-owner", 0, LONG));
		assertThat(cTook.get().status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(c.isHeldBy("e", "c-owner")).as("C's node still stands").isTrue();
		assertThat(aTook.status()).as("A must not hold beside C").isEqualTo(Acquisition.Status.HELD_BY_OTHER);
	}

	/**
	 * The line's parent, just made, is deleted before the node in line is created under it (by a
	 * lock-node instance whose own create has not landed yet): a contended lock, not a failure.
	 * (Before, the acquisition threw.)
	 */
	@Test
	void aLineParentDeletedBeforeTheNodeInLineIsNoFailure() throws Exception {
		ZooKeeperLockBackend line = this.zk.backend(ExclusiveProtocol.LINE);
		// The base path exists, the lock's path does not.
		this.zk.observer().create().creatingParentsIfNeeded().forPath(this.zk.basePath() + "/other");
		AtomicBoolean once = new AtomicBoolean();
		line.hook = (at, name) -> {
			if (at.equals("line-parent-made") && once.compareAndSet(false, true)) {
				this.zk.observer().delete().forPath(this.zk.lockPath("p"));
			}
		};
		Acquisition took = line.acquire(AcquireRequest.of("p", "line-owner", 0, LONG));
		assertThat(once).isTrue();
		assertThat(took.status()).isIn(Acquisition.Status.ACQUIRED, Acquisition.Status.HELD_BY_OTHER);
	}

	/**
	 * Each protocol's {@code remainingLease} (and so {@code isLocked()}) sees the other's hold, and an
	 * empty line as free. (Before, each missed one of them.)
	 */
	@Test
	void remainingLeaseSeesTheOtherProtocolsHoldAndAnEmptyLineAsFree() throws Exception {
		ZooKeeperLockBackend node = this.zk.backend(ExclusiveProtocol.LOCK_NODE);
		ZooKeeperLockBackend line = this.zk.backend(ExclusiveProtocol.LINE);
		assertThat(tryOnce(node, "q", "node-owner")).isEqualTo(Acquisition.Status.ACQUIRED);
		Duration seenByLine = line.remainingLease("q");
		assertThat(tryOnce(line, "r", "line-owner")).isEqualTo(Acquisition.Status.ACQUIRED);
		line.release(ReleaseRequest.of("r", "line-owner", 1));
		Duration emptyLineSeenByNode = node.remainingLease("r");
		assertThat(emptyLineSeenByNode).as("LOCK_NODE sees an empty line as free").isZero();
		assertThat(seenByLine).as("LINE sees a lock-node holder").isPositive();
	}

	/** @return what one acquisition that may not wait found */
	private static Acquisition.Status tryOnce(ZooKeeperLockBackend backend, String name, String owner) {
		return backend.acquire(AcquireRequest.of(name, owner, 0, LONG)).status();
	}

	private static AcquireRequest waiting(String name, String owner, String ticket) {
		return new AcquireRequest(name, owner, 0, LONG, LockBackend.QUEUE_PLACE, ticket);
	}

	private static void count(LockNotice notice, AtomicInteger woken) {
		if (notice == LockNotice.RELEASED) {
			woken.incrementAndGet();
		}
	}

	/** @return the nodes of the lock's line, in line order */
	private List<String> line(String name) throws Exception {
		List<String> nodes = new ArrayList<>(this.zk.observer().getChildren().forPath(this.zk.lockPath(name)));
		nodes.sort((a, b) -> a.substring(a.length() - 10).compareTo(b.substring(b.length() - 10)));
		return nodes;
	}

}
