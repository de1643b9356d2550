package io.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import io.distlock.LockRegistry;
import io.distlock.core.BackendLockRegistry;
import io.distlock.core.LockEngineOptions;

/**
 * Fresh clients of the class's ZooKeeper server for every test, under one base path: backends and
 * registries that each have a session of their own, an observer client to look at the nodes, and a
 * thread pool for the test's waiters. After the test's own {@code @AfterEach}, the pool is stopped
 * first (its waiters must not see their clients close under them), then everything made here is
 * closed, the latest first, so that a registry closes before the backend it runs on:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final ZooKeeperServerExtension zooKeeper = new ZooKeeperServerExtension();
 *
 * @RegisterExtension
 * final ZooKeeperClientsExtension zk = new ZooKeeperClientsExtension(zooKeeper, "/distlock-line");
 * }</pre>
 */
final class ZooKeeperClientsExtension implements BeforeEachCallback, AfterEachCallback {

	private final ZooKeeperServerExtension server;

	private final String basePath;

	private final Deque<AutoCloseable> closing = new ArrayDeque<>();

	private ZooKeeperTestClients clients;

	private CuratorFramework observer;

	private ExecutorService threads;

	ZooKeeperClientsExtension(ZooKeeperServerExtension server, String basePath) {
		this.server = server;
		this.basePath = basePath;
	}

	/** @return the base path of every backend made here */
	String basePath() {
		return this.basePath;
	}

	/** @return the test's clients of the server */
	ZooKeeperTestClients clients() {
		started();
		return this.clients;
	}

	/** @return a client of the test's own to read the nodes with */
	CuratorFramework observer() {
		started();
		return this.observer;
	}

	/** @return the test's thread pool, stopped before its clients close */
	ExecutorService threads() {
		started();
		return this.threads;
	}

	/** @return a backend on a client of its own (which it closes), closed after the test */
	ZooKeeperLockBackend backend() {
		return backend(clients().newCurator(ZooKeeperTestClients.SESSION_TIMEOUT));
	}

	/** @return a backend that owns {@code curator} (and closes it), closed after the test */
	ZooKeeperLockBackend backend(CuratorFramework curator) {
		return backend(curator, ZooKeeperLockRegistry.ExclusiveProtocol.LOCK_NODE);
	}

	/** @return a backend on a client of its own that holds exclusive locks by {@code protocol}, closed after the test */
	ZooKeeperLockBackend backend(ZooKeeperLockRegistry.ExclusiveProtocol protocol) {
		return backend(clients().newCurator(ZooKeeperTestClients.SESSION_TIMEOUT), protocol);
	}

	/** @return a backend that owns {@code curator} and holds exclusive locks by {@code protocol}, closed after the test */
	ZooKeeperLockBackend backend(CuratorFramework curator, ZooKeeperLockRegistry.ExclusiveProtocol protocol) {
		return closeAfterTest(new ZooKeeperLockBackend(curator, this.basePath, ZooKeeperTestClients.CONNECTION_TIMEOUT,
				true, protocol));
	}

	/** @return a registry on {@code backend}, with a watchdog longer than any test, closed after the test */
	LockRegistry registry(ZooKeeperLockBackend backend) {
		return closeAfterTest(new BackendLockRegistry(backend,
				LockEngineOptions.builder().watchdogTimeout(Duration.ofSeconds(30)).build()));
	}

	/** @return {@code closeable}, closed after the test before anything made earlier */
	<T extends AutoCloseable> T closeAfterTest(T closeable) {
		started();
		synchronized (this.closing) {
			this.closing.push(closeable);
		}
		return closeable;
	}

	/** @return the path of the lock's node */
	String lockPath(String name) {
		return this.basePath + "/" + ZooKeeperNodeNames.nodeName(name);
	}

	/** @return the places in the lock's line, in line order */
	List<String> line(String name) throws Exception {
		try {
			List<String> nodes = new ArrayList<>(observer().getChildren().forPath(lockPath(name) + ".q"));
			// A place's name ends in its 10-digit sequence number.
			nodes.sort((a, b) -> a.substring(a.length() - 10).compareTo(b.substring(b.length() - 10)));
			return nodes;
		}
		catch (KeeperException.NoNodeException none) {
			return List.of();
		}
	}

	/** @see ZooKeeperServerExtension#watchesOn(String) */
	int serverWatchesOn(String path) throws Exception {
		return this.server.watchesOn(path);
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		this.threads = Executors.newCachedThreadPool();
		this.clients = new ZooKeeperTestClients(this.server.connectString());
		this.observer = this.clients.newCurator(ZooKeeperTestClients.SESSION_TIMEOUT);
	}

	@Override
	public void afterEach(ExtensionContext context) {
		if (this.threads != null) {
			this.threads.shutdownNow();
		}
		while (true) {
			AutoCloseable next;
			synchronized (this.closing) {
				next = this.closing.poll();
			}
			if (next == null) {
				break;
			}
			try {
				next.close();
			}
			catch (Exception ex) {
				// Closed by its test already.
			}
		}
		if (this.observer != null) {
			this.observer.close();
		}
		if (this.clients != null) {
			this.clients.close();
		}
		this.threads = null;
		this.observer = null;
		this.clients = null;
	}

	private void started() {
		if (this.clients == null) {
			throw new IllegalStateException("ZooKeeperClientsExtension must be registered on an instance field");
		}
	}

}
