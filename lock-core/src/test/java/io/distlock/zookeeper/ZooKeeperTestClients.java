package io.distlock.zookeeper;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryUntilElapsed;
import org.apache.curator.test.InstanceSpec;
import org.apache.zookeeper.KeeperException;

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

	ZooKeeperTestClients(String connectString) {
		this.connectString = connectString;
		this.counters = newCurator(SESSION_TIMEOUT);
	}

	/** @return a server spec on free ports with the short tick */
	static InstanceSpec spec(int serverId) {
		// "srvr" tells a test which server leads.
		return new InstanceSpec(null, -1, -1, -1, true, serverId, TICK_MILLIS, -1,
				Map.of("4lw.commands.whitelist", "srvr"));
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
		CuratorFramework curator = CuratorFrameworkFactory.builder()
			.connectString(this.connectString)
			.sessionTimeoutMs((int) sessionTimeout.toMillis())
			.connectionTimeoutMs((int) CONNECTION_TIMEOUT.toMillis())
			.retryPolicy(new RetryUntilElapsed((int) CONNECTION_TIMEOUT.toMillis(), 100))
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
		CuratorFramework curator = newCurator(SESSION_TIMEOUT);
		LockEngineOptions.Builder options = LockEngineOptions.builder().watchdogTimeout(watchdogTimeout);
		for (LockListener listener : listeners) {
			options.listener(listener);
		}
		ZooKeeperLockRegistry registry = ZooKeeperLockRegistry.owning(curator, "/distlock-test", options.build());
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
		try {
			curatorOf(registry).getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
		try {
			((AutoCloseable) registry).close();
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
