package io.distlock.zookeeper;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockNotice;
import io.distlock.zookeeper.ZooKeeperDeletions.Companion;

/**
 * The line of an exclusive lock's waiting clients: ephemeral sequential nodes under
 * {@code <basePath>/<encoded name>.q} ({@link ZooKeeperNodeNames} never makes a '.', so the parent
 * never meets a lock's node), a container node that the ensemble deletes once it stayed empty.
 * The line only orders who tries next; the hold itself is still the lock's own node, which
 * {@link ZooKeeperAcquisitions} creates, so a client that never queues (an instance of an earlier
 * version) still competes for the same node and two holders are never possible.
 *
 * <p><b>One place per client and lock.</b> The engine lets only the first waiting thread of a
 * lock call (its other threads wait behind it, in arrival order), so the client needs one place:
 * {@code <instance>.<n>-<sequence>}, {@code instance} random per backend and {@code n} counting its
 * places. A second thread that calls too (two that arrived together) uses the same place. When one
 * of the client's threads takes the lock through the place, the place stays first until that hold
 * ends ({@link #holdEnded}), and the client's next thread queues again at the end, so clients take
 * turns; a place also ends when the last attempt that used it gives up.
 *
 * <p><b>One waiter woken per hand-off.</b> A waiter that is not first watches only the node before
 * its own (a one-shot data watch); the first watches the lock's node. A release deletes
 * the lock's node and the holder's place together, in one transaction, which wakes the one waiter
 * behind it with the lock free; a waiter that leaves wakes the one behind it. A client none of
 * whose threads waits for the lock looks at the line first (one read, its number of places) and
 * tries the create only if the line is empty, so an
 * uncontended lock costs a read, a create and a delete, as Curator's (a create, a read of the line
 * and a delete); it joins the line if anyone is in it, or if the create is refused.
 *
 * <p><b>A frozen waiter</b> (its process paused, its session alive) must not hold the line up for
 * longer than a place time ({@link LockBackend#QUEUE_PLACE}, less for a shorter lease), as a
 * queued place lapses on Redis: the second in line looks whether the lock is free each time it is
 * called, which the engine does at least every half place time; once it found the lock free under
 * the same first node for half a place time, that node's place lapses (it deletes it), and the
 * second goes first. Its owner, should it come back, takes the lock if it is free, else finds its
 * node gone and queues again.
 */
final class ZooKeeperQueue {

	// Under the backend's name, which is the one users set levels for.
	private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

	/** How soon a call whose line changed under it, or was answered late, looks again. */
	private static final Duration RETRY = Duration.ofMillis(100);

	private static final int MAX_TRIES = 3;

	/** The length of ZooKeeper's sequence suffix: a signed int, zero-padded to ten characters. */
	private static final int SEQUENCE_LENGTH = 10;

	private final ZooKeeperConnection connection;

	private final ZooKeeperAcquisitions acquisitions;

	private final ZooKeeperDeletions deletions;

	/** Makes this backend's nodes its own, and tells them from other clients'. */
	private final String instance;

	private final AtomicLong placeNumbers = new AtomicLong();

	/** This client's place per lock name, while one of its attempts waits in line. */
	private final Map<String, Place> places = new ConcurrentHashMap<>();

	/** The place of each lock this client holds, taken through the line; it goes when the hold ends. */
	private final Map<String, Place> holding = new ConcurrentHashMap<>();

	/** The engine's subscriptions per lock name, which the one-shot watches wake. */
	private final Map<String, List<Consumer<LockNotice>>> subscribers = new ConcurrentHashMap<>();

	ZooKeeperQueue(ZooKeeperConnection connection, ZooKeeperAcquisitions acquisitions, ZooKeeperDeletions deletions) {
		this.connection = connection;
		this.acquisitions = acquisitions;
		this.deletions = deletions;
		this.instance = Long.toString(new SecureRandom().nextLong() & Long.MAX_VALUE, 36);
	}

	/**
	 * This client's place in one lock's line.
	 * @param node its name under the line's parent
	 * @param session the session that made it
	 */
	private record Place(String node, long session, Set<String> tickets, Lapse lapse) {
	}

	/**
	 * What this client saw of the line: as the second, the first node and since when the lock was
	 * seen free under it; whether its place is first (which it then stays); which place it watches.
	 */
	private static final class Lapse {

