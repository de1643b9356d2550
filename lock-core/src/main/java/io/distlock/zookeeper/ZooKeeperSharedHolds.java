package io.distlock.zookeeper;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

import io.distlock.HoldKind;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.ReleaseRequest;
import io.distlock.zookeeper.ZooKeeperDeletions.Deleted;
import io.distlock.zookeeper.ZooKeeperDeletions.Removal;
import io.distlock.zookeeper.ZooKeeperHolds.Check;
import io.distlock.zookeeper.ZooKeeperHolds.Held;

/**
 * Read, write and permit holds, as Curator-style ephemeral sequential nodes under a parent of
 * their own per lock: {@code <basePath>/<encoded name>.rw} for a read-write lock,
 * {@code .sem} for a semaphore ({@link ZooKeeperNodeNames} never makes a '.', so these never meet
 * an exclusive lock's node). The parent is a container node, which the ensemble deletes once it
 * stayed empty for a while. Exclusive holds under {@link ZooKeeperLockRegistry.ExclusiveProtocol#LINE}
 * are kept here too, as {@code x} nodes that hold as a write node does, under a parent at the lock
 * node's own path (see {@link #create}); each of their waiters watches only the node before its own.
 *
 * <p><b>Nodes.</b> {@code <k>-<instance>.<ticket>-<sequence>}, {@code k} being {@code r}, {@code w}
 * or {@code p}; a permit node also carries the permits its owner declared
 * ({@code p-<instance>.<ticket>.<permits>-<sequence>}). {@code instance} is random per backend and
 * {@code ticket} the engine's attempt, so the name alone tells which attempt made a node: a call
 * that never heard its create's answer, a re-sent create and {@link #leaveQueue} find the
 * attempt's nodes by name. The data is the owner id (for people looking at the tree).
 *
 * <p><b>Who holds</b> is decided from the children sorted by sequence: a write node holds iff no
 * node sorts before it; a read node iff no write node sorts before it but its own owner's; a permit
 * node iff fewer nodes sort before it than the least permits declared by it and them. Each of these
 * only becomes true and stays so (nodes before one only go), so a node that held once holds until
 * it is deleted. A downgrade's read node is made beside its owner's write node, with that node's
 * sequence ({@code r-<instance>.<ticket>-<writeSequence>d}, not sequential, in one transaction with
 * a check that the write node is still there), so that a writer queued behind the write hold stays
 * behind the read hold too (Curator's CURATOR-621).
 *
 * <p><b>The node is the queue place.</b> A waiting attempt keeps its node and calls again when a
 * node of the lock is deleted (a recursive watch on the parent) or its place time is half over;
 * an attempt that gives up deletes its node ({@link #leaveQueue}), and one that may not wait
 * ({@code queueFor} zero) deletes it before it answers. No hold is ever handed over.
 *
 * <p><b>Permits</b> are those of the first node in line: an acquisition that finds a node of other
 * permits before its own deletes its node and is refused with them; an idle semaphore (no node)
 * takes whatever is declared next. Since a node is checked against every node before it, and nodes
 * only join at the end of the line, all the nodes that passed the check agree.
 *
 * <p><b>Leases and tokens</b> are as for the exclusive lock: this client deletes a node whose lease
 * ran out, and the session's end deletes a crashed client's nodes. A token is asked for while the
 * hold lasts: a {@code setData} on the own node, whose {@code mzxid} is above the zxid of every
 * write before it, so above every earlier holder's token (a node's czxid would not do: a writer
 * queued before a downgrade's read node was made would have a lower one).
 */
final class ZooKeeperSharedHolds {

	/** How soon an attempt whose look at the line came back only after a session timeout looks again. */
	private static final Duration LATE_LOOK_RETRY = Duration.ofMillis(100);

	private static final int MAX_TRIES = 3;

	private final ZooKeeperConnection connection;

	private final CuratorFramework client;

	private final ZooKeeperHolds holds;

	private final ZooKeeperDeletions deletions;

	private final NodeWatch predecessors;

	/** Makes this backend's node names its own: ticket numbers are unique per engine only. */
	private final String instance;

	/** Attempts that have (or may have) a node in line, until they hold, are refused or give up. */
	private final Map<AttemptKey, Place> places = new ConcurrentHashMap<>();

