package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.distlock.DistLock;
import io.distlock.LockLostException;
import io.distlock.LockRegistry;
import io.distlock.zookeeper.ZooKeeperLockRegistry.ExclusiveProtocol;

/**
 * A lock call made while the client has no connection (its server went away, and it looks for one)
 * waits for it within the connection timeout, as Curator's own calls do, rather than failing at once.
 */
class ZooKeeperReconnectionTest {

	@RegisterExtension
	static final ZooKeeperServerExtension zooKeeper = new ZooKeeperServerExtension();

	@RegisterExtension
	final ZooKeeperClientsExtension zk = new ZooKeeperClientsExtension(zooKeeper, "/distlock-reconnect");

	/**
	 * (Under the lock-node protocol the call's first read went to the raw handle, which answers a
	 * connection loss at once: the wait failed while the client was still moving, as a 3-server
	 * ensemble's fault test saw once after a server was killed.)
	 */
	@ParameterizedTest
	@EnumSource(ExclusiveProtocol.class)
	void aTimedWaitStartedWithoutAConnectionTakesTheLockOnceTheServerIsBack(ExclusiveProtocol protocol) throws Exception {
		// A connection timeout long enough for the server to come back within it, however loaded the machine.
		CuratorFramework curator = this.zk.clients().newCurator(ZooKeeperTestClients.SESSION_TIMEOUT, Duration.ofSeconds(30));
		DistLock lock = this.zk.registry(this.zk.backend(curator, protocol)).getLock("reconnect");
		zooKeeper.stop();
		try {
			await().atMost(Duration.ofSeconds(30)).until(() -> !curator.getZookeeperClient().isConnected());
			AtomicReference<Thread> caller = new AtomicReference<>();
			Future<Boolean> taken = this.zk.threads().submit(() -> {
				caller.set(Thread.currentThread());
				return lock.tryLock(Duration.ofSeconds(60));
			});
			// Waiting for the connection (or, before, failed already).
			await().atMost(Duration.ofSeconds(30))
				.until(() -> taken.isDone() || (caller.get() != null && caller.get().getState() == Thread.State.TIMED_WAITING));
			zooKeeper.restart();
			assertThat(taken.get(60, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			zooKeeper.restartIfStopped();
		}
	}

	/**
	 * The client's session is replaced while a waiter looks at the line, after it read the line through
	 * the old session's handle: the look's next call through that handle fails (before, the wait failed
	 * with it), and the waiter starts over on the new session and takes the lock once it is released.
	 */
	@ParameterizedTest
	@EnumSource(ExclusiveProtocol.class)
	void aWaiterWhoseSessionIsReplacedDuringItsLookStartsOverAndTakesTheLock(ExclusiveProtocol protocol)
			throws Exception {
		CuratorFramework curator = this.zk.clients().newCurator(ZooKeeperTestClients.SESSION_TIMEOUT);
		ZooKeeperLockBackend mine = this.zk.backend(curator, protocol);
		DistLock lock = this.zk.registry(mine).getLock("replaced-" + protocol);
		DistLock theirs = this.zk.registry(this.zk.backend(protocol)).getLock("replaced-" + protocol);
		assertThat(theirs.tryLock()).isTrue();
		AtomicBoolean replaced = this.zk.clients().replaceSessionAt(mine, curator, "line-read");
		Future<Boolean> taken = this.zk.threads().submit(() -> lock.tryLock(Duration.ofSeconds(60)));
		await().atMost(Duration.ofSeconds(30)).untilTrue(replaced);
		theirs.unlock();
		assertThat(taken.get(60, TimeUnit.SECONDS)).isTrue();
	}

	/**
	 * The client's session is replaced as a {@code tryLock()} without a wait, under the lock-node
	 * protocol, reads whether anyone is in line: it starts over on the new session and takes the free
	 * lock. Before, the read went through the old session's handle and the call failed.
	 */
	@Test
	void aTryWithoutAWaitWhoseSessionIsReplacedAsItLooksAtTheLineStartsOver() throws Exception {
		CuratorFramework curator = this.zk.clients().newCurator(ZooKeeperTestClients.SESSION_TIMEOUT);
		ZooKeeperLockBackend mine = this.zk.backend(curator, ExclusiveProtocol.LOCK_NODE);
		DistLock lock = this.zk.registry(mine).getLock("replaced-try");
		AtomicBoolean replaced = this.zk.clients().replaceSessionAt(mine, curator, "line-size-reading");

		assertThat(lock.tryLock()).isTrue();
		assertThat(replaced).isTrue();
		lock.unlock();
	}

	/**
	 * The client's session is replaced as a waiter joins the line under the lock-node protocol, so that
	 * Curator sends its create through the new session, and another client's waiter joins behind it:
	 * the node stays the waiter's place, and it takes the lock first. Before, its place was taken for
	 * the old session's, dropped at the next look and made again at the end of the line.
	 */
	@Test
	void aPlaceCreatedThroughTheNewSessionStaysTheWaitersPlace() throws Exception {
		String name = "kept-place";
		CuratorFramework curator = this.zk.clients().newCurator(ZooKeeperTestClients.SESSION_TIMEOUT);
		ZooKeeperLockBackend mine = this.zk.backend(curator, ExclusiveProtocol.LOCK_NODE);
		DistLock lock = this.zk.registry(mine).getLock(name);
		DistLock theirs = this.zk.registry(this.zk.backend(ExclusiveProtocol.LOCK_NODE)).getLock(name);
		DistLock behind = this.zk.registry(this.zk.backend(ExclusiveProtocol.LOCK_NODE)).getLock(name);
		assertThat(theirs.tryLock()).isTrue();
		List<String> order = new CopyOnWriteArrayList<>();
		CountDownLatch mayUnlock = new CountDownLatch(1);
		AtomicBoolean replaced = new AtomicBoolean();
		AtomicBoolean joined = new AtomicBoolean();
		mine.hook = (point, at) -> {
			if (point.equals("joining") && replaced.compareAndSet(false, true)) {
				// Until the backend heard that the old session ended: what it drops then is the old session's.
				this.zk.clients().replaceSessionHeardBy(mine, curator);
			}
			else if (point.equals("queued") && joined.compareAndSet(false, true)) {
				this.zk.threads().submit(() -> takeInTurn(behind, "behind", order, mayUnlock));
				await().atMost(Duration.ofSeconds(30)).until(() -> this.zk.line(name).size() == 2);
			}
		};
		Future<Boolean> taken = this.zk.threads().submit(() -> takeInTurn(lock, "mine", order, mayUnlock));
		await().atMost(Duration.ofSeconds(30)).untilTrue(joined);
		theirs.unlock();

		await().atMost(Duration.ofSeconds(30)).until(() -> !order.isEmpty());
		assertThat(order).containsExactly("mine");
		mayUnlock.countDown();
		assertThat(taken.get(60, TimeUnit.SECONDS)).isTrue();
		await().atMost(Duration.ofSeconds(30)).until(() -> order.size() == 2);
	}

	private static boolean takeInTurn(DistLock lock, String who, List<String> order, CountDownLatch mayUnlock)
			throws InterruptedException {
		if (!lock.tryLock(Duration.ofSeconds(60))) {
			return false;
		}
		order.add(who);
		mayUnlock.await(60, TimeUnit.SECONDS);
		lock.unlock();
		return true;
	}

	/**
	 * The client hears of the old session's end only after a waiter started over on the new session and
	 * took the lock there. That hold is the new session's and stays: before, it was reported lost with
	 * the old session's and its node deleted, and its holder's {@code unlock()} failed. A hold of the
	 * old session is reported lost.
	 */
	@ParameterizedTest
	@EnumSource(ExclusiveProtocol.class)
	void aHoldTakenOnTheNewSessionBeforeTheOldOnesEndIsHeardOfStays(ExclusiveProtocol protocol) throws Exception {
		CuratorFramework curator = this.zk.clients().newCurator(ZooKeeperTestClients.SESSION_TIMEOUT);
		ZooKeeperLockBackend mine = this.zk.backend(curator, protocol);
		LockRegistry registry = this.zk.registry(mine);
		DistLock lock = registry.getLock("heard-late-" + protocol);
		DistLock theirs = this.zk.registry(this.zk.backend(protocol)).getLock("heard-late-" + protocol);
		assertThat(theirs.tryLock()).isTrue();
		DistLock ofTheOldSession = registry.getLock("held-before-" + protocol);
		assertThat(ofTheOldSession.tryLock()).isTrue();
		CountDownLatch replaced = new CountDownLatch(1);
		CountDownLatch endArrived = new CountDownLatch(1);
		CountDownLatch mayHearEnd = new CountDownLatch(1);
		mine.hook = (point, name) -> {
			if (point.equals("line-read") && replaced.getCount() > 0) {
				this.zk.clients().replaceSession(curator);
				replaced.countDown();
			}
			else if (point.equals("session-lost")) {
				endArrived.countDown();
				mayHearEnd.await(60, TimeUnit.SECONDS);
			}
		};
		CountDownLatch held = new CountDownLatch(1);
		CountDownLatch mayUnlock = new CountDownLatch(1);
		Future<Boolean> holder = this.zk.threads().submit(() -> {
			if (!lock.tryLock(Duration.ofSeconds(60))) {
				return false;
			}
			held.countDown();
			mayUnlock.await(60, TimeUnit.SECONDS);
			lock.unlock();
			return true;
		});
		assertThat(replaced.await(30, TimeUnit.SECONDS)).isTrue();
		theirs.unlock();
		assertThat(held.await(60, TimeUnit.SECONDS)).isTrue();

		// Only now does the backend hear that the old session ended; then, that the new one connected.
		assertThat(endArrived.await(30, TimeUnit.SECONDS)).isTrue();
		mayHearEnd.countDown();
		await().atMost(Duration.ofSeconds(30)).until(() -> mine.health().up());
		mine.awaitBackgroundTasks();
		assertThat(lock.isLocked()).isTrue();
		mayUnlock.countDown();
		assertThat(holder.get(60, TimeUnit.SECONDS)).as("the holder's unlock").isTrue();
		assertThatThrownBy(ofTheOldSession::unlock).isInstanceOf(LockLostException.class);
	}

}