		String head;

		long freeSince;

		boolean first;

		/** The place this one watches, whether it was the first in line, and whether its deletion was heard. */
		String ahead;

		boolean aheadFirst;

		boolean aheadGone;

	}

	String linePath(String name) {
		return this.connection.path(name) + ".q";
	}

	// Acquiring

	/**
	 * Takes the lock if this client's turn has come, else waits in line. Re-entries, and attempts
	 * that may not wait, never queue: they create the node or are refused.
	 */
	Acquisition acquire(AcquireRequest request) {
		String name = request.name();
		if (request.heldCount() > 0) {
			return create(request);
		}
		// Under a millisecond to wait: a try without a timeout, or a timed wait's last call at its deadline.
		// It never joins, but a client that has a place keeps the line's rules (only the first creates,
		// and a place used for a hold goes when the hold ends): a direct create would pass those ahead
		// and, taking the lock, strand the place, as the engine then calls no leaveQueue.
		boolean mayWait = request.queueFor().toMillis() > 0;
		try {
			this.connection.awaitConnection();
			if (!mayWait && !this.places.containsKey(name)) {
				// A try without a wait passes nobody in line, as Curator's does not and Redis's does not: the
				// first in line may have been woken by the release and not have created yet. Read through a
				// handle whose session Curator may replace meanwhile, so it starts over as a look does.
				return this.connection.lookUntilAnswered((zk, tries) -> {
					this.connection.hook("line-size-reading", name);
					return lineIsEmpty(zk, linePath(name)) ? create(request) : Acquisition.heldByOther(RETRY);
				});
			}
			return this.connection.lookUntilAnswered((zk, tries) -> lookInLine(request, zk, tries));
		}
		catch (Exception ex) {
			throw this.connection.failure(ex);
		}
	}

