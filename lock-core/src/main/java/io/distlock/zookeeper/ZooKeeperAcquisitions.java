package io.distlock.zookeeper;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

import io.distlock.core.LockBackend.Acquisition;
import io.distlock.zookeeper.ZooKeeperDeletions.Deleted;
import io.distlock.zookeeper.ZooKeeperHolds.Check;
import io.distlock.zookeeper.ZooKeeperHolds.Held;
import io.distlock.zookeeper.ZooKeeperLockBackend.ZooKeeperCallException;

/**
 * Takes locks by creating their nodes, and decides which node a create may take up: the one it
 * made itself, answered within the session timeout.
 */
final class ZooKeeperAcquisitions {

	/** How long an acquisition that met a stale node of its own, being deleted, waits before trying again. */
	private static final Duration STALE_NODE_RETRY = Duration.ofMillis(100);

	/** How many creates in a row may be answered only after a session timeout before an acquisition fails. */
	private static final int MAX_LATE_ANSWERS = 3;

	private final ZooKeeperConnection connection;

	private final CuratorFramework client;

	private final ZooKeeperHolds holds;

	private final ZooKeeperDeletions deletions;

	ZooKeeperAcquisitions(ZooKeeperConnection connection, ZooKeeperHolds holds, ZooKeeperDeletions deletions) {
		this.connection = connection;
		this.client = connection.client();
		this.holds = holds;
		this.deletions = deletions;
	}

	/**
	 * Acquires by creating the node; nothing is queued. Each create stores a nonce of its own next
	 * to the owner id (with the attempt's ticket in front, see {@link #leaveQueue}), and only a node
	 * carrying exactly that nonce is taken as this create's (Curator re-sent it after a connection
	 * loss swallowed the answer). Any other node of this session with this owner's id is stale: an
	 * earlier hold whose deletion is under way (its lease ran out, or a delete waits for the
	 * reconnection), or a create whose answer never came. Taking such a node up would hand out a
	 * node that a pending delete removes, and an old token; it is deleted (by its czxid) and the
	 * create sent again.
	 */
	Acquisition acquire(String name, String owner, int heldCount, Duration lease, String ticket) {
		String path = this.connection.path(name);
		if (heldCount > 0) {
			return reenter(name, owner, path, lease);
		}
		Held stale = this.holds.get(name);
		if (stale != null && stale.owner.equals(owner)) {
			// A hold the engine gave up (a release that failed, a hold reported lost): it is not this
			// acquisition's, and its token must not be handed out again as a new holder's.
			this.holds.forget(stale);
			this.deletions.deleteQuietly(stale);
		}
		int lateAnswers = 0;
		boolean emptyLineMet = false;
		while (true) {
			String nonce = ((ticket != null) ? ticket : "-") + "." + UUID.randomUUID();
			Stat stat = new Stat();
			long sent = System.nanoTime();
			try {
				try {
					this.client.create().storingStatIn(stat).creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
						.forPath(path, ZooKeeperNodeData.nodeData(owner, nonce));
					this.connection.hook("created", name);
				}
				catch (KeeperException.NodeExistsException taken) {
					throw taken;
				}
				catch (Exception unanswered) {
					// Out of retries, timed out or interrupted: the create may have landed, with no hold and
					// no lease here. Its node must not keep the lock until the session ends.
					this.deletions.leftover(path, owner, nonce::equals);
					throw unanswered;
				}
				if (answeredInTime(sent, stat)) {
					return held(name, owner, path, stat, lease, nonce);
				}
				lateAnswer(name, path, owner, nonce, ++lateAnswers);
			}
			catch (KeeperException.NodeExistsException taken) {
				Stat existing = new Stat();
				byte[] holder;
				try {
					holder = this.client.getData().storingStatIn(existing).forPath(path);
				}
				catch (KeeperException.NoNodeException releasedMeanwhile) {
					continue;
				}
				catch (Exception ex) {
					throw this.connection.failure(ex);
				}
				if (existing.getEphemeralOwner() == 0) {
					// Not a lock node (those are ephemeral): the parent of the lock's line under the LINE protocol,
					// whose first node holds. Once empty, it is in the way of this protocol's create.
					if (existing.getNumChildren() > 0) {
						return Acquisition.heldByOther(this.connection.sessionTimeout());
					}
					this.connection.hookQuietly("empty-line-read", name);
					// Version 0: not a parent this version made (see deleteEmptyLine), so left to the ensemble.
					if (emptyLineMet || existing.getVersion() < 1 || !deleteEmptyLine(path, existing.getVersion())) {
						return Acquisition.heldByOther(STALE_NODE_RETRY);
					}
					emptyLineMet = true;
					continue;
				}
				if (!owner.equals(ZooKeeperNodeData.ownerOf(holder))
						|| existing.getEphemeralOwner() != this.connection.sessionId()) {
					// The holder's lease is not in ZooKeeper; the engine re-checks within its place time anyway.
					return Acquisition.heldByOther(this.connection.sessionTimeout());
				}
				if (nonce.equals(ZooKeeperNodeData.nonceOf(holder))) {
					// This very create, re-sent by Curator after a connection loss swallowed its answer.
					if (answeredInTime(sent, existing)) {
						return held(name, owner, path, existing, lease, nonce);
					}
					lateAnswer(name, path, owner, nonce, ++lateAnswers);
					continue;
				}
				// Stale: this owner's earlier node of this session, which no hold here may take up.
				try {
					ZooKeeper zk = this.connection.zooKeeper();
					if (zk.getSessionId() != existing.getEphemeralOwner()
							|| this.deletions.deleteNode(zk, path, existing.getCzxid()) == Deleted.BUSY) {
						// Another deleter of this client has it in hand; its NodeDeleted wakes the engine.
						return Acquisition.heldByOther(STALE_NODE_RETRY);
					}
				}
				catch (Exception ex) {
					throw this.connection.failure(ex);
				}
			}
			catch (Exception ex) {
				throw this.connection.failure(ex);
			}
		}
	}

