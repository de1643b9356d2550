package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.distlock.DistLock;
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

}