	/**
	 * One look at the line through one session's handle: joins it if this client has no place there
	 * yet, and creates the lock's node if the place is first.
	 * @return the answer, or {@code null} to look again (the place is gone, or the line moved up)
	 */
	private Acquisition lookInLine(AcquireRequest request, ZooKeeper zk, int tries) throws Exception {
		String name = request.name();
		boolean mayWait = request.queueFor().toMillis() > 0;
		String line = linePath(name);
		String ticket = String.valueOf(request.ticket());
		Duration placeTime = min(LockBackend.QUEUE_PLACE, request.lease());
		long session = zk.getSessionId();
		Place place = this.places.get(name);
		if (place != null && place.session() != session) {
			// Made by a session since replaced: the ensemble deletes it with that session.
			this.places.remove(name, place);
			place = null;
		}
		boolean joined = false;
		if (place == null) {
			if (!mayWait) {
				// Its place lapsed, or went with the session: with no place and no time, the create alone.
				return create(request);
			}
			if (!this.subscribers.containsKey(name) && lineIsEmpty(zk, line)) {
				// No thread of this client waits for the lock and nobody is in line: the create straight
				// away, one read more than a lock without a line. With anyone in line it joins, even
				// when the lock looks free: the first in line may have been woken and not have
				// created yet, and a client that releases and locks again at once would otherwise
				// take nearly every hand-off. (A waiter of this client, which is subscribed, joins.)
				Acquisition direct = create(request);
				if (direct.status() != Acquisition.Status.HELD_BY_OTHER) {
					return direct;
				}
			}
			place = join(zk, name, line, request.owner(), ticket);
			joined = true;
		}
		else if (mayWait) {
			place.tickets().add(ticket);
		}
		// (A call that may not wait adds no ticket: the engine calls no leaveQueue after it, and a
		// ticket never taken out would keep the place for as long as the session lives.)
		if (!knownFirst(place) && !movedUpToFirst(place)) {
			List<String> nodes = children(zk, line);
			this.connection.hook("line-read", name);
			int index = nodes.indexOf(place.node());
			if (index < 0) {
				// Its place lapsed (a waiter behind found it frozen) or never landed: it queues again.
				this.places.remove(name, place);
				if (tries >= MAX_TRIES) {
					return Acquisition.heldByOther(RETRY);
				}
				return null;
			}
			Place held = this.holding.get(name);
			String ahead = null;
			String first = null;
			for (int i = 0; i < nodes.size(); i++) {
				String node = nodes.get(i);
				if (!node.startsWith(this.instance + ".")) {
					first = (first != null) ? first : node;
					ahead = (i < index) ? node : ahead;
				}
				else if (i != index && (held == null || !node.equals(held.node()))) {
					// This client's earlier place, whose deletion is under way, or a copy of a re-sent create.
					// (The place of its own hold stays until the hold ends, not to wake the waiter behind it.)
					deleteInBackground(zk, line + "/" + node);
				}
			}
			if (ahead != null) {
				// A place just made cannot tell yet how long the lock has been free: the next call looks.
				if (!joined && ahead.equals(first) && lapsed(zk, place, name, first, placeTime)) {
					this.connection.hook("lapsing", name);
					deleteInBackground(zk, line + "/" + first);
					return null;
				}
				if (!mayWait) {
					// Not its turn, and no time to wait for it: no watch, which nobody would heed.
					return Acquisition.heldByOther(half(placeTime));
				}
				watching(place, ahead, ahead.equals(first));
				if (!watchWhileThere(zk, line + "/" + ahead, name)) {
					// Gone meanwhile: the line moved up.
					return null;
				}
				return Acquisition.heldByOther(half(placeTime));
			}
			// First from now on, as places only join behind: later calls go straight to the create. The
			// place before went with its holder's release, so the lock is most likely free.
			markFirst(place);
		}
		Acquisition taken = create(request);
		if (taken.status() == Acquisition.Status.ACQUIRED) {
			// Its turn is used: the client's next attempt queues again at the end. The place stays
			// first until the hold ends, so that the waiter behind it is woken once, by the release.
			this.places.remove(name, place);
			Place earlier = this.holding.put(name, place);
			if (earlier != null) {
				deleteInBackground(zk, line + "/" + earlier.node());
			}
			return taken;
		}
		if (taken.status() != Acquisition.Status.HELD_BY_OTHER) {
			return taken;
		}
		String lock = this.connection.path(name);
		boolean free = mayWait ? !watchWhileThere(zk, lock, name)
				: zk.exists(this.connection.fullPath(lock), false) == null;
		if (free && tries < MAX_TRIES) {
			// Released since the create was refused: try again rather than wait for nothing.
			return null;
		}
		if (!joined && zk.exists(this.connection.fullPath(line + "/" + place.node()), false) == null) {
			// Its place lapsed while this client could not run (a refused create is rare for the first
			// in line, so the look is cheap): it queues again at the end rather than pass the line.
			this.places.remove(name, place);
		}
		// Free again after its tries (others keep taking it): no watch is set on a missing node, so
		// nothing would wake this client; it calls again soon rather than after half a place time.
		return free ? Acquisition.heldByOther(RETRY) : taken;
	}

	/** One read: whether the line has no place (or no parent, which the ensemble deletes once empty). */
	private boolean lineIsEmpty(ZooKeeper zk, String line) throws Exception {
		Stat stat = zk.exists(this.connection.fullPath(line), false);
		return stat == null || stat.getNumChildren() == 0;
	}

	/**
	 * Sets a one-shot watch on a node that is there, to wake this client when it goes. A data watch,
	 * not {@code exists}: on a node already gone, {@code exists} would leave a watch for its creation,
	 * which a place's sequential name never sees (the watch would stay on both ends for the session's
	 * life and be sent again at each reconnection), and which {@link Wake} would ignore on the lock's
	 * node anyway. Nobody sets data on a place or on an exclusive lock's node, so only the deletion fires it.
	 * @return whether the node was there (and the watch set)
	 */
	boolean watchWhileThere(ZooKeeper zk, String path, String name) throws Exception {
		try {
			zk.getData(this.connection.fullPath(path), new Wake(name), null);
			return true;
		}
		catch (KeeperException.NoNodeException gone) {
			return false;
		}
	}

	private static boolean knownFirst(Place place) {
		synchronized (place.lapse()) {
			return place.lapse().first;
		}
	}