	/**
	 * Nodes (by czxid) of holds whose check ({@link ZooKeeperHolds#checkRecorded}) did not find them
	 * current, until they are deleted:
	 * a later call of the same attempt must not take one for its place, as the deletion would pull it
	 * from under that call's hold.
	 */
	private final Set<Long> forgottenNodes = ConcurrentHashMap.newKeySet();

	/**
	 * @param predecessors sets the one-shot watch through which an exclusive waiter in line is woken
	 * by the deletion of the node before its own
	 */
	ZooKeeperSharedHolds(ZooKeeperConnection connection, ZooKeeperHolds holds, ZooKeeperDeletions deletions,
			NodeWatch predecessors) {
		this.connection = connection;
		this.client = connection.client();
		this.holds = holds;
		this.deletions = deletions;
		this.predecessors = predecessors;
		this.instance = Long.toString(new SecureRandom().nextLong() & Long.MAX_VALUE, 36);
	}

	/** Sets a one-shot watch that wakes the lock's waiters when the node goes. */
	interface NodeWatch {

		/** @return whether the node was there (and the watch set) */
		boolean watchWhileThere(ZooKeeper zk, String path, String name) throws Exception;

	}

	/** One attempt of one owner. */
	private record AttemptKey(String name, HoldKind kind, String owner, String ticket) {
	}

	/**
	 * An attempt's node.
	 * @param node its name, or {@code null} while the answer to its create is unknown
	 * @param czxid its czxid, when known
	 * @param session the session that made (or sent) it
	 */
	private record Place(String node, long czxid, long session) {
	}

	/**
	 * A child of a read-write lock's or semaphore's parent, as its name says.
	 * @param kind {@code r}, {@code w} or {@code p}
	 * @param sequence its place in line
	 * @param downgrade whether it is a downgrade's read node, beside the write node of its sequence
	 * @param permits a permit node's permits, else 0
	 */
	record Node(String name, char kind, long sequence, boolean downgrade, int permits) implements Comparable<Node> {

		/** @return the node, or {@code null} if the name is none of this scheme's */
		static Node parse(String name) {
			int last = sequenceStart(name);
			if (name.length() < 4 || name.charAt(1) != '-' || last <= 2) {
				return null;
			}
			String tail = name.substring(last);
			boolean downgrade = tail.endsWith("d");
			char kind = name.charAt(0);
			try {
				long sequence = Integer.parseInt(downgrade ? tail.substring(0, tail.length() - 1) : tail);
				int permits = 0;
				if (kind == 'p') {
					String body = name.substring(2, last - 1);
					permits = Integer.parseInt(body.substring(body.lastIndexOf('.') + 1));
				}
				boolean known = kind == 'r' || kind == 'w' || kind == 'p' || kind == 'x';
				return known ? new Node(name, kind, sequence, downgrade, permits) : null;
			}
			catch (NumberFormatException ex) {
				return null;
			}
		}

		/**
		 * In line order. The sequence is ZooKeeper's signed counter, which wraps from 2147483647 to
		 * -2147483648 on a parent that is never empty: compared by their difference, wrapping too, a
		 * later node sorts after an earlier one as long as a line spans fewer than 2^31 numbers.
		 */
		@Override
		public int compareTo(Node other) {
			int bySequence = Integer.signum((int) this.sequence - (int) other.sequence);
			return (bySequence != 0) ? bySequence : Boolean.compare(this.downgrade, other.downgrade);
		}

		/**
		 * @return where the sequence starts in a node's name: after the '-' that ends the attempt's
		 * prefix, the sequence itself starting with '-' once the counter has wrapped; -1 if there is none
		 */
		static int sequenceStart(String name) {
			int end = name.endsWith("d") ? name.length() - 1 : name.length();
			int start = end;
			while (start > 0 && Character.isDigit(name.charAt(start - 1))) {
				start--;
			}
			if (start == end || start == 0) {
				return -1;
			}
			// A negative sequence: its '-' is preceded by the prefix's own '-'.
			return (name.charAt(start - 1) == '-' && start >= 2 && name.charAt(start - 2) == '-') ? start - 1 : start;
		}

	}

	/**
	 * @param sorted the children in line
	 * @param index one of them
	 * @return whether that node holds
	 */
	static boolean holds(List<Node> sorted, int index) {
		Node node = sorted.get(index);
		switch (node.kind()) {
			case 'w', 'x' -> {
				return index == 0;
			}
			case 'r' -> {
				for (int i = 0; i < index; i++) {
					Node before = sorted.get(i);
					if (before.kind() == 'w' && !(node.downgrade() && before.sequence() == node.sequence())) {
						return false;
					}
				}
				return true;
			}
			default -> {
				int permits = node.permits();
				for (int i = 0; i < index; i++) {
					permits = Math.min(permits, sorted.get(i).permits());
				}
				return index < permits;
			}
		}
	}

