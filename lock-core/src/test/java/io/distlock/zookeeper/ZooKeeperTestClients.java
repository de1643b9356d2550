package io.distlock.zookeeper;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryUntilElapsed;
import org.apache.curator.test.InstanceSpec;
import java.util.concurrent.CountDownLatch;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

import io.distlock.LockListener;
import io.distlock.LockRegistry;
import io.distlock.contract.SharedCounter;
import io.distlock.core.LockEngineOptions;

/**
 * Curator clients and lock registries for the ZooKeeper tests, each client with its own session,
 * and a counter kept in a znode.
 */
final class ZooKeeperTestClients implements AutoCloseable {

	/**
	 * The servers' tick: ZooKeeper accepts session timeouts from 2 to 20 ticks, so a short tick lets
	 * the tests expire sessions in seconds rather than the default minimum of 6 s.
	 */
	static final int TICK_MILLIS = 250;

	static final Duration SESSION_TIMEOUT = Duration.ofSeconds(4);

	static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(1);

	private final String connectString;

	private final Map<LockRegistry, CuratorFramework> clients = new ConcurrentHashMap<>();

	private final CuratorFramework counters;

	private final ZooKeeperLockRegistry.ExclusiveProtocol protocol;

	ZooKeeperTestClients(String connectString) {
		this(connectString, ZooKeeperLockRegistry.ExclusiveProtocol.LOCK_NODE);
	}

	/** @param protocol how the registries made here hold exclusive locks */
	ZooKeeperTestClients(String connectString, ZooKeeperLockRegistry.ExclusiveProtocol protocol) {
		this.connectString = connectString;
		this.protocol = protocol;
		this.counters = newCurator(SESSION_TIMEOUT);
	}

	/** @return a server spec of an ensemble's member, on free ports with the short tick */
	static InstanceSpec spec(int serverId) {
		return spec(-1, serverId);
	}

	/**
	 * @return a single server's spec with the short tick, whose client port the server binds itself
	 * (port 0): a port picked free beforehand may be taken by the other test JVM before the server binds
	 * it. {@code TestingServer.getPort()} then tells the port, and a restart binds the same one.
	 */
	static InstanceSpec standaloneSpec() {
		return spec(0, 1);
	}

	private static InstanceSpec spec(int port, int serverId) {
		// "srvr" tells a test which server leads, "wchp" which sessions watch a path. Without forceSync
		// every write waits for an fsync of the transaction log, which on a busy test machine can take
		// longer than a whole lock wait.
		return new InstanceSpec(null, port, -1, -1, true, serverId, TICK_MILLIS, -1,
				Map.of("4lw.commands.whitelist", "srvr,wchp", "forceSync", "no"));
	}

	/** @return the server's mode ("leader", "follower", "standalone"), or "down" */
	static String mode(InstanceSpec spec) {
		try (java.net.Socket socket = new java.net.Socket("127.0.0.1", spec.getPort())) {
			socket.setSoTimeout(2000);
			socket.getOutputStream().write("srvr".getBytes());
			socket.getOutputStream().flush();
			String answer = new String(socket.getInputStream().readAllBytes());
			for (String line : answer.split("\n")) {
				if (line.startsWith("Mode: ")) {
					return line.substring(6).trim();
				}
			}
			return "down";
		}
		catch (java.io.IOException ex) {
			return "down";
		}
	}

	/** @return a started client with its own session */
	CuratorFramework newCurator(Duration sessionTimeout) {
		return newCurator(sessionTimeout, CONNECTION_TIMEOUT);
	}