	/**
	 * Whether the first place in line, which this one watched from second, is gone: this one is first
	 * then (places only join behind), known without reading the line again, which saves a read
	 * between a release and the next create.
	 */
	private static boolean movedUpToFirst(Place place) {
		synchronized (place.lapse()) {
			Lapse lapse = place.lapse();
			if (lapse.aheadFirst && lapse.aheadGone) {
				lapse.first = true;
				return true;
			}
			return false;
		}
	}

	private static void watching(Place place, String ahead, boolean first) {
		synchronized (place.lapse()) {
			Lapse lapse = place.lapse();
			lapse.ahead = ahead;
			lapse.aheadFirst = first;
			lapse.aheadGone = false;
		}
	}

	/** A watched place was deleted: the place of this client that watched it learns so. */
	private void placeGone(String name, String path) {
		Place place = this.places.get(name);
		if (place == null || path == null) {
			return;
		}
		synchronized (place.lapse()) {
			Lapse lapse = place.lapse();
			if (lapse.ahead != null && path.endsWith("/" + lapse.ahead)) {
				lapse.aheadGone = true;
			}
		}
	}

	private static void markFirst(Place place) {
		synchronized (place.lapse()) {
			place.lapse().first = true;
		}
	}

	private Acquisition create(AcquireRequest request) {
		return this.acquisitions.acquire(request.name(), request.owner(), request.heldCount(), request.lease(),
				request.ticket());
	}

	/**
	 * Whether the first in line let a free lock be for half a place time: seen free under the same
	 * first node at two calls that far apart (the engine calls at least every half place time, so
	 * a frozen first node is passed within about one place time of the release).
	 */
	private boolean lapsed(ZooKeeper zk, Place place, String name, String first, Duration placeTime) throws Exception {
		Stat lock = zk.exists(this.connection.fullPath(this.connection.path(name)), false);
		// No node, or the empty parent of a line under the other protocol (ZooKeeperLockRegistry.ExclusiveProtocol)
		// that the create can delete (ZooKeeperAcquisitions.deleteEmptyLine).
		boolean free = lock == null
				|| (lock.getEphemeralOwner() == 0 && lock.getNumChildren() == 0 && lock.getVersion() >= 1);
		long now = System.nanoTime();
		synchronized (place.lapse()) {
			Lapse lapse = place.lapse();
			if (!free || !first.equals(lapse.head)) {
				lapse.head = free ? first : null;
				lapse.freeSince = now;
				return false;
			}
			return now - lapse.freeSince >= half(placeTime).toNanos();
		}
	}

	/** Creates this client's place at the end of the line. */
	private Place join(ZooKeeper zk, String name, String line, String owner, String ticket) throws Exception {
		String prefix = this.instance + "." + Long.toString(this.placeNumbers.incrementAndGet(), 36) + "-";
		byte[] data = ZooKeeperNodeData.nodeData(owner, ticket);
		// The node's session, not the look's: Curator sends a create again through the session it opens
		// when the look's ends, and the place must stay the attempt's on that one.
		Stat stat = new Stat();
		String path;
		this.connection.hook("joining", name);
		try {
			path = inLine(line + "/" + prefix, data, stat);
		}
		catch (KeeperException.NoNodeException noParent) {
			try {
				this.connection.client().create().creatingParentsIfNeeded().withMode(CreateMode.CONTAINER).forPath(line);
			}
			catch (KeeperException.NodeExistsException made) {
				// Another client made it first.
			}
			path = inLine(line + "/" + prefix, data, stat);
		}
		catch (Exception unanswered) {
			// The create may have landed: its node must not hold the line up for the session's lifetime.
			this.deletions.removeLater(() -> removePrefixed(line, prefix));
			throw unanswered;
		}
		this.connection.hook("queued", name);
		Place place = new Place(ZKPaths.getNodeFromPath(path), stat.getEphemeralOwner(), ConcurrentHashMap.newKeySet(),
				new Lapse());
		place.tickets().add(ticket);
		Place raced = this.places.putIfAbsent(name, place);
		if (raced != null) {
			// Another thread of this client queued at the same moment: one place is enough. (Through the
			// handle of the node's session, which the look's may no longer be.)
			if (stat.getEphemeralOwner() == zk.getSessionId()) {
				deleteInBackground(zk, path);
			}
			else {
				String made = path;
				this.deletions.removeLater(() -> deleteLineNode(made));
			}
			raced.tickets().add(ticket);
			return raced;
		}
		return place;
	}