	String parentPath(String name, HoldKind.Family family) {
		return this.connection.path(name) + switch (family) {
			case SEMAPHORE -> ".sem";
			case READ_WRITE -> ".rw";
			// The lock node's own path: see createInLine for why.
			case LOCK -> "";
		};
	}

	private static char letter(HoldKind kind) {
		return switch (kind) {
			case READ -> 'r';
			case WRITE -> 'w';
			case PERMIT -> 'p';
			case EXCLUSIVE -> 'x';
		};
	}

	/** @return what every node of the attempt's name starts with (a permit node's permits follow) */
	private String attemptPrefix(HoldKind kind, String ticket) {
		return letter(kind) + "-" + this.instance + "." + ticket + ((kind == HoldKind.PERMIT) ? "." : "-");
	}

	// Acquiring

	Acquisition acquire(AcquireRequest request) {
		String name = request.name();
		HoldKind kind = request.kind();
		String owner = request.owner();
		try {
			if (request.heldCount() > 0) {
				return reenter(request);
			}
			Held stale = this.holds.get(name, kind, owner);
			if (stale != null) {
				// A hold the engine gave up (a release that failed, a hold reported lost): not this attempt's.
				this.holds.forget(stale);
				this.deletions.deleteQuietly(stale);
			}
			if (kind == HoldKind.WRITE && live(this.holds.get(name, HoldKind.READ, owner))) {
				return Acquisition.upgradeRefused();
			}
			String parent = parentPath(name, kind.family());
			AttemptKey key = new AttemptKey(name, kind, owner, String.valueOf(request.ticket()));
			if (kind == HoldKind.READ) {
				Held write = this.holds.get(name, HoldKind.WRITE, owner);
				if (live(write)) {
					Acquisition downgraded = downgrade(request, parent, key, write);
					if (downgraded != null) {
						return downgraded;
					}
				}
			}
			return acquireInLine(request, parent, key);
		}
		catch (Exception ex) {
			throw this.connection.failure(ex);
		}
	}

	private boolean live(Held hold) {
		return hold != null && !hold.gone && hold.session == this.connection.sessionId();
	}

	private Acquisition acquireInLine(AcquireRequest request, String parent, AttemptKey key) throws Exception {
		String prefix = attemptPrefix(key.kind(), key.ticket());
		return this.connection.lookUntilAnswered((zk, tries) -> lookInLine(request, parent, key, prefix, zk, tries));
	}

