package io.distlock.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.HoldKind;
import io.distlock.core.LockBackend.Release;
import io.distlock.zookeeper.ZooKeeperHolds.Held;

/**
 * Deletes this client's lock nodes: on its owner's release, when its lease runs out, a stale node
 * met by an acquisition, a node left by a create whose answer never came; what could not be
 * deleted is tried again on reconnection. Every delete goes through {@link #deleteNode}, which
 * lets one deleter handle a node at a time.
 */
final class ZooKeeperDeletions {

	// Under the backend's name, which is the one users set levels for.
	private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

	/** How long a release keeps re-sending a delete that met a connection loss, when not told. */
	private static final Duration DEFAULT_CALL_WAIT = Duration.ofSeconds(5);

	private final ZooKeeperConnection connection;

	private final ZooKeeperHolds holds;

	/** The czxids of the nodes a deleter of this client is deleting now: one deleter per node at a time. */
	private final Set<Long> deleting = ConcurrentHashMap.newKeySet();

	/** Nodes whose lease ran out but could not be deleted at the time; retried on reconnection. */
	private final Set<Held> undeleted = ConcurrentHashMap.newKeySet();

	/** Creates whose answer never came; their nodes, if they landed, are deleted (retried on reconnection). */
	private final Set<Leftover> leftovers = ConcurrentHashMap.newKeySet();

	/** Queue places (read, write and permit nodes) that could not be deleted yet; retried on reconnection. */
	private final Set<Removal> removals = ConcurrentHashMap.newKeySet();

	ZooKeeperDeletions(ZooKeeperConnection connection, ZooKeeperHolds holds) {
		this.connection = connection;
		this.holds = holds;
	}

	/** What a delete found. */
	enum Deleted {
		/** This call deleted the node. */
		DELETED,
		/** The node was not there (any more). */
		ABSENT,
		/** Another deleter of this client is deleting it now. */
		BUSY
	}

	/**
	 * Deletes the hold's node for its owner's release, sending the delete again after a connection
	 * loss until {@code within} (by default {@link #DEFAULT_CALL_WAIT}) has passed.
	 */
	Release release(String name, String owner, int heldCount, Duration within) {
		return release(this.holds.get(name), owner, heldCount, within, null);
	}

	/**
	 * As {@link #release(String, String, int, Duration)}, deleting {@code companion} (if given) in the
	 * same transaction as the hold's node, when it can.
	 */
	Release release(String name, String owner, int heldCount, Duration within, Companion companion) {
		return release(this.holds.get(name), owner, heldCount, within, companion);
	}

	/** As {@link #release(String, String, int, Duration)}, for the hold found (of any kind), or {@code null}. */
	Release release(Held hold, String owner, int heldCount, Duration within) {
		return release(hold, owner, heldCount, within, null);
	}

	/**
	 * A node of this session to delete together with a hold's own: the queue place the hold was
	 * taken through, whose deletion wakes the waiter behind it. One transaction instead of two
	 * writes, and the waiter woken finds the lock free.
	 */
	static final class Companion {

		final String path;

		/**
		 * The queue's record of that place: what the release's {@code holdEnded} takes out of the
		 * queue's books, and only if it is still there (a later hold of the client, taken through a
		 * place of its own, may have replaced it meanwhile).
		 */
		final Object place;

		/** Set once the companion went with the hold's node. */
		volatile boolean deleted;

		Companion(String path, Object place) {
			this.path = path;
			this.place = place;
		}

	}

	private Release release(Held hold, String owner, int heldCount, Duration within, Companion companion) {
		if (hold == null || !hold.owner.equals(owner)) {
			return Release.NOT_HELD;
		}
		if (heldCount > 1) {
			// The engine counts re-entries; ZooKeeper has one node per hold whatever the count.
			boolean live;
			synchronized (hold) {
				live = !hold.gone && hold.session == this.connection.sessionId();
			}
			return live ? Release.DECREMENTED : Release.NOT_HELD;
		}
		synchronized (hold) {
			if (hold.gone) {
				this.holds.remove(hold);
				return Release.NOT_HELD;
			}
			hold.releasing = true;
		}
		this.connection.hookQuietly("release-started", hold.name);
		long deadline = System.nanoTime() + ZooKeeperHolds.saturatedNanos((within != null) ? within : DEFAULT_CALL_WAIT);
		boolean sent = false;
		while (true) {
			try {
				Release result = delete(hold, sent, companion) ? Release.RELEASED : Release.NOT_HELD;
				this.holds.forget(hold);
				return result;
			}
			catch (KeeperException.ConnectionLossException | KeeperException.OperationTimeoutException lost) {
				// The delete may have landed: a node found missing on the next try is then this release's doing.
				sent = true;
				if (System.nanoTime() - deadline >= 0) {
					throw releaseFailed(hold, lost);
				}
				pause();
			}
			catch (KeeperException.SessionExpiredException gone) {
				// Met by any call of the release (the read before a shared hold's delete, the transaction
				// that deletes a hold's node with its place), as the single delete answers it: the hold is
				// gone with its session. The ensemble deletes the session's
				// nodes once it expires it (for a handle closed here, up to a session timeout later), and
				// nobody can take the lock before that.
				this.holds.forget(hold);
				return Release.NOT_HELD;
			}
			catch (Exception ex) {
				throw releaseFailed(hold, ex);
			}
		}
	}

