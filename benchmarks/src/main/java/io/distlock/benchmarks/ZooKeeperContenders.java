package io.distlock.benchmarks;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;

import io.distlock.core.LockEngineOptions;
import io.distlock.zookeeper.ZooKeeperLockRegistry;
import io.distlock.zookeeper.ZooKeeperLockRegistry.ExclusiveProtocol;

/**
 * The ZooKeeper locks compared: distlock's {@link ZooKeeperLockRegistry} and Curator's own
 * {@link InterProcessMutex}, each client with a Curator client (one ZooKeeper session) of its own,
 * as one application instance would have.
 */
final class ZooKeeperContenders {

	private ZooKeeperContenders() {
	}

	static List<Contender> all(String connectString) {
		return List.of(distlock(connectString), distlockLine(connectString), curator(connectString));
	}

	/**
	 * A server spec on free ports. Without {@code forceSync=no} every write waits for an fsync of the
	 * transaction log, and on this machine's disk that, not the lock, is what would be measured.
	 */
	static InstanceSpec spec(int serverId) {
		return new InstanceSpec(null, -1, -1, -1, true, serverId, -1, -1, Map.of("forceSync", "no"));
	}

	/** Three server specs whose nine ports are all different (free ports are drawn independently). */
	static List<InstanceSpec> ensemble() {
		for (int attempt = 0; attempt < 20; attempt++) {
			List<InstanceSpec> specs = List.of(spec(1), spec(2), spec(3));
			Set<Integer> ports = new HashSet<>();
			for (InstanceSpec spec : specs) {
				ports.add(spec.getPort());
				ports.add(spec.getElectionPort());
				ports.add(spec.getQuorumPort());
			}
			if (ports.size() == 9) {
				return specs;
			}
		}
		throw new IllegalStateException("No nine distinct free ports for a 3-server ensemble");
	}

	static Contender distlock(String connectString) {
		return distlock(connectString, "distlock", ExclusiveProtocol.LOCK_NODE);
	}

	/** distlock with its holders first in line, as Curator's are ({@link ExclusiveProtocol#LINE}). */
	static Contender distlockLine(String connectString) {
		return distlock(connectString, "distlock-line", ExclusiveProtocol.LINE);
	}

	private static Contender distlock(String connectString, String name, ExclusiveProtocol protocol) {
		return new Contender() {
			public String name() {
				return name;
			}

			public Client newClient() {
				// A base path per protocol: instances of the two never share a lock.
				ZooKeeperLockRegistry registry = ZooKeeperLockRegistry.owning(curator(connectString, name()),
						"/" + name + "-bench", LockEngineOptions.defaults(), protocol);
				return Client.of(registry::getLock, registry::close);
			}
		};
	}

	static Contender curator(String connectString) {
		return new Contender() {
			public String name() {
				return "curator";
			}

			public Client newClient() {
				CuratorFramework client = curator(connectString, name());
				// One mutex per key and client, shared by the client's threads: InterProcessMutex keeps
				// its holds per thread, as a Lock does.
				Map<String, Lock> locks = new ConcurrentHashMap<>();
				return Client.of(key -> locks.computeIfAbsent(key,
						name -> new MutexLock(new InterProcessMutex(client, "/curator-bench/" + name))), client::close);
			}
		};
	}

	/** A started Curator client (one ZooKeeper session), connected; also the shared-kinds scenarios'. */
	static CuratorFramework curator(String connectString, String library) {
		CuratorFramework client = CuratorFrameworkFactory.newClient(connectString, 15_000, 5_000,
				new ExponentialBackoffRetry(100, 3));
		client.start();
		try {
			if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
				client.close();
				throw new IllegalStateException(library + ": no ZooKeeper at " + connectString);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			client.close();
			throw new IllegalStateException(ex);
		}
		return client;
	}

	/** {@link InterProcessMutex} seen as a {@link Lock}, for the scenarios' loops. */
	record MutexLock(InterProcessMutex mutex) implements Lock {

		@Override
		public void lock() {
			try {
				this.mutex.acquire();
			}
			catch (Exception ex) {
				throw new IllegalStateException("InterProcessMutex.acquire failed", ex);
			}
		}

		@Override
		public void unlock() {
			try {
				this.mutex.release();
			}
			catch (Exception ex) {
				throw new IllegalStateException("InterProcessMutex.release failed", ex);
			}
		}

		@Override
		public void lockInterruptibly() {
			lock();
		}

		@Override
		public boolean tryLock() {
			throw new UnsupportedOperationException();
		}

		@Override
		public boolean tryLock(long time, TimeUnit unit) {
			throw new UnsupportedOperationException();
		}

		@Override
		public Condition newCondition() {
			throw new UnsupportedOperationException();
		}

	}

}