	/**
	 * @param connectionTimeout how long Curator waits for a connection; once the ensemble tracker has
	 * seen the servers' own list, Curator replaces the session (losing its holds) after a disconnect
	 * longer than the shorter of this and the session timeout
	 * @return a started client with its own session
	 */
	CuratorFramework newCurator(Duration sessionTimeout, Duration connectionTimeout) {
		CuratorFramework curator = CuratorFrameworkFactory.builder()
			.connectString(this.connectString)
			.sessionTimeoutMs((int) sessionTimeout.toMillis())
			.connectionTimeoutMs((int) connectionTimeout.toMillis())
			.retryPolicy(new RetryUntilElapsed((int) connectionTimeout.toMillis(), 100))
			.build();
		curator.start();
		try {
			if (!curator.blockUntilConnected(20, TimeUnit.SECONDS)) {
				throw new IllegalStateException("No ZooKeeper at " + this.connectString);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		return curator;
	}

	/** @return a registry owning a client of its own */
	LockRegistry newRegistry(Duration watchdogTimeout, LockListener... listeners) {
		return newRegistry(watchdogTimeout, CONNECTION_TIMEOUT, listeners);
	}

	/** @return a registry owning a client of its own, with the given connection timeout */
	LockRegistry newRegistry(Duration watchdogTimeout, Duration connectionTimeout, LockListener... listeners) {
		CuratorFramework curator = newCurator(SESSION_TIMEOUT, connectionTimeout);
		LockEngineOptions.Builder options = LockEngineOptions.builder().watchdogTimeout(watchdogTimeout);
		for (LockListener listener : listeners) {
			options.listener(listener);
		}
		ZooKeeperLockRegistry registry = ZooKeeperLockRegistry.owning(curator, "/distlock-test", options.build(),
				this.protocol);
		this.clients.put(registry, curator);
		return registry;
	}

	/** @return the Curator client under a registry made here */
	CuratorFramework curatorOf(LockRegistry registry) {
		return this.clients.get(registry);
	}

	/**
	 * Ends a client as a crash would: it stops talking to the ensemble without closing its session,
	 * which the ensemble then expires after the session timeout, deleting the client's nodes.
	 */
	void crash(LockRegistry registry) {
		cutOff(curatorOf(registry));
		try {
			((AutoCloseable) registry).close();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * The client stops talking to the ensemble without closing its session, as a crashed, frozen or
	 * partitioned process would; the ensemble expires the session after its timeout. ZooKeeper's
	 * {@code injectSessionExpiration()} announces the expiry to Curator before it marks the handle
	 * closed, and Curator closing a handle that still looks alive would close the session on the
	 * server at once; so the client's event thread is held in a watch until the handle is closed.
	 */
	void cutOff(CuratorFramework curator) {
		try {
			ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
			String path = "/distlock-test-cut/" + java.util.UUID.randomUUID();
			CountDownLatch inWatcher = new CountDownLatch(1);
			CountDownLatch handleClosed = new CountDownLatch(1);
			zk.exists(path, event -> {
				inWatcher.countDown();
				try {
					handleClosed.await(10, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			});
			this.counters.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(path);
			if (!inWatcher.await(10, TimeUnit.SECONDS)) {
				throw new IllegalStateException("The client's event thread did not take the watch event");
			}
			zk.getTestable().injectSessionExpiration();
			handleClosed.countDown();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Ends {@code curator}'s session, as {@link #cutOff} does, the first time {@code backend} reaches
	 * {@code point}: through the handle the call in progress took, whose next request meets the expiry.
	 * @return set once the session was ended
	 */
	AtomicBoolean cutOffAt(ZooKeeperLockBackend backend, CuratorFramework curator, String point) {
		AtomicBoolean cut = new AtomicBoolean();
		backend.hook = (at, name) -> {
			if (at.equals(point) && cut.compareAndSet(false, true)) {
				cutOff(curator);
			}
		};
		return cut;
	}

	/**
	 * Ends {@code curator}'s session, as {@link #cutOff} does, and returns once Curator has connected a
	 * new one.
	 */
	void replaceSession(CuratorFramework curator) {
		long old = sessionOf(curator);
		cutOff(curator);
		await().atMost(Duration.ofSeconds(20))
			.until(() -> curator.getZookeeperClient().isConnected() && sessionOf(curator) != old);
	}

	/**
	 * Replaces {@code curator}'s session, as {@link #replaceSession} does, the first time
	 * {@code backend} reaches {@code point}: the call in progress goes on once the new session is connected.
	 * @return set once the new session is connected
	 */
	AtomicBoolean replaceSessionAt(ZooKeeperLockBackend backend, CuratorFramework curator, String point) {
		AtomicBoolean replaced = new AtomicBoolean();
		AtomicBoolean reached = new AtomicBoolean();
		backend.hook = (at, name) -> {
			if (at.equals(point) && reached.compareAndSet(false, true)) {
				replaceSession(curator);
				replaced.set(true);
			}
		};
		return replaced;
	}

	/**
	 * Replaces {@code curator}'s session, as {@link #replaceSession} does, and returns once
	 * {@code backend} (of that client, used without a registry) has heard that the old one ended.
	 */
	void replaceSessionHeardBy(ZooKeeperLockBackend backend, CuratorFramework curator) throws InterruptedException {
		CountDownLatch heard = new CountDownLatch(1);
		backend.onHoldsLost((holds, reason) -> heard.countDown());
		replaceSession(curator);
		if (!heard.await(30, TimeUnit.SECONDS)) {
			throw new IllegalStateException("The backend did not hear that the session ended");
		}
	}

	/**
	 * Makes {@code backend} handle the end of a session at the first read of the session after it
	 * reaches {@code point} for lock {@code name}, while no session can be read, so that it gives every
	 * hold up. (In Curator the session reported ended is a replaced one; the handling leaves the same
	 * state for the live one when it cannot read which session is live.) Other points go to {@code others}.
	 * @return set once the handling is done
	 */
	static AtomicBoolean handleSessionEndUnreadableAt(ZooKeeperLockBackend backend, String point, String name,
			ZooKeeperLockBackend.Hook others) {
		AtomicInteger phase = new AtomicInteger();
		AtomicBoolean handled = new AtomicBoolean();
		backend.hook = (at, lock) -> {
			if (at.equals(point) && lock.equals(name)) {
				phase.compareAndSet(0, 1);
			}
			else if (at.equals("session-reading") && phase.compareAndSet(1, 2)) {
				backend.connectionChanged(ConnectionState.LOST);
				phase.set(3);
				handled.set(true);
			}
			else if (at.equals("session-reading") && phase.get() == 2) {
				throw new IllegalStateException("Curator's queued background failure");
			}
			else {
				others.at(at, lock);
			}
		};
		return handled;
	}

	private static long sessionOf(CuratorFramework curator) {
		try {
			return curator.getZookeeperClient().getZooKeeper().getSessionId();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** @return a counter in a persistent znode, read and written in two separate steps */
	SharedCounter counter(String name) {
		String path = "/distlock-test-counters/" + name;
		try {
			this.counters.create().orSetData().creatingParentsIfNeeded().forPath(path, "0".getBytes());
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
		return new SharedCounter() {

			@Override
			public long get() {
				try {
					return Long.parseLong(new String(ZooKeeperTestClients.this.counters.getData().forPath(path)));
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			}

			@Override
			public void set(long value) {
				try {
					ZooKeeperTestClients.this.counters.setData().forPath(path, Long.toString(value).getBytes());
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			}

		};
	}

	/** @return whether the exception, or one of its causes, is ZooKeeper's connection loss */
	static boolean isConnectionLoss(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof KeeperException.ConnectionLossException) {
				return true;
			}
		}
		return false;
	}

	@Override
	public void close() {
		this.clients.keySet().forEach(registry -> {
			try {
				((AutoCloseable) registry).close();
			}
			catch (Exception ex) {
				// Closed by its test already.
			}
		});
		this.clients.clear();
		this.counters.close();
	}

}