	/**
	 * One look at the line through one session's handle: joins it if the attempt has no node there yet,
	 * and holds if the node's place lets it.
	 * @return the answer, or {@code null} to look again (the node is gone, or the line moved up)
	 */
	private Acquisition lookInLine(AcquireRequest request, String parent, AttemptKey key, String prefix, ZooKeeper zk,
			int tries) throws Exception {
		long session = zk.getSessionId();
		Place place = this.places.get(key);
		if (place != null && place.session() != session) {
			// Made by a session since replaced: the ensemble deletes it with that session.
			this.places.remove(key, place);
			place = null;
		}
		if (place == null) {
			place = create(parent, key, prefix, request, session);
			if (place == null) {
				// An exclusive lock held through the lock-node protocol (its node is ephemeral, and so has no
				// line), or one whose line's parent kept vanishing: contended either way.
				if (request.queueFor().toMillis() > 0 && tries < MAX_TRIES
						&& !this.predecessors.watchWhileThere(zk, parent, key.name())) {
					return null;
				}
				return Acquisition.heldByOther((tries < MAX_TRIES) ? this.connection.sessionTimeout() : LATE_LOOK_RETRY);
			}
			if (place.session() != session) {
				// The session changed while the create was on its way (Curator sent it again through the new
				// one): the node is the new session's, and the place stays the attempt's. The next look takes
				// the new session's handle, through which this one cannot act.
				if (tries >= MAX_TRIES) {
					return givenUp(this.connection.zooKeeper(), parent, key, prefix, request);
				}
				return null;
			}
		}
		long sent = System.nanoTime();
		List<Node> nodes = children(zk, parent);
		boolean inTime = System.nanoTime() - sent < TimeUnit.MILLISECONDS.toNanos(zk.getSessionTimeout());
		this.connection.hook("line-read", key.name());
		List<Node> mine = new ArrayList<>();
		for (Node node : nodes) {
			if (node.name().startsWith(prefix)) {
				mine.add(node);
			}
		}
		Node own = null;
		if (place.node() != null) {
			for (Node node : mine) {
				if (node.name().equals(place.node())) {
					own = node;
				}
			}
		}
		else if (!mine.isEmpty()) {
			// A create whose answer never came: the first node it left, if this session's, is the place.
			Stat stat = zk.exists(this.connection.fullPath(parent + "/" + mine.get(0).name()), false);
			if (stat != null && stat.getEphemeralOwner() == session && !this.holds.hasNode(stat.getCzxid())
					&& !this.forgottenNodes.contains(stat.getCzxid())) {
				own = mine.get(0);
				place = new Place(own.name(), stat.getCzxid(), session);
				this.places.put(key, place);
			}
		}
		if (own == null) {
			// Its node is gone (or never landed): a new place at the end of the line.
			this.places.remove(key);
			if (tries >= MAX_TRIES) {
				// Through the current session's handle: a node the create left may be a session's since.
				return givenUp(this.connection.zooKeeper(), parent, key, prefix, request);
			}
			return null;
		}
		for (Node other : mine) {
			if (other != own) {
				// A copy made by a create re-sent after a connection loss: it must not hold anyone up.
				removeNode(zk, parent + "/" + other.name());
				nodes.remove(other);
			}
		}
		int index = nodes.indexOf(own);
		if (key.kind() == HoldKind.PERMIT && nodes.get(0).permits() != request.permits()) {
			int existing = nodes.get(0).permits();
			leave(zk, parent, key, prefix);
			return Acquisition.permitsDiffer(existing);
		}
		if (inTime && holds(nodes, index)) {
			this.places.remove(key);
			Held hold = this.holds.takeShared(key.name(), key.kind(), key.owner(), parent + "/" + own.name(),
					place.czxid(), session, request.lease());
			Check check = this.holds.checkRecorded(hold);
			if (check != Check.CURRENT) {
				return forgotten(zk, hold, check, key, place, request);
			}
			return Acquisition.acquired(tokenOf(hold), request.lease(), hold.attemptId());
		}
		if (request.queueFor().toMillis() <= 0) {
			leave(zk, parent, key, prefix);
			return Acquisition.heldByOther(this.connection.sessionTimeout());
		}
		if (key.kind() == HoldKind.EXCLUSIVE && inTime
				&& !this.predecessors.watchWhileThere(zk, parent + "/" + nodes.get(index - 1).name(), key.name())) {
			// Gone meanwhile: the line moved up, perhaps to this node.
			return null;
		}
		// The holders' leases are not in ZooKeeper; a deletion wakes the waiters, who look again.
		return Acquisition.heldByOther(inTime ? this.connection.sessionTimeout() : LATE_LOOK_RETRY);
	}

	/**
	 * A hold its check ({@link ZooKeeperHolds#checkRecorded}) did not find current. One the check forgot may still have the client's
	 * node, if the session could not be read: a caller that waits keeps it as its place, and holds
	 * through it at its next look rather than queueing again at the end (a node deleted meanwhile is
	 * missed there, and the caller queues again); one that may not wait has it deleted, as no
	 * leaveQueue follows, and the node would otherwise hold the lock for as long as the session lives.
	 * One given up before the check has its node deleted by whoever gave it up: the caller never holds
	 * through that node again, and makes sure it goes.
	 * @param zk the handle of the hold's session
	 */
	private Acquisition forgotten(ZooKeeper zk, Held hold, Check check, AttemptKey key, Place place,
			AcquireRequest request) {
		if (check == Check.FORGOTTEN && request.queueFor().toMillis() > 0) {
			this.places.put(key, place);
		}
		else {
			deleteForgotten(zk, hold);
		}
		return Acquisition.heldByOther(LATE_LOOK_RETRY);
	}