	private RuntimeException releaseFailed(Held hold, Exception cause) {
		synchronized (hold) {
			hold.releasing = false;
		}
		// The engine drops the hold; the node goes when its lease runs out, or with the session.
		this.holds.extendIfLive(hold, Duration.ofNanos(Math.max(0, hold.deadline - System.nanoTime())));
		return this.connection.failure(cause);
	}

	private static void pause() {
		try {
			Thread.sleep(50);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Deletes the hold's node through the handle of the session that created it.
	 * @param resent whether an earlier try may have deleted it already
	 * @return whether this hold's node was there and is now deleted (or was deleted by the earlier try)
	 */
	private boolean delete(Held hold, boolean resent, Companion companion) throws Exception {
		ZooKeeper zk = this.connection.zooKeeper();
		if (zk.getSessionId() != hold.session) {
			// That session is over: the ensemble deleted (or is about to delete) its nodes.
			return false;
		}
		// A first try for a live exclusive hold deletes without reading the node first (see deleteNode).
		Held unread = (!resent && hold.kind == HoldKind.EXCLUSIVE) ? hold : null;
		Deleted deleted = deleteNode(zk, hold.path, hold.czxid, unread, companion);
		return deleted == Deleted.DELETED || (resent && deleted == Deleted.ABSENT);
	}

	/**
	 * Deletes the node at {@code path} if it is the one created at {@code czxid}. Every lock node has
	 * version 0, so the versioned delete cannot tell a node from the next one created under the
	 * path; what makes the check-then-delete sound is that only this client deletes its nodes and
	 * only one of its deleters handles a node at a time, claiming it before the check: a second
	 * deleter (a lease running out, a release, the session's loss, a reconnection, a stale node
	 * met by an acquisition) checks only after the first one's delete, which ZooKeeper applies
	 * first as both go through the same session, and so finds the node gone or another one.
	 */
	Deleted deleteNode(ZooKeeper zk, String path, long czxid) throws Exception {
		return deleteNode(zk, path, czxid, null, null);
	}

	/**
	 * As {@link #deleteNode(ZooKeeper, String, long)}; for the release of {@code unread}, a live
	 * exclusive hold of the node, without reading the node first, which saves the release a round
	 * trip. That is sound for the reason the check is: every other deleter of a hold's node forgets
	 * the hold (marks it gone) before it claims the node, so a hold still live once this release has
	 * claimed its node has its node in place, under this session: nobody deleted it, so nobody could
	 * create another. A hold found gone by then has its node read first after all.
	 * @param unread the live hold being released, or {@code null} to read the node first
	 * @param companion a node deleted in the same transaction, if the node is deleted unread
	 */
	private Deleted deleteNode(ZooKeeper zk, String path, long czxid, Held unread, Companion companion)
			throws Exception {
		if (!this.deleting.add(czxid)) {
			return Deleted.BUSY;
		}
		try {
			String fullPath = this.connection.fullPath(path);
			boolean read = unread == null || unread.gone;
			int version = -1;
			if (read) {
				this.connection.hook("delete-reading", path);
				Stat stat = zk.exists(fullPath, false);
				if (stat == null || stat.getCzxid() != czxid) {
					return Deleted.ABSENT;
				}
				version = stat.getVersion();
			}
			this.connection.hook("delete-checked", path);
			if (!read && companion != null) {
				try {
					zk.multi(List.of(Op.delete(fullPath, -1), Op.delete(this.connection.fullPath(companion.path), -1)));
					companion.deleted = true;
					return Deleted.DELETED;
				}
				catch (KeeperException.NoNodeException | KeeperException.NotEmptyException | KeeperException.BadVersionException
						| KeeperException.NoAuthException refused) {
					// Either node refused (the place gone already, say), so neither went: the hold's node alone.
				}
			}
			try {
				zk.delete(fullPath, version);
				return Deleted.DELETED;
			}
			catch (KeeperException.NoNodeException | KeeperException.SessionExpiredException gone) {
				return Deleted.ABSENT;
			}
		}
		finally {
			this.deleting.remove(czxid);
		}
	}

	void deleteQuietly(Held hold) {
		try {
			ZooKeeper zk = this.connection.zooKeeper();
			if (zk.getSessionId() == hold.session && deleteNode(zk, hold.path, hold.czxid) == Deleted.BUSY) {
				// Another deleter has it in hand; should its delete fail, the reconnection tries again.
				this.undeleted.add(hold);
			}
		}
		catch (Exception ex) {
			// Still connected later with the same session: RECONNECTED retries; else the session's end deletes it.
			this.undeleted.add(hold);
			log.debug("Could not delete the node of lock '{}' held by {}: {}", hold.name, hold.owner, ex.toString());
		}
	}

	/** A create whose answer never came: where, for which owner, and which nonces are its. */
	private record Leftover(String path, String owner, Predicate<String> nonce) {
	}

	void leftover(String path, String owner, Predicate<String> nonce) {
		Leftover leftover = new Leftover(path, owner, nonce);
		this.leftovers.add(leftover);
		// On the lease thread, through this session's handle: ordered after the create on the session.
		this.holds.inBackground(() -> removeLeftover(leftover));
	}

	private void removeLeftover(Leftover leftover) {
		try {
			if (removeNode(leftover.path, leftover.owner, leftover.nonce) != Deleted.BUSY) {
				this.leftovers.remove(leftover);
			}
			// Busy: another deleter has it; should its delete fail, the reconnection tries again.
		}
		catch (KeeperException.SessionExpiredException gone) {
			this.leftovers.remove(leftover);
		}
		catch (Exception ex) {
			// Still connected later with the same session: RECONNECTED retries; else the session's end deletes it.
			log.debug("Could not check for a node left by an unanswered create at {}: {}", leftover.path, ex.toString());
		}
	}

	/**
	 * Deletes this session's node at {@code path} if it carries {@code owner} and a nonce that
	 * {@code nonce} accepts, and no hold of this client has it.
	 */
	Deleted removeNode(String path, String owner, Predicate<String> nonce) throws Exception {
		ZooKeeper zk = this.connection.zooKeeper();
		Stat stat = new Stat();
		byte[] data;
		try {
			this.connection.hook("remove-reading", path);
			data = zk.getData(this.connection.fullPath(path), false, stat);
		}
		catch (KeeperException.NoNodeException free) {
			return Deleted.ABSENT;
		}
		if (stat.getEphemeralOwner() != zk.getSessionId() || !owner.equals(ZooKeeperNodeData.ownerOf(data))
				|| !nonce.test(ZooKeeperNodeData.nonceOf(data))) {
			return Deleted.ABSENT;
		}
		if (this.holds.hasNode(stat.getCzxid())) {
			return Deleted.ABSENT;
		}
		return deleteNode(zk, path, stat.getCzxid());
	}

	/** Deletes what it stands for; answers whether that is done (a busy node is another deleter's). */
	interface Removal {

		boolean run() throws Exception;

	}

	/**
	 * Runs {@code removal} on the lease thread, and again on reconnection until it is done (or the
	 * session is lost, which deletes the session's nodes anyway).
	 */
	void removeLater(Removal removal) {
		this.removals.add(removal);
		this.holds.inBackground(() -> runRemoval(removal));
	}

	private void runRemoval(Removal removal) {
		try {
			if (removal.run()) {
				this.removals.remove(removal);
			}
		}
		catch (KeeperException.SessionExpiredException gone) {
			this.removals.remove(removal);
		}
		catch (Exception ex) {
			log.debug("Could not delete a queue place: {}", ex.toString());
		}
	}

	/**
	 * Drops the holds whose deletion was to be retried but those of session {@code kept}: an ended
	 * session's nodes are left to the ensemble, which deletes them with the session. With no session
	 * known to be live ({@code kept} is -1: the handle could not be read, or has no session yet), every
	 * one stays: the session may be the live one after all, and the next reconnection deletes the
	 * nodes of the session current then and drops the rest (before, a node whose deletion had failed
	 * stayed for the life of a session that went on). Leftovers and removals stay: each deletes only a
	 * node of the session current when it runs, or a place whose name no later node has, so they run
	 * as before, and a lock call that started over on the current session may have left one.
	 */
	void sessionLost(long kept) {
		if (kept != -1) {
			this.undeleted.removeIf(hold -> hold.session != kept);
		}
	}

	/** Tries again what could not be deleted while the connection was down. */
	void retryAfterReconnect() {
		for (Held hold : List.copyOf(this.undeleted)) {
			this.undeleted.remove(hold);
			deleteQuietly(hold);
		}
		for (Leftover leftover : List.copyOf(this.leftovers)) {
			removeLeftover(leftover);
		}
		for (Removal removal : List.copyOf(this.removals)) {
			runRemoval(removal);
		}
	}

}
