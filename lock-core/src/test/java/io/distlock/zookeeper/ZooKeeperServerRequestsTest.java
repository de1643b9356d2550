package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.distlock.LockRegistry;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.LockNotice;
import io.distlock.core.ReleaseRequest;

/**
 * What a lock asks of the ZooKeeper server, counted by the server itself (its JMX counters of
 * requests received and transactions applied): an uncontended pair costs what Curator's
 * {@code InterProcessMutex} costs, and a hand-off through the line one transaction at the release.
 * And the release that reads nothing before its delete never deletes another client's node.
 */
class ZooKeeperServerRequestsTest {

	private static final Duration LONG = Duration.ofMinutes(1);

	@RegisterExtension
	static final ZooKeeperServerExtension zooKeeper = new ZooKeeperServerExtension();

	@RegisterExtension
	final ZooKeeperClientsExtension zk = new ZooKeeperClientsExtension(zooKeeper, "/distlock-requests");

	/**
	 * A read of the line, the create and the delete: 3 requests, 2 of them writes, as Curator's
	 * create, read of its children and delete. (Before, the release read the node before deleting it: 4.)
	 * With holders first in line: the create of the node in line, a read of the line and the delete.
	 */
	@ParameterizedTest
	@EnumSource(ZooKeeperLockRegistry.ExclusiveProtocol.class)
	void anUncontendedPairAsksTheServerForThreeRequestsTwoOfThemWrites(ZooKeeperLockRegistry.ExclusiveProtocol protocol)
			throws Exception {
		LockRegistry registry = this.zk.registry(this.zk.backend(protocol));
		Lock lock = registry.getLock("pair");
		// The first pair also makes the base path (and the line's parent).
		lock.lock();
		lock.unlock();
		long fewestRequests = Long.MAX_VALUE;
		long fewestTransactions = Long.MAX_VALUE;
		for (int pair = 0; pair < 3; pair++) {
			// Another session's ping, or the server's own deletion of an empty container node, may land in
			// a pair's count; the fewest of three pairs has none.
			long requests = zooKeeper.requestsReceived();
			long transactions = zooKeeper.transactions();
			lock.lock();
			lock.unlock();
			fewestRequests = Math.min(fewestRequests, zooKeeper.requestsReceived() - requests);
			fewestTransactions = Math.min(fewestTransactions, zooKeeper.transactions() - transactions);
		}
		assertThat(fewestRequests).as("requests per pair").isEqualTo(3);
		assertThat(fewestTransactions).as("writes per pair").isEqualTo(2);
	}

	/**
	 * A hold taken through the line ends with one transaction that deletes the lock's node and the
	 * place together, and the waiter behind the place is woken and takes the lock. (Before: two writes.)
	 */
	@Test
	void aHoldTakenThroughTheLineEndsInOneTransactionAndWakesTheWaiterBehind() throws Exception {
		ZooKeeperLockBackend first = this.zk.backend();
		ZooKeeperLockBackend second = this.zk.backend();
		ZooKeeperLockBackend third = this.zk.backend();
		assertThat(first.acquire(AcquireRequest.of("h", "owner-1", 0, LONG)).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(second.acquire(new AcquireRequest("h", "owner-2", 0, LONG, LockBackend.QUEUE_PLACE, "2")).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(this.zk.line("h")).hasSize(1);
		assertThat(first.release(ReleaseRequest.of("h", "owner-1", 1))).isEqualTo(Release.RELEASED);
		Acquisition throughTheLine = second.acquire(new AcquireRequest("h", "owner-2", 0, LONG, LockBackend.QUEUE_PLACE, "2"));
		assertThat(throughTheLine.status()).isEqualTo(Acquisition.Status.ACQUIRED);

		CountDownLatch woken = new CountDownLatch(1);
		AutoCloseable subscription = third.subscribe("h", null, notice -> {
			if (notice == LockNotice.RELEASED) {
				woken.countDown();
			}
		});
		assertThat(third.acquire(new AcquireRequest("h", "owner-3", 0, LONG, LockBackend.QUEUE_PLACE, "3")).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(this.zk.line("h")).as("the holder's place, then the third's").hasSize(2);

		long transactions = zooKeeper.transactions();
		assertThat(second.release(ReleaseRequest.of("h", "owner-2", 1))).isEqualTo(Release.RELEASED);
		// Counted once the place is gone, however it went (a delete in the background, before).
		await().atMost(Duration.ofSeconds(30)).until(() -> this.zk.line("h").size() == 1);
		assertThat(zooKeeper.transactions() - transactions).as("writes of the release").isEqualTo(1);
		assertThat(woken.await(30, TimeUnit.SECONDS)).as("the waiter behind the place is woken").isTrue();
		assertThat(third.acquire(new AcquireRequest("h", "owner-3", 0, LONG, LockBackend.QUEUE_PLACE, "3")).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		subscription.close();
	}

	/**
	 * The release deletes a live hold's node without reading it first, so it must not act on a hold
	 * that another deleter of its client took over meanwhile. Here the session ends after the release
	 * began: the loss forgets the hold, the ensemble deletes its node, another client takes the lock,
	 * and the release, going on through the new session, must find the hold gone and leave that
	 * client's node. (Run without the release's second look at the hold, it deleted the other
	 * client's node, when the loss was heard of without the session's end.)
	 */
	@Test
	void aReleaseOvertakenByTheSessionsLossLeavesTheNextHoldersNode() throws Exception {
		CuratorFramework curator = this.zk.clients().newCurator(ZooKeeperTestClients.SESSION_TIMEOUT);
		ZooKeeperLockBackend mine = this.zk.backend(curator);
		ZooKeeperLockBackend theirs = this.zk.backend();
		assertThat(mine.acquire(AcquireRequest.of("e", "owner-1", 0, LONG)).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch goOn = new CountDownLatch(1);
		String releaser = "releaser-" + System.nanoTime();
		mine.hook = (point, name) -> {
			if (point.equals("release-started") && Thread.currentThread().getName().equals(releaser)) {
				started.countDown();
				assertThat(goOn.await(30, TimeUnit.SECONDS)).isTrue();
			}
		};
		Future<Release> release = this.zk.threads().submit(() -> {
			Thread.currentThread().setName(releaser);
			return mine.release(ReleaseRequest.of("e", "owner-1", 1));
		});
		assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();

		this.zk.clients().replaceSessionHeardBy(mine, curator);
		mine.awaitBackgroundTasks();
		await().atMost(Duration.ofSeconds(30))
			.alias("deleted with the session")
			.until(() -> this.zk.observer().checkExists().forPath(this.zk.lockPath("e")) == null);
		Acquisition next = theirs.acquire(AcquireRequest.of("e", "owner-2", 0, LONG));
		assertThat(next.status()).isEqualTo(Acquisition.Status.ACQUIRED);
		goOn.countDown();
		assertThat(release.get(30, TimeUnit.SECONDS)).isEqualTo(Release.NOT_HELD);

		Stat stat = this.zk.observer().checkExists().forPath(this.zk.lockPath("e"));
		assertThat(stat).as("the next holder's node").isNotNull();
		assertThat(stat.getCzxid()).isEqualTo(next.token());
		assertThat(theirs.isHeldBy("e", "owner-2")).isTrue();
	}

}