	/**
	 * Deletes a forgotten hold's node, that node only (a later call of its attempt may make another at
	 * the same path), through {@code zk} at once; if that fails, or another deleter of this client has
	 * it in hand, later, through the session current then. Until it is gone, no later call of the
	 * attempt takes it for its place. A node of another session than the handle's goes with its session.
	 */
	private void deleteForgotten(ZooKeeper zk, Held hold) {
		this.forgottenNodes.add(hold.czxid);
		if (zk != null) {
			try {
				if (removeForgotten(zk, hold)) {
					return;
				}
			}
			catch (Exception ex) {
				if (ex instanceof InterruptedException) {
					Thread.currentThread().interrupt();
				}
			}
		}
		this.deletions.removeLater(() -> {
			try {
				ZooKeeper current = this.connection.zooKeeperOrNull();
				return current != null && removeForgotten(current, hold);
			}
			catch (KeeperException.SessionExpiredException gone) {
				this.forgottenNodes.remove(hold.czxid);
				throw gone;
			}
		});
	}

	/** @return whether the forgotten hold's node is gone, or left to its session (false: another deleter has it) */
	private boolean removeForgotten(ZooKeeper zk, Held hold) throws Exception {
		Stat stat = zk.exists(this.connection.fullPath(hold.path), false);
		boolean done = stat == null || stat.getCzxid() != hold.czxid || stat.getEphemeralOwner() != zk.getSessionId()
				|| this.holds.hasNode(hold.czxid)
				|| this.deletions.deleteNode(zk, hold.path, hold.czxid) != Deleted.BUSY;
		if (done) {
			this.forgottenNodes.remove(hold.czxid);
		}
		return done;
	}

	/**
	 * The session kept changing under this call's creates. A caller that does not queue never leaves
	 * the line (the engine only asks those that did), so a node of this attempt is deleted here.
	 */
	private Acquisition givenUp(ZooKeeper zk, String parent, AttemptKey key, String prefix, AcquireRequest request)
			throws Exception {
		if (request.queueFor().toMillis() <= 0) {
			leave(zk, parent, key, prefix);
		}
		return Acquisition.heldByOther(LATE_LOOK_RETRY);
	}

	private String inLine(String path, byte[] data, Stat stat) throws Exception {
		return this.client.create().storingStatIn(stat).withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(path, data);
	}

	/**
	 * Creates the attempt's node at the end of the line; until the answer comes, its place is unknown.
	 * An exclusive lock's line is under the lock node's own path, so that the two protocols of
	 * {@link ZooKeeperLockRegistry.ExclusiveProtocol} exclude each other by ZooKeeper's own rules: a
	 * line's parent stands while anyone is in it, where a lock-node create finds its node taken; and
	 * an ephemeral node, a lock-node holder's, can have no child, so nobody joins a line under it.
	 * @return the place, or {@code null} if the lock is held through its own (ephemeral) node, or the
	 * line's parent kept vanishing under the create (lock-node instances deleting it as empty)
	 */
	private Place create(String parent, AttemptKey key, String prefix, AcquireRequest request, long session)
			throws Exception {
		this.places.put(key, new Place(null, 0, session));
		try {
			return createInLine(parent, key, prefix, request);
		}
		catch (KeeperException.NoChildrenForEphemeralsException | KeeperException.NoNodeException contended) {
			this.places.remove(key);
			return null;
		}
	}

	private Place createInLine(String parent, AttemptKey key, String prefix, AcquireRequest request) throws Exception {
		String node = (key.kind() == HoldKind.PERMIT) ? prefix + request.permits() + "-" : prefix;
		Stat stat = new Stat();
		byte[] data = ZooKeeperNodeData.nodeData(key.owner(), key.ticket());
		String path = null;
		this.connection.hook("creating-in-line", key.name());
		for (int tries = 1; path == null; tries++) {
			try {
				path = inLine(parent + "/" + node, data, stat);
			}
			catch (KeeperException.NoNodeException noParent) {
				if (tries > MAX_TRIES) {
					throw noParent;
				}
				// No parent, or (an exclusive lock's) deleted by a lock-node instance before this node landed in it.
				try {
					if (key.kind() == HoldKind.EXCLUSIVE) {
						makeLineParent(parent);
					}
					else {
						this.client.create().creatingParentsIfNeeded().withMode(CreateMode.CONTAINER).forPath(parent);
					}
				}
				catch (KeeperException.NodeExistsException made) {
					// Another client made it first (for an exclusive lock, perhaps a lock-node holder: see above).
				}
				this.connection.hook("line-parent-made", key.name());
			}
		}
		this.connection.hook("created-in-line", key.name());
		Place place = new Place(ZKPaths.getNodeFromPath(path), stat.getCzxid(), stat.getEphemeralOwner());
		this.places.put(key, place);
		return place;
	}

