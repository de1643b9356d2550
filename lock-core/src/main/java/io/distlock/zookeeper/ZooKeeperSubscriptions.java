package io.distlock.zookeeper;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.core.LockNotice;

/**
 * Announces the departures in the lines of read-write locks and semaphores: a persistent recursive
 * watch on each line that has waiters here, counted per path as the server keeps one watch per path
 * and session, and set again for a new session. (Exclusive locks' waiters are woken by one-shot
 * watches instead, see {@link ZooKeeperQueue}.)
 */
final class ZooKeeperSubscriptions {

	// Under the backend's name, which is the one users set levels for.
	private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

	private final ZooKeeperConnection connection;

	private final CuratorFramework client;

	private final Set<Subscription> subscriptions = ConcurrentHashMap.newKeySet();

	/** Subscriptions per lock path; a subscription adds and the last one removes under its lock. */
	private final ConcurrentHashMap<String, PathWatch> watched = new ConcurrentHashMap<>();

	ZooKeeperSubscriptions(ZooKeeperConnection connection) {
		this.connection = connection;
		this.client = connection.client();
	}

	/**
	 * Announces the deletion of the node at {@code path} ({@link AddWatchMode#PERSISTENT}) or of any
	 * node under it ({@link AddWatchMode#PERSISTENT_RECURSIVE}: a read-write lock's or semaphore's
	 * queue nodes, without waking anyone on each new node as a children watch would).
	 */
	AutoCloseable subscribePath(String path, AddWatchMode mode, Consumer<LockNotice> onRelease) {
		Subscription subscription = new Subscription(path, mode, onRelease);
		while (true) {
			PathWatch watch = this.watched.computeIfAbsent(path, any -> new PathWatch());
			synchronized (watch) {
				if (watch.retired) {
					continue;
				}
				try {
					subscription.watch();
				}
				catch (Exception ex) {
					if (watch.count == 0) {
						watch.retired = true;
						this.watched.remove(path, watch);
					}
					throw this.connection.failure(ex);
				}
				watch.count++;
				break;
			}
		}
		this.subscriptions.add(subscription);
		return () -> {
			if (this.subscriptions.remove(subscription)) {
				unsubscribe(subscription);
			}
		};
	}

	/**
	 * The server keeps one watch per path and session, whatever the number of watchers on it in the
	 * client; removing one watcher only removes it here (the server is merely asked whether it has
	 * the watch). So the subscriptions of each path are counted, and the last one to close removes
	 * the path's watches on the server too (all of this client's on that lock path).
	 */
	private void unsubscribe(Subscription subscription) {
		PathWatch watch = this.watched.get(subscription.path);
		if (watch == null) {
			subscription.unwatch(true);
			return;
		}
		synchronized (watch) {
			watch.count--;
			if (watch.count > 0) {
				subscription.unwatch(true);
				return;
			}
			watch.retired = true;
			this.watched.remove(subscription.path, watch);
			subscription.unwatchAll();
		}
	}

	/** Sets every watch again on the new session, and wakes every waiter. */
	void renewedSession() {
		for (Subscription subscription : this.subscriptions) {
			subscription.renewedSession();
		}
	}

	/**
	 * Ends every subscription.
	 * @param clientCloses whether the client closes next, which removes the server's watches with the session
	 */
	void closeAll(boolean clientCloses) {
		for (Subscription subscription : this.subscriptions) {
			if (clientCloses) {
				subscription.unwatch(true);
			}
			else {
				// The application's client stays open: the server's watches must go too.
				unsubscribe(subscription);
			}
		}
		this.subscriptions.clear();
	}

	/** How many subscriptions watch one path; retired once the last has gone (a new one starts afresh). */
	private static final class PathWatch {

		int count;

		boolean retired;

	}

	/** A persistent watch on one lock's node, which outlives each event, unlike a one-shot watch. */
	private final class Subscription implements Watcher {

		private final String path;

		private final AddWatchMode mode;

		private final Consumer<LockNotice> onRelease;

		Subscription(String path, AddWatchMode mode, Consumer<LockNotice> onRelease) {
			this.path = path;
			this.mode = mode;
			this.onRelease = onRelease;
		}

		void watch() throws Exception {
			ZooKeeperSubscriptions.this.client.watchers().add().withMode(this.mode).usingWatcher(this)
				.forPath(this.path);
		}

		void unwatch(boolean locally) {
			try {
				if (locally) {
					ZooKeeperSubscriptions.this.client.watchers().remove(this).ofType(WatcherType.Any).locally().quietly()
						.forPath(this.path);
				}
				else {
					ZooKeeperSubscriptions.this.client.watchers().remove(this).ofType(WatcherType.Any).quietly()
						.forPath(this.path);
				}
			}
			catch (Exception ex) {
				log.debug("Could not remove the watch on {}", this.path, ex);
			}
		}

		/** Removes every watch of this client on the path, here and on the server. */
		void unwatchAll() {
			try {
				ZooKeeperSubscriptions.this.client.watchers().removeAll().ofType(WatcherType.Any).quietly()
					.forPath(this.path);
			}
			catch (Exception ex) {
				log.debug("Could not remove the watches on {}", this.path, ex);
			}
		}

		@Override
		public void process(WatchedEvent event) {
			if (event.getType() == Event.EventType.NodeDeleted) {
				this.onRelease.accept(LockNotice.RELEASED);
			}
		}

		void renewedSession() {
			try {
				// Watches belong to a session: a new session has none until they are set again.
				watch();
			}
			catch (Exception ex) {
				log.debug("Could not watch {} again after reconnecting", this.path, ex);
			}
			// A release during the outage was not announced: the waiters look.
			this.onRelease.accept(LockNotice.RELEASED);
		}

	}

}
