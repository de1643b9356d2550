package io.distlock.zookeeper;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

import io.distlock.LockSettings;
import io.distlock.zookeeper.ZooKeeperLockBackend.ZooKeeperCallException;

/**
 * The Curator client as the parts of {@link ZooKeeperLockBackend} use it: where the lock nodes
 * are, the current session, the tests' hook, and failures turned into exceptions that name the
 * ensemble.
 */
final class ZooKeeperConnection {

	private static final Duration NEW_SESSION_WAIT = Duration.ofMillis(500);

	private static final int MAX_RESTARTS = 3;

	/** How often {@link #zooKeeperOrNull()} asks Curator for the handle before it gives up. */
	private static final int MAX_HANDLE_ASKS = 3;

	private final CuratorFramework client;

	private final String basePath;

	private final Duration connectionTimeout;

	private final String ensemble;

	private final ZooKeeperLockBackend.Hook hook;

	/**
	 * @param client a started Curator client
	 * @param basePath the parent of all lock nodes, e.g. {@code /distlock}
	 * @param connectionTimeout how long a call waits for a connection (for messages)
	 * @param hook called at the points where the tests force an interleaving
	 */
	ZooKeeperConnection(CuratorFramework client, String basePath, Duration connectionTimeout,
			ZooKeeperLockBackend.Hook hook) {
		this.client = client;
		this.basePath = validBasePath(basePath);
		this.connectionTimeout = connectionTimeout;
		this.ensemble = ensembleOf(client);
		this.hook = hook;
	}

	static String validBasePath(String basePath) {
		LockSettings.basePath(basePath);
		// What the shared rule lets through, ZooKeeper may still refuse ('.' segments, reserved names).
		ZKPaths.fixForNamespace(null, basePath);
		return basePath;
	}

	private static String ensembleOf(CuratorFramework client) {
		// ZooKeeper connect strings carry no credentials (digest auth is added separately).
		String connect = client.getZookeeperClient().getCurrentConnectionString();
		String namespace = client.getNamespace();
		return (namespace == null || namespace.isEmpty()) ? connect : connect + " (namespace /" + namespace + ")";
	}

	CuratorFramework client() {
		return this.client;
	}

	String basePath() {
		return this.basePath;
	}

	Duration connectionTimeout() {
		return this.connectionTimeout;
	}

	String ensemble() {
		return this.ensemble;
	}

	String explain(RuntimeException failure) {
		Throwable cause = failure;
		while (cause != null && !(cause instanceof KeeperException) && !(cause instanceof InterruptedException)) {
			cause = cause.getCause();
		}
		String at = "ZooKeeper at " + this.ensemble;
		if (cause instanceof InterruptedException) {
			return "the call to " + at + " was interrupted";
		}
		if (!(cause instanceof KeeperException keeper)) {
			return at + ": " + failure.getMessage();
		}
		return switch (keeper.code()) {
			case CONNECTIONLOSS, OPERATIONTIMEOUT -> at + " did not answer within " + seconds(this.connectionTimeout)
					+ " (connection loss; is a majority of the ensemble up and reachable?)";
			case SESSIONEXPIRED -> at + " expired this client's session; its locks are gone";
			case NOAUTH -> at + " refused access to " + this.basePath + " (NOAUTH: the client's credentials lack the ACL's rights)";
			case AUTHFAILED -> at + " rejected the client's credentials (AUTHFAILED)";
			default -> at + " answered " + keeper.code();
		};
	}

	private static String seconds(Duration duration) {
		return (duration.toMillis() % 1000 == 0) ? duration.toSeconds() + " s" : duration.toMillis() + " ms";
	}

	String path(String name) {
		return ZKPaths.makePath(this.basePath, ZooKeeperNodeNames.nodeName(name));
	}

	/** @return the path as the ensemble knows it, with the client's namespace in front */
	String fullPath(String path) {
		return ZKPaths.fixForNamespace(this.client.getNamespace(), path);
	}

	/** @return whether the client is connected now, where Curator's calls would go through without waiting */
	boolean isConnected() {
		return this.client.getZookeeperClient().isConnected();
	}

	/**
	 * One look at a lock's line through one session's handle.
	 * @param <T> the look's answer
	 */
	interface Look<T> {