	/**
	 * An exclusive lock's line parent is born with data version 1, which a lock node never has: nothing
	 * ever sets data on a lock node (an exclusive token is its {@code czxid}; only a read, write or
	 * permit node's token is a {@code setData}, see {@link #issueToken}), so it stays at version 0. A
	 * lock-node instance deletes an empty parent only at the version it read, which is how it can never
	 * delete a lock node made at the path since (see {@code ZooKeeperAcquisitions.deleteEmptyLine}).
	 */
	private void makeLineParent(String parent) throws Exception {
		try {
			createAtVersionOne(parent);
		}
		catch (KeeperException.NoNodeException noBase) {
			try {
				this.client.create().creatingParentsIfNeeded().forPath(ZKPaths.getPathAndNode(parent).getPath());
			}
			catch (KeeperException.NodeExistsException made) {
				// Another client made it.
			}
			createAtVersionOne(parent);
		}
	}

	private void createAtVersionOne(String parent) throws Exception {
		this.client.transaction()
			.forOperations(this.client.transactionOp().create().withMode(CreateMode.CONTAINER).forPath(parent),
					this.client.transactionOp().setData().withVersion(0).forPath(parent, new byte[0]));
	}

	/**
	 * The write holder takes the read lock: its read node is made beside the write node, with the
	 * same sequence, in one transaction with a check that the write node is still there.
	 * @return the hold, or {@code null} if the write node is gone (the read lock is then asked for as by anyone)
	 */
	private Acquisition downgrade(AcquireRequest request, String parent, AttemptKey key, Held write) throws Exception {
		String writeNode = ZKPaths.getNodeFromPath(write.path);
		String node = attemptPrefix(HoldKind.READ, key.ticket()) + writeNode.substring(Node.sequenceStart(writeNode)) + "d";
		String path = parent + "/" + node;
		this.places.put(key, new Place(null, 0, write.session));
		try {
			this.client.transaction()
				.forOperations(this.client.transactionOp().check().forPath(write.path), this.client.transactionOp()
					.create()
					.withMode(CreateMode.EPHEMERAL)
					.forPath(path, ZooKeeperNodeData.nodeData(key.owner(), key.ticket())));
		}
		catch (KeeperException.NodeExistsException resent) {
			// Made by this very call, re-sent after a connection loss: checked below.
		}
		catch (KeeperException.NoNodeException writeGone) {
			this.places.remove(key);
			return null;
		}
		Stat stat = this.client.checkExists().forPath(path);
		this.places.remove(key);
		if (stat == null || stat.getEphemeralOwner() != write.session || this.holds.hasNode(stat.getCzxid())
				|| this.forgottenNodes.contains(stat.getCzxid())) {
			return null;
		}
		Held hold = this.holds.takeShared(key.name(), HoldKind.READ, key.owner(), path, stat.getCzxid(), write.session,
				request.lease());
		Check check = this.holds.checkRecorded(hold);
		if (check != Check.CURRENT) {
			// A caller that waits makes the same node again, or finds it made, at its next call, unless it is
			// being deleted.
			if (check == Check.GIVEN_UP || request.queueFor().toMillis() <= 0) {
				deleteForgotten(this.connection.zooKeeperOrNull(), hold);
			}
			return Acquisition.heldByOther(LATE_LOOK_RETRY);
		}
		return Acquisition.acquired(Acquisition.TOKEN_ON_REQUEST, request.lease(), hold.attemptId());
	}

	private Acquisition reenter(AcquireRequest request) throws Exception {
		Held hold = this.holds.get(request.name(), request.kind(), request.owner());
		if (!live(hold)) {
			return Acquisition.lost();
		}
		Stat stat = this.client.checkExists().forPath(hold.path);
		if (stat == null || stat.getCzxid() != hold.czxid) {
			this.holds.forget(hold);
			return Acquisition.lost();
		}
		// The lease may have run out, or the session been lost, since the check: that hold is gone.
		if (!this.holds.extendIfLive(hold, request.lease())) {
			return Acquisition.lost();
		}
		return Acquisition.acquired(tokenOf(hold), request.lease(), hold.attemptId());
	}