	/**
	 * Deletes the empty parent of a line of the LINE protocol at the lock's path; a delete of a node
	 * with children is refused by ZooKeeper, so an instance of that protocol that joined meanwhile keeps
	 * the lock. The delete is conditional on the data version the parent was read with, which is 1 or
	 * more (see {@code ZooKeeperSharedHolds.makeLineParent}) where every lock node's is 0: a lock node
	 * another client made at the path since the read (after deleting the parent itself, or after the
	 * ensemble did), or a re-sent copy of this delete after a connection loss, is never deleted.
	 * @return whether the path is free now
	 */
	private boolean deleteEmptyLine(String path, int version) {
		try {
			this.client.delete().withVersion(version).forPath(path);
			return true;
		}
		catch (KeeperException.NoNodeException gone) {
			return true;
		}
		catch (KeeperException.NotEmptyException | KeeperException.BadVersionException joined) {
			return false;
		}
		catch (Exception ex) {
			throw this.connection.failure(ex);
		}
	}

	/**
	 * Whether the node this session created, for a create sent at {@code sent}, still stands: the
	 * ensemble heard from the session when the create arrived, after it was sent, and expires a
	 * session only a whole timeout after it last heard from it. The timeout is read from the current
	 * handle, which must be the session that made the node.
	 */
	private boolean answeredInTime(long sent, Stat node) {
		long elapsed = System.nanoTime() - sent;
		try {
			ZooKeeper zk = this.connection.zooKeeper();
			return node.getEphemeralOwner() == zk.getSessionId()
					&& elapsed < TimeUnit.MILLISECONDS.toNanos(zk.getSessionTimeout());
		}
		catch (Exception noHandle) {
			return false;
		}
	}

	/**
	 * A create answered only after a whole session timeout (or by a session since replaced): this
	 * client may have been frozen or cut off meanwhile, its session expired, its node deleted and the
	 * lock taken by another client, whose token is higher. The answer proves nothing. Its node, if it
	 * still stands, is deleted (in the background should that fail, so that it never keeps the lock
	 * taken for the session), and the caller creates again.
	 */
	private void lateAnswer(String name, String path, String owner, String nonce, int lateAnswers) {
		try {
			this.deletions.removeNode(path, owner, nonce::equals);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			this.deletions.leftover(path, owner, nonce::equals);
		}
		if (lateAnswers >= MAX_LATE_ANSWERS) {
			throw new ZooKeeperCallException("ZooKeeper at " + this.connection.ensemble() + " answered " + MAX_LATE_ANSWERS
					+ " creates of lock '" + name + "' in a row only after the session timeout ("
					+ this.connection.sessionTimeout().toMillis() + " ms), when the node may already have been deleted; the"
					+ " lock was not taken. Is this process starved of CPU, or the ensemble overloaded? A longer session"
					+ " timeout tolerates slower answers.", null);
		}
	}

	/**
	 * Deletes the node an unanswered create of the attempt {@code ticket} may have left, as
	 * {@link ZooKeeperLockBackend#leaveQueue} describes.
	 */
	void leaveQueue(String name, String owner, String ticket, boolean passOnHandOff) {
		if (!passOnHandOff || ticket == null) {
			return;
		}
		String prefix = ticket + ".";
		try {
			this.deletions.removeNode(this.connection.path(name), owner, nonce -> nonce.startsWith(prefix));
		}
		catch (KeeperException.SessionExpiredException gone) {
			// A node the unanswered create left is the session's: the ensemble deletes it with the session.
		}
		catch (Exception ex) {
			throw this.connection.failure(ex);
		}
	}

	private Acquisition reenter(String name, String owner, String path, Duration lease) {
		Held hold = this.holds.get(name);
		if (hold == null || !hold.owner.equals(owner) || hold.gone || hold.session != this.connection.sessionId()) {
			return Acquisition.lost();
		}
		Stat stat;
		try {
			stat = this.client.checkExists().forPath(path);
		}
		catch (Exception ex) {
			throw this.connection.failure(ex);
		}
		if (stat == null || stat.getCzxid() != hold.czxid) {
			this.holds.forget(hold);
			return Acquisition.lost();
		}
		this.connection.hookQuietly("reenter-checked", name);
		// The lease may have run out, or the session been lost, since the check: that hold is gone.
		if (!this.holds.extendIfLive(hold, lease)) {
			return Acquisition.lost();
		}
		return Acquisition.acquired(hold.czxid, lease, hold.attemptId());
	}

	/**
	 * Records the hold, then checks it ({@link ZooKeeperHolds#checkRecorded}): the session may have
	 * ended (and its end been reported, without this hold) between the answer's check and the record,
	 * and its node goes with it. A hold the check does not find current may still have a live session's
	 * node (the session could not be read): that node is deleted as a create's leftover would be, if it
	 * is that session's (a later create has a nonce of its own).
	 */
	private Acquisition held(String name, String owner, String path, Stat stat, Duration lease, String nonce) {
		this.connection.hookQuietly("answer-checked", name);
		Held hold = this.holds.take(name, owner, path, stat, lease);
		if (this.holds.checkRecorded(hold) != Check.CURRENT) {
			this.deletions.leftover(path, owner, nonce::equals);
			return Acquisition.heldByOther(STALE_NODE_RETRY);
		}
		return Acquisition.acquired(hold.czxid, lease, hold.attemptId());
	}

}