	private String inLine(String path, byte[] data, Stat stat) throws Exception {
		return this.connection.client()
			.create()
			.storingStatIn(stat)
			.withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
			.forPath(path, data);
	}

	/** @return the line's children, in line order; empty if it has none */
	private List<String> children(ZooKeeper zk, String line) throws Exception {
		List<String> nodes;
		try {
			nodes = new ArrayList<>(zk.getChildren(this.connection.fullPath(line), false));
		}
		catch (KeeperException.NoNodeException none) {
			return new ArrayList<>();
		}
		// The counter is a signed int that wraps on a parent that is never empty: ordered by difference.
		nodes.removeIf(node -> sequence(node) == null);
		nodes.sort((a, b) -> Integer.signum(sequence(a) - sequence(b)));
		return nodes;
	}

	private static Integer sequence(String node) {
		if (node.length() <= SEQUENCE_LENGTH) {
			return null;
		}
		try {
			return Integer.parseInt(node.substring(node.length() - SEQUENCE_LENGTH));
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	private int othersIn(List<String> nodes) {
		int others = 0;
		for (String node : nodes) {
			if (!node.startsWith(this.instance + ".")) {
				others++;
			}
		}
		return others;
	}

	/** Deletes a line node without waiting for the answer; what fails is tried again later. */
	private void deleteInBackground(ZooKeeper zk, String path) {
		zk.delete(this.connection.fullPath(path), -1, (rc, at, context) -> {
			KeeperException.Code code = KeeperException.Code.get(rc);
			if (code != KeeperException.Code.OK && code != KeeperException.Code.NONODE
					&& code != KeeperException.Code.SESSIONEXPIRED) {
				this.deletions.removeLater(() -> deleteLineNode(path));
			}
		}, null);
	}

	private boolean deleteLineNode(String path) throws Exception {
		return deleteLineNode(this.connection.zooKeeper(), path);
	}

	private boolean deleteLineNode(ZooKeeper zk, String path) throws Exception {
		try {
			zk.delete(this.connection.fullPath(path), -1);
		}
		catch (KeeperException.NoNodeException gone) {
			// Deleted already.
		}
		return true;
	}

	/** @return whether every node of this client's place {@code prefix} in the line is gone */
	private boolean removePrefixed(String line, String prefix) throws Exception {
		for (String node : children(this.connection.zooKeeper(), line)) {
			if (node.startsWith(prefix)) {
				deleteLineNode(line + "/" + node);
			}
		}
		return true;
	}

	// Leaving the line

	/**
	 * The attempt {@code ticket} gives up: its client's place goes once no other attempt of the client
	 * uses it. With {@code passOnHandOff} (the attempt's own thread gave up) at once, else (the
	 * registry closes) in the background.
	 */
	void leaveQueue(String name, String ticket, boolean passOnHandOff) {
		Place place = this.places.get(name);
		if (place == null || ticket == null) {
			return;
		}
		if (!place.tickets().remove(ticket) || !place.tickets().isEmpty() || !this.places.remove(name, place)) {
			return;
		}
		String path = linePath(name) + "/" + place.node();
		if (!passOnHandOff) {
			this.deletions.removeLater(() -> deleteLineNode(path));
			return;
		}
		try {
			ZooKeeper zk = this.connection.zooKeeper();
			if (zk.getSessionId() == place.session()) {
				this.connection.hook("leave-checked", name);
				deleteLineNode(zk, path);
			}
		}
		catch (KeeperException.SessionExpiredException gone) {
			// The ensemble deletes the place with the session's other nodes: there is nothing left to leave.
		}
		catch (Exception ex) {
			// Retried on the lease thread and on reconnection; the session's end deletes it anyway.
			this.deletions.removeLater(() -> deleteLineNode(path));
			throw this.connection.failure(ex);
		}
	}

	/**
	 * A session ended, and the ensemble deletes its nodes: every place but those of session {@code kept}
	 * (made by a lock call that started over on it before the end was heard of) goes with it.
	 */
	void sessionLost(long kept) {
		this.places.values().removeIf(place -> place.session() != kept);
		this.holding.values().removeIf(place -> place.session() != kept);
	}

	/**
	 * @return the place the hold of lock {@code name} was taken through, for its release to delete
	 * in one transaction with the lock's node; {@code null} if it was taken directly, or the place's
	 * session is over
	 */
	Companion placeOfHold(String name) {
		Place place = this.holding.get(name);
		try {
			return (place != null && this.connection.zooKeeper().getSessionId() == place.session())
					? new Companion(linePath(name) + "/" + place.node(), place) : null;
		}
		catch (Exception noHandle) {
			return null;
		}
	}

	/**
	 * The hold of lock {@code name} ended here (released, or its lease ran out): the place it was
	 * taken through goes now, after the lock's node, which wakes the waiter behind it.
	 */
	void holdEnded(String name) {
		holdEnded(name, null);
	}

	/** As {@link #holdEnded(String)}, where the release may have deleted the place already ({@code deletedWith}). */
	void holdEnded(String name, Companion deletedWith) {
		Place place;
		if (deletedWith != null) {
			// Only the place this release was for: once the release's delete landed, another hold of this
			// client may have taken the lock through a place of its own, which goes with that hold's end.
			place = (Place) deletedWith.place;
			if (!this.holding.remove(name, place) || deletedWith.deleted) {
				return;
			}
		}
		else {
			place = this.holding.remove(name);
			if (place == null) {
				return;
			}
		}
		try {
			ZooKeeper zk = this.connection.zooKeeper();
			if (zk.getSessionId() == place.session()) {
				deleteInBackground(zk, linePath(name) + "/" + place.node());
			}
		}
		catch (Exception ex) {
			// No handle: the session is over, and its places with it; else retried on reconnection.
			this.deletions.removeLater(() -> deleteLineNode(linePath(name) + "/" + place.node()));
		}
	}

	// Waking

	/**
	 * Registers the engine's subscription; nothing is asked of the server, as the waiter's own calls
	 * set the one-shot watches that wake it.
	 */
	AutoCloseable subscribe(String name, Consumer<LockNotice> onNotice) {
		this.subscribers.computeIfAbsent(name, any -> new CopyOnWriteArrayList<>()).add(onNotice);
		return () -> this.subscribers.computeIfPresent(name, (any, list) -> {
			list.remove(onNotice);
			return list.isEmpty() ? null : list;
		});
	}

	/** Watches set on a session that ended are gone: every waiter looks again. */
	void renewedSession() {
		this.subscribers.values().forEach(list -> list.forEach(subscriber -> subscriber.accept(LockNotice.RELEASED)));
	}

	private static Duration min(Duration a, Duration b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

	private static Duration half(Duration duration) {
		return Duration.ofNanos(Math.max(1_000_000, duration.toNanos() / 2));
	}

	/**
	 * A one-shot watch for one lock: equal for equal names of the same queue, so the client keeps one
	 * per path however often a waiter sets it again before it fires. The queue is part of equality
	 * because ZooKeeper's client keeps one of equal watchers per path: two backends on one Curator
	 * client (the starter's default and named registries share its bean and base path) would
	 * otherwise see one's watch dropped as the other's duplicate, and the release wake the wrong one.
	 */
	private final class Wake implements Watcher {

		private final String name;

		Wake(String name) {
			this.name = name;
		}

		@Override
		public void process(WatchedEvent event) {
			if (event.getType() != Event.EventType.NodeDeleted) {
				return;
			}
			try {
				ZooKeeperConnection connection = ZooKeeperQueue.this.connection;
				boolean release = connection.fullPath(connection.path(this.name)).equals(event.getPath());
				if (!release) {
					placeGone(this.name, event.getPath());
				}
				connection.hook(release ? "woken-by-release" : "woken-by-line", this.name);
			}
			catch (Exception ex) {
				log.debug("A test hook failed", ex);
			}
			List<Consumer<LockNotice>> list = ZooKeeperQueue.this.subscribers.get(this.name);
			if (list != null) {
				list.forEach(subscriber -> subscriber.accept(LockNotice.RELEASED));
			}
		}

		private ZooKeeperQueue queue() {
			return ZooKeeperQueue.this;
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof Wake wake && wake.queue() == queue() && wake.name.equals(this.name);
		}

		@Override
		public int hashCode() {
			return 31 * System.identityHashCode(queue()) + this.name.hashCode();
		}

	}

}