	/**
	 * An exclusive hold's token is its node's czxid, as the lock node's is: the nodes before it in line,
	 * the earlier holders', were all created before it. The others' are issued on request (see the class).
	 */
	private static long tokenOf(Held hold) {
		if (hold.kind == HoldKind.EXCLUSIVE) {
			return hold.czxid;
		}
		synchronized (hold) {
			return (hold.token != 0) ? hold.token : Acquisition.TOKEN_ON_REQUEST;
		}
	}

	/** @return the children in line, sorted; empty if the parent is not there */
	private List<Node> children(String parent) throws Exception {
		List<String> names;
		try {
			names = this.client.getChildren().forPath(parent);
		}
		catch (KeeperException.NoNodeException none) {
			return new ArrayList<>();
		}
		return sorted(names);
	}

	/**
	 * As {@link #children(String)}, through the session's own handle: an acquisition's read of its line,
	 * which Curator's retry loop made about a tenth slower per uncontended pair. What Curator would try
	 * again (a connection lost meanwhile, the session replaced since the handle was taken) is left to
	 * Curator's call, which waits for the connection and reads through the current session.
	 */
	private List<Node> children(ZooKeeper zk, String parent) throws Exception {
		List<String> names;
		try {
			names = zk.getChildren(this.connection.fullPath(parent), false);
		}
		catch (KeeperException.NoNodeException none) {
			return new ArrayList<>();
		}
		catch (KeeperException.ConnectionLossException | KeeperException.OperationTimeoutException
				| KeeperException.SessionExpiredException | KeeperException.SessionMovedException retried) {
			// A lost connection or a replaced session: Curator's call waits, and reads through the current one.
			return children(parent);
		}
		return sorted(names);
	}

	private static List<Node> sorted(List<String> names) {
		List<Node> nodes = new ArrayList<>(names.size());
		for (String name : names) {
			Node node = Node.parse(name);
			if (node != null) {
				nodes.add(node);
			}
		}
		Collections.sort(nodes);
		return nodes;
	}

	// Leaving the line

	/**
	 * Deletes the attempt's nodes: the one it waits in, and any a create left whose answer never
	 * came. With {@code passOnHandOff} (the attempt's own thread gave up) at once, else (the
	 * registry closes) in the background.
	 */
	void leaveQueue(String name, HoldKind kind, String owner, String ticket, boolean passOnHandOff) {
		AttemptKey key = new AttemptKey(name, kind, owner, String.valueOf(ticket));
		String parent = parentPath(name, kind.family());
		String prefix = attemptPrefix(kind, key.ticket());
		Removal removal = () -> {
			this.places.remove(key);
			if (!this.connection.isConnected()) {
				// Not now: Curator would wait for the connection, holding up the attempt's caller (or the lease
				// thread) for a connection timeout; the reconnection runs it, or the session's end deletes the nodes.
				return false;
			}
			ZooKeeper zk = this.connection.zooKeeper();
			this.connection.hook("leave-checked", name);
			return removeAttemptNodes(zk, parent, prefix);
		};
		if (!passOnHandOff) {
			this.deletions.removeLater(removal);
			return;
		}
		try {
			if (!removal.run()) {
				this.deletions.removeLater(removal);
			}
		}
		catch (KeeperException.SessionExpiredException gone) {
			// The ensemble deletes the attempt's nodes with the session's others: there is nothing left to leave.
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			// Retried on the lease thread and on reconnection; the session's end deletes it anyway.
			this.deletions.removeLater(removal);
			throw this.connection.failure(ex);
		}
	}

	private void leave(ZooKeeper zk, String parent, AttemptKey key, String prefix) throws Exception {
		this.places.remove(key);
		if (!removeAttemptNodes(zk, parent, prefix)) {
			this.deletions.removeLater(() -> removeAttemptNodes(this.connection.zooKeeper(), parent, prefix));
		}
	}

	/** @return whether every node of the attempt is gone (false: another deleter of this client has one in hand) */
	private boolean removeAttemptNodes(ZooKeeper zk, String parent, String prefix) throws Exception {
		boolean done = true;
		for (Node node : children(parent)) {
			if (node.name().startsWith(prefix)) {
				done &= removeNode(zk, parent + "/" + node.name());
			}
		}
		return done;
	}

	/** Deletes this session's node at {@code path} unless a hold here has it; false if another deleter is at it. */
	private boolean removeNode(ZooKeeper zk, String path) throws Exception {
		Stat stat = zk.exists(this.connection.fullPath(path), false);
		if (stat == null || stat.getEphemeralOwner() != zk.getSessionId() || this.holds.hasNode(stat.getCzxid())) {
			return true;
		}
		return this.deletions.deleteNode(zk, path, stat.getCzxid()) != Deleted.BUSY;
	}