		/**
		 * @param zk the current session's handle when the look began
		 * @param tries how many looks this one is, from 1
		 * @return the answer, or {@code null} to look again
		 */
		T at(ZooKeeper zk, int tries) throws Exception;

	}

	/**
	 * Looks until a look answers. A look whose calls fail because Curator replaced the session meanwhile
	 * (or the session moved to another server) is started over on the current session, which connects
	 * within moments to a reachable ensemble (the ensemble deletes the old session's nodes); if it does
	 * not connect within half a second (or the connection timeout, if shorter), the ensemble is out of
	 * reach, and the caller hears of it at once.
	 */
	<T> T lookUntilAnswered(Look<T> look) throws Exception {
		int restarts = 0;
		for (int tries = 1;; tries++) {
			ZooKeeper zk = zooKeeper();
			try {
				T answer = look.at(zk, tries);
				if (answer != null) {
					return answer;
				}
			}
			catch (KeeperException.SessionExpiredException | KeeperException.SessionMovedException replaced) {
				if (++restarts > MAX_RESTARTS || !newSessionConnected()) {
					throw replaced;
				}
			}
		}
	}

	private boolean newSessionConnected() throws InterruptedException {
		if (isConnected()) {
			return true;
		}
		long millis = Math.min(NEW_SESSION_WAIT.toMillis(), this.client.getZookeeperClient().getConnectionTimeoutMs());
		return this.client.blockUntilConnected((int) millis, TimeUnit.MILLISECONDS);
	}

	/**
	 * Waits for a connection, up to the connection timeout, if the client has none now: the raw
	 * handle's calls fail at once while the client moves to another server, where Curator's own calls
	 * wait for it, so a lock call that starts with them must wait first.
	 */
	void awaitConnection() throws InterruptedException {
		if (!isConnected()) {
			this.client.getZookeeperClient().blockUntilConnectedOrTimedOut();
		}
	}

	/** @return the current session's handle, which can never act for a later session */
	ZooKeeper zooKeeper() throws Exception {
		return this.client.getZookeeperClient().getZooKeeper();
	}

	/**
	 * @return the current session's id, or 0 (no session's) if the handle cannot be had
	 */
	long sessionIdOrNone() {
		ZooKeeper zk = zooKeeperOrNull();
		return (zk != null) ? zk.getSessionId() : 0;
	}

	/**
	 * @return the current session's handle, or {@code null} if it cannot be had. Curator hands a failure
	 * it queued in the background (a connection timeout, say) to whoever asks for the handle next, one
	 * failure per ask: asked again, it gives the handle.
	 */
	ZooKeeper zooKeeperOrNull() {
		for (int asks = 1;; asks++) {
			try {
				// Where the tests stand in for Curator's failure.
				this.hook.at("session-reading", "");
				return zooKeeper();
			}
			catch (Exception ex) {
				if (ex instanceof InterruptedException) {
					Thread.currentThread().interrupt();
					return null;
				}
				if (asks == MAX_HANDLE_ASKS) {
					return null;
				}
			}
		}
	}

	long sessionId() {
		try {
			return zooKeeper().getSessionId();
		}
		catch (Exception ex) {
			throw failure(ex);
		}
	}

	Duration sessionTimeout() {
		try {
			return Duration.ofMillis(zooKeeper().getSessionTimeout());
		}
		catch (Exception ex) {
			return Duration.ofMillis(this.client.getZookeeperClient().getConnectionTimeoutMs());
		}
	}

	RuntimeException failure(Exception ex) {
		if (ex instanceof InterruptedException) {
			// Kept for the engine, which tells a deadline's interrupt from the caller's.
			Thread.currentThread().interrupt();
		}
		if (ex instanceof RuntimeException runtime) {
			return runtime;
		}
		ZooKeeperCallException failure = new ZooKeeperCallException(ex);
		return new ZooKeeperCallException(explain(failure), ex);
	}

	void hook(String point, String name) throws Exception {
		this.hook.at(point, name);
	}

	void hookQuietly(String point, String name) {
		try {
			this.hook.at(point, name);
		}
		catch (Exception ex) {
			throw failure(ex);
		}
	}

}