	/**
	 * A session ended, and the ensemble deletes its nodes: every place but those of session {@code kept}
	 * (made by a lock call that started over on it before the end was heard of) goes with it.
	 */
	void sessionLost(long kept) {
		this.places.values().removeIf(place -> place.session() != kept);
	}

	// Releasing, tokens, queries

	Release release(ReleaseRequest request) {
		return this.deletions.release(this.holds.get(request.name(), request.kind(), request.owner()), request.owner(),
				request.heldCount(), request.within());
	}

	/**
	 * A read, write or permit hold's token: a {@code setData} on its node. Never for an exclusive hold,
	 * whose token is its node's czxid: a lock node must stay at data version 0 (see {@link #makeLineParent}).
	 */
	long issueToken(String name, HoldKind kind, String owner, String attemptId) {
		Held hold = this.holds.get(name, kind, owner);
		if (!live(hold) || (attemptId != null && !attemptId.equals(hold.attemptId()))) {
			return Acquisition.NO_TOKEN;
		}
		synchronized (hold) {
			if (hold.token != 0) {
				return hold.token;
			}
		}
		Stat stat;
		try {
			// Written while the node holds (it stands, so it holds), through its own session.
			ZooKeeper zk = this.connection.zooKeeper();
			if (zk.getSessionId() != hold.session) {
				return Acquisition.NO_TOKEN;
			}
			stat = zk.setData(this.connection.fullPath(hold.path), ZooKeeperNodeData.nodeData(owner, "fenced"), -1);
		}
		catch (KeeperException.NoNodeException | KeeperException.SessionExpiredException gone) {
			return Acquisition.NO_TOKEN;
		}
		catch (Exception ex) {
			throw this.connection.failure(ex);
		}
		if (stat.getCzxid() != hold.czxid) {
			return Acquisition.NO_TOKEN;
		}
		synchronized (hold) {
			if (hold.gone) {
				return Acquisition.NO_TOKEN;
			}
			if (hold.token == 0) {
				hold.token = stat.getMzxid();
			}
			return hold.token;
		}
	}

	boolean isHeldBy(String name, HoldKind kind, String owner) {
		Held hold = this.holds.get(name, kind, owner);
		if (!live(hold)) {
			return false;
		}
		try {
			Stat stat = this.client.checkExists().forPath(hold.path);
			return stat != null && stat.getCzxid() == hold.czxid;
		}
		catch (Exception ex) {
			throw this.connection.failure(ex);
		}
	}

	/**
	 * The longest lease of the holds of that kind: this client's as kept here, another client's the
	 * session timeout (its lease is not in ZooKeeper, and its node goes with its session at the latest).
	 */
	Duration remainingLease(String name, HoldKind kind) {
		List<Node> nodes;
		try {
			nodes = children(parentPath(name, kind.family()));
		}
		catch (Exception ex) {
			throw this.connection.failure(ex);
		}
		Map<String, Held> local = new HashMap<>();
		for (Held hold : this.holds.shared(name, kind)) {
			local.put(ZKPaths.getNodeFromPath(hold.path), hold);
		}
		long longest = 0;
		long now = System.nanoTime();
		for (int i = 0; i < nodes.size(); i++) {
			Node node = nodes.get(i);
			if (node.kind() != letter(kind) || !holds(nodes, i)) {
				continue;
			}
			Held hold = local.get(node.name());
			long left = (hold != null && !hold.gone) ? Math.max(1_000_000, hold.deadline - now)
					: this.connection.sessionTimeout().toNanos();
			longest = Math.max(longest, left);
		}
		return Duration.ofNanos(longest);
	}

	/** @return the semaphore's permits (as its first node declares them, else as asked) less its holders */
	int availablePermits(String name, int permits) {
		List<Node> nodes;
		try {
			nodes = children(parentPath(name, HoldKind.Family.SEMAPHORE));
		}
		catch (Exception ex) {
			throw this.connection.failure(ex);
		}
		if (nodes.isEmpty()) {
			return permits;
		}
		int holding = 0;
		for (int i = 0; i < nodes.size(); i++) {
			if (holds(nodes, i)) {
				holding++;
			}
		}
		return Math.max(0, nodes.get(0).permits() - holding);
	}

}
