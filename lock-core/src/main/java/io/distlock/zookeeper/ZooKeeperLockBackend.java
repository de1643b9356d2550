package io.distlock.zookeeper;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.HoldKind;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend;
import io.distlock.core.LockNotice;
import io.distlock.core.ReleaseRequest;
import io.distlock.zookeeper.ZooKeeperDeletions.Companion;
import io.distlock.zookeeper.ZooKeeperHolds.Held;

/**
 * Keeps locks in ZooKeeper through Apache Curator. What follows is the default protocol of exclusive
 * locks, {@link ZooKeeperLockRegistry.ExclusiveProtocol#LOCK_NODE}; under
 * {@link ZooKeeperLockRegistry.ExclusiveProtocol#LINE} they are held as read-write locks' write holds
 * are, the first node of the lock's line holding ({@link ZooKeeperSharedHolds}).
 *
 * <p>One ephemeral znode per held lock,
 * {@code <basePath>/<encoded name>} (see {@link ZooKeeperNodeNames}), whose data is the owner id,
 * a NUL character and the nonce of the create that made it (the attempt's ticket, a dot, a UUID):
 * only the create that made a node takes it up, see {@link #acquire(AcquireRequest)}.
 * Creating it is taking the lock; ZooKeeper's consensus makes the create succeed for one client
 * only, and the other creates fail with {@code NodeExists}. The fencing token is the zxid that
 * created the node ({@code czxid}): zxids only grow, across restarts and leader changes, as they
 * number the ensemble's replicated log.
 *
 * <p><b>Waiters queue beside the node.</b> Waiting clients take a place in a line of their own,
 * ephemeral sequential nodes under {@code <basePath>/<encoded name>.q} ({@link ZooKeeperQueue}):
 * only the first in line tries the create, watching the lock's node (a one-shot watch); every
 * other waiter watches only the place before its own. A release thus wakes one waiter, and
 * clients are served in the order they arrived; within one client the engine serves its threads
 * in arrival order, and only the first of them calls. The line orders who tries, it does not
 * decide who holds: that is still the create of the lock's node, so an instance of an earlier
 * version, which never queues and watches the node itself, may win a free lock against the first
 * in line but never holds it beside anyone. A place whose waiter stops calling while the lock is
 * free lapses within about one place time ({@link LockBackend#QUEUE_PLACE}), as on Redis: the
 * waiter behind it deletes it. Unlike Curator's {@code InterProcessMutex}, whose holder is the
 * first node of its line, no hold is handed over: the hand-off protocol of the engine wants a
 * provisional lease that ephemeral nodes (alive as long as the whole session) do not give.
 *
 * <p><b>Leases.</b> A hold ends at the first of: its owner's release; its lease running out without
 * renewal, when this client deletes its own node (so a lock whose thread died, or an explicit lease
 * that ran out, frees itself as on Redis); the end of this client's session, when the ensemble
 * deletes the node (a crashed, paused or cut-off client loses its holds after the session timeout,
 * not after the lease). Renewing checks that the node is still there, created by this session.
 *
 * <p><b>Sessions.</b> Every node is bound to the session that created it; it is deleted only
 * through that session's own ZooKeeper handle, which can never act for a later session, so a
 * late release cannot delete another client's node created under the same path after this
 * session expired. On {@link ConnectionState#SUSPENDED} holds are in doubt and renewals fail (the
 * watchdog reports the failure and keeps trying); on {@link ConnectionState#LOST} (the session
 * expired, or Curator gave it up after the session timeout) every hold counts as lost: renewals
 * answer {@code false} and releases {@link Release#NOT_HELD}, so owners are told.
 *
 * <p><b>Read-write locks and semaphores</b> do queue: their holds are sequential nodes in line under
 * a parent per lock, and the node is the waiter's place ({@link ZooKeeperSharedHolds}); leases,
 * renewals, releases and the session's loss treat their nodes as those of exclusive locks.
 *
 * <p>The work is done by one package-private part per concern (acquiring, the line of waiters, deleting
 * nodes, leases, renewing, release notices), which this class wires.
 */
public final class ZooKeeperLockBackend implements LockBackend {

	private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

	private final CuratorFramework client;

	private final ZooKeeperConnection connection;

	private final boolean ownsClient;

	private final ZooKeeperHolds holds;

	private final ZooKeeperDeletions deletions;

	private final ZooKeeperAcquisitions acquisitions;

	private final ZooKeeperSubscriptions subscriptions;

	private final ZooKeeperRenewals renewals;

	private final ZooKeeperSharedHolds shared;

	private final ZooKeeperQueue queue;

	/** Whether an exclusive lock's holder is the first node of its line rather than the lock's own node. */
	private final boolean holdersInLine;

	private final ConnectionStateListener connectionListener = (client, state) -> connectionChanged(state);

	private volatile ConnectionState lastState = ConnectionState.CONNECTED;

	/** Whom the end of the session is reported to (the engine), once it asked. */
	private volatile BiConsumer<List<HoldRef>, String> holdsLost = (holds, reason) -> {
	};

	/** Set once: two threads closing at once (a shutdown hook and the context) must not close the client twice. */
	private final AtomicBoolean closed = new AtomicBoolean();

	/**
	 * @param client a started Curator client
	 * @param basePath the parent of all lock nodes, e.g. {@code /distlock}
	 * @param connectionTimeout how long a call waits for a connection (for messages)
	 * @param ownsClient whether {@link #close()} closes the client
	 */
	public ZooKeeperLockBackend(CuratorFramework client, String basePath, Duration connectionTimeout, boolean ownsClient) {
		this(client, basePath, connectionTimeout, ownsClient, ZooKeeperLockRegistry.ExclusiveProtocol.LOCK_NODE);
	}

	/**
	 * @param client a started Curator client
	 * @param basePath the parent of all lock nodes, e.g. {@code /distlock}
	 * @param connectionTimeout how long a call waits for a connection (for messages)
	 * @param ownsClient whether {@link #close()} closes the client
	 * @param protocol how exclusive locks are held, see {@link ZooKeeperLockRegistry.ExclusiveProtocol}
	 */
	public ZooKeeperLockBackend(CuratorFramework client, String basePath, Duration connectionTimeout, boolean ownsClient,
			ZooKeeperLockRegistry.ExclusiveProtocol protocol) {
		this.client = client;
		this.holdersInLine = protocol == ZooKeeperLockRegistry.ExclusiveProtocol.LINE;
		this.connection = new ZooKeeperConnection(client, basePath, connectionTimeout, this::hook);
		this.ownsClient = ownsClient;
		this.holds = new ZooKeeperHolds(this.connection, this::deleteExpired);
		this.deletions = new ZooKeeperDeletions(this.connection, this.holds);
		this.subscriptions = new ZooKeeperSubscriptions(this.connection);
		this.acquisitions = new ZooKeeperAcquisitions(this.connection, this.holds, this.deletions);
		this.renewals = new ZooKeeperRenewals(this.connection, this.holds);
		this.queue = new ZooKeeperQueue(this.connection, this.acquisitions, this.deletions);
		this.shared = new ZooKeeperSharedHolds(this.connection, this.holds, this.deletions, this.queue::watchWhileThere);
		client.getConnectionStateListenable().addListener(this.connectionListener);
	}

	/** The lease thread's hand-off: a hold whose lease ran out, already forgotten, has its node deleted. */
	private void deleteExpired(Held hold) {
		this.deletions.deleteQuietly(hold);
		if (hold.kind == HoldKind.EXCLUSIVE) {
			this.queue.holdEnded(hold.name);
		}
	}

	@Override
	public String description() {
		return "ZooKeeper at " + this.connection.ensemble() + ", " + this.connection.basePath();
	}

	@Override
	public String explain(RuntimeException failure) {
		return this.connection.explain(failure);
	}

	// Acquiring

	/**
	 * Acquires an exclusive lock by creating the node when the line is empty or this client's place
	 * is first, else waits in line ({@link ZooKeeperQueue}; read, write and permit holds:
	 * {@link ZooKeeperSharedHolds#acquire}). A create takes up only the node it made itself, known
	 * by the nonce it stores; any other node of this owner in this session is stale, and is deleted
	 * before the create is sent again.
	 */
	@Override
	public Acquisition acquire(AcquireRequest request) {
		if (request.kind() != HoldKind.EXCLUSIVE || this.holdersInLine) {
			return this.shared.acquire(request);
		}
		return this.queue.acquire(request);
	}

	/**
	 * Deletes the node this owner's attempt {@code ticket} may have created without hearing the
	 * answer (the engine calls this with {@code passOnHandOff} for an attempt that was sent but not
	 * answered): this session's node whose data carries the ticket and that no hold here has.
	 * There is no queue to leave.
	 */
	@Override
	public void leaveQueue(String name, String owner, String ticket, boolean passOnHandOff) {
		if (this.holdersInLine) {
			this.shared.leaveQueue(name, HoldKind.EXCLUSIVE, owner, ticket, passOnHandOff);
			return;
		}
		try {
			this.acquisitions.leaveQueue(name, owner, ticket, passOnHandOff);
		}
		finally {
			this.queue.leaveQueue(name, ticket, passOnHandOff);
		}
	}

	/**
	 * Read, write and permit holds wait in line: the attempt's node is its place; leaving deletes it
	 * (and any node a create whose answer never came left), see {@link ZooKeeperSharedHolds}.
	 */
	@Override
	public void leaveQueue(String name, HoldKind kind, String owner, String ticket, boolean passOnHandOff) {
		if (kind == HoldKind.EXCLUSIVE) {
			leaveQueue(name, owner, ticket, passOnHandOff);
			return;
		}
		this.shared.leaveQueue(name, kind, owner, ticket, passOnHandOff);
	}

	/** All four: exclusive locks as one node per lock, the others in line under a parent per lock. */
	@Override
	public Set<HoldKind> supportedKinds() {
		return EnumSet.allOf(HoldKind.class);
	}

	/**
	 * Exclusive waiters queue (see {@link ZooKeeperQueue}); a released lock is never handed over,
	 * the first in line is woken and creates the node.
	 */
	@Override
	public boolean queuesWaiters() {
		return true;
	}

	/**
	 * Every kind queues: read, write and permit waiters in line as their holds' nodes, exclusive ones
	 * in a line beside the lock's node ({@link ZooKeeperQueue}). No hold is ever handed over.
	 */
	@Override
	public boolean queuesWaiters(HoldKind kind) {
		return true;
	}

	// Releasing

	@Override
	public Release release(ReleaseRequest request) {
		if (request.kind() != HoldKind.EXCLUSIVE || this.holdersInLine) {
			return this.shared.release(request);
		}
		// The place the hold was taken through goes with the lock's node, in one transaction when it can.
		Companion place = (request.heldCount() > 1) ? null : this.queue.placeOfHold(request.name());
		Release released = this.deletions.release(request.name(), request.owner(), request.heldCount(), request.within(),
				place);
		if (released != Release.DECREMENTED) {
			this.connection.hookQuietly("release-deleted", request.name());
			// After the lock's node: the waiter behind the place, woken by its deletion, finds the lock free.
			this.queue.holdEnded(request.name(), place);
		}
		return released;
	}

	/**
	 * A hold here ends with its session as well as with its lease: a process that stops, or a
	 * registry that closes its own client, deletes its nodes at once. A lock kept after its release
	 * ({@code holdAtLeast}) would not outlive the instance that keeps it, so it is refused.
	 */
	@Override
	public boolean leasesExpire() {
		return false;
	}

	// Renewing

	@Override
	public List<Boolean> renew(List<HoldRef> refs, Duration lease, Duration within) {
		return this.renewals.renew(refs, lease, within);
	}

	// Queries

	@Override
	public boolean isHeldBy(String name, String owner) {
		if (this.holdersInLine) {
			return this.shared.isHeldBy(name, HoldKind.EXCLUSIVE, owner);
		}
		Held hold = this.holds.get(name);
		if (hold != null && hold.owner.equals(owner) && (hold.gone || hold.session != this.connection.sessionId())) {
			return false;
		}
		try {
			Stat stat = new Stat();
			byte[] data = this.client.getData().storingStatIn(stat).forPath(this.connection.path(name));
			return owner.equals(ZooKeeperNodeData.ownerOf(data))
					&& (hold == null || !hold.owner.equals(owner) || stat.getCzxid() == hold.czxid);
		}
		catch (KeeperException.NoNodeException free) {
			return false;
		}
		catch (Exception ex) {
			throw this.connection.failure(ex);
		}
	}

	/**
	 * For a lock this client holds, what is left of its lease; for another client's hold, the
	 * session timeout, as its lease is not kept in ZooKeeper (and a crashed holder's node goes with
	 * its session); zero when the lock is free.
	 */
	@Override
	public Duration remainingLease(String name) {
		if (this.holdersInLine) {
			Duration inLine = this.shared.remainingLease(name, HoldKind.EXCLUSIVE);
			if (!inLine.isZero()) {
				return inLine;
			}
		}
		Held hold = this.holds.get(name);
		if (hold != null && !hold.gone) {
			long left = hold.deadline - System.nanoTime();
			return Duration.ofNanos(Math.max(1_000_000, left));
		}
		try {
			Stat stat = this.client.checkExists().forPath(this.connection.path(name));
			// A lock node (ephemeral), or a line's parent with someone in line; an empty line's parent holds nobody
			// (one at version 0, made by no version that deletes it, keeps the lock-node protocol out).
			return (stat != null && (stat.getEphemeralOwner() != 0 || stat.getNumChildren() > 0 || stat.getVersion() < 1))
					? this.connection.sessionTimeout() : Duration.ZERO;
		}
		catch (Exception ex) {
			throw this.connection.failure(ex);
		}
	}

	@Override
	public long issueToken(String name, HoldKind kind, String owner, String attemptId) {
		if (kind == HoldKind.EXCLUSIVE) {
			return issueToken(name, owner, attemptId);
		}
		return this.shared.issueToken(name, kind, owner, attemptId);
	}

	@Override
	public boolean isHeldBy(String name, HoldKind kind, String owner) {
		return (kind == HoldKind.EXCLUSIVE) ? isHeldBy(name, owner) : this.shared.isHeldBy(name, kind, owner);
	}

	@Override
	public Duration remainingLease(String name, HoldKind kind) {
		return (kind == HoldKind.EXCLUSIVE) ? remainingLease(name) : this.shared.remainingLease(name, kind);
	}

	@Override
	public int availablePermits(String name, int permits) {
		return this.shared.availablePermits(name, permits);
	}

	// Release notifications

	/**
	 * Sets no watch of its own: the waiter's calls set one-shot watches (the first in line on the
	 * lock's node, the others on the node before theirs), which deliver to this subscription; so a
	 * release wakes one waiter. No hold is handed over, so {@code clientId} is not used.
	 */
	@Override
	public AutoCloseable subscribe(String name, String clientId, Consumer<LockNotice> onRelease) {
		return this.queue.subscribe(name, onRelease);
	}

	/**
	 * A read-write lock's or semaphore's waiters are woken by the deletion of any node in its line (a
	 * recursive watch on its parent, which new nodes do not trigger).
	 */
	@Override
	public AutoCloseable subscribe(String name, HoldKind.Family family, String clientId, Consumer<LockNotice> onNotice) {
		if (family == HoldKind.Family.LOCK) {
			return subscribe(name, clientId, onNotice);
		}
		return this.subscriptions.subscribePath(this.shared.parentPath(name, family), AddWatchMode.PERSISTENT_RECURSIVE,
				onNotice);
	}

	@Override
	public void onHoldsLost(BiConsumer<List<HoldRef>, String> lost) {
		this.holdsLost = lost;
	}

	// Connection state

	void connectionChanged(ConnectionState state) {
		this.lastState = state;
		switch (state) {
			case SUSPENDED -> log.warn("Lost the connection to ZooKeeper at {}; holds are in doubt until it is back within "
					+ "the session timeout", this.connection.ensemble());
			case LOST -> {
				hookQuietly("session-lost", "");
				List<Held> held = this.holds.all();
				// Curator opens the next session before it reports this one's end, and a lock call that started
				// over on it (ZooKeeperQueue#acquire) may have a hold, or a place, there already: those are kept.
				// Anything else is of a session that ended. (Read after the holds: one taken meanwhile is either
				// in the list and of the session read, or not in the list.)
				long kept = liveSessionOrNone();
				List<Held> lost = held.stream().filter(hold -> hold.session != kept).toList();
				if (!lost.isEmpty()) {
					log.warn("The ZooKeeper session at {} is lost (expired, or no connection for the whole session "
							+ "timeout); {} hold(s) of this client are lost", this.connection.ensemble(), lost.size());
				}
				// Only the holds this handling gives up are its to delete: one given up meanwhile (at the check after
				// its record, say) is its giver's, whose caller may hold its node again.
				List<Held> givenUp = lost.stream().filter(this.holds::forget).toList();
				this.deletions.sessionLost(kept);
				this.shared.sessionLost(kept);
				this.queue.sessionLost(kept);
				// Told now, not at the next renewal or unlock: an explicit lease is never renewed, and its
				// owner would otherwise believe in it for the rest of its lease while another client holds it.
				this.holdsLost.accept(lost.stream().map(hold -> new HoldRef(hold.name, hold.owner, null, hold.kind)).toList(),
						"the ZooKeeper session at " + this.connection.ensemble()
								+ " ended (expired, or no connection for the whole session timeout)");
				// A node of an ended session is left to the ensemble (deleteQuietly deletes only the current
				// session's). A hold counted lost because the session could not be read (kept is -1) may be of
				// the current session: its node must not outlive it.
				for (Held hold : givenUp) {
					this.holds.inBackground(() -> this.deletions.deleteQuietly(hold));
				}
			}
			case RECONNECTED -> {
				log.info("Reconnected to ZooKeeper at {}", this.connection.ensemble());
				this.holds.inBackground(this::afterReconnect);
			}
			default -> {
			}
		}
	}

	/**
	 * @return the current handle's session while the handle is alive (connected, or connecting again to
	 * a session it has), else -1, which is no session's: a handle whose session ended is closed, and one
	 * that has not connected yet has no session
	 */
	private long liveSessionOrNone() {
		ZooKeeper zk = this.connection.zooKeeperOrNull();
		long session = (zk != null) ? zk.getSessionId() : 0;
		return (session != 0 && zk.getState().isAlive()) ? session : -1;
	}

	private void afterReconnect() {
		this.deletions.retryAfterReconnect();
		this.subscriptions.renewedSession();
		this.queue.renewedSession();
	}

	@Override
	public Health health() {
		boolean connected = this.client.getZookeeperClient().isConnected();
		return new Health(connected && this.lastState.isConnected(), Map.of("ensemble", this.connection.ensemble(),
				"basePath", this.connection.basePath(), "state",
				connected ? this.lastState.name() : "DISCONNECTED (last: " + this.lastState + ")"));
	}

	/**
	 * Stops this backend. Holds stay until their lease runs out (this client still deletes them then,
	 * while the client is open) or the session ends: closing a client this backend made ends its
	 * session, and so frees its holds at once; a client the application passed in is left open.
	 */
	@Override
	public void close() {
		if (!this.closed.compareAndSet(false, true)) {
			return;
		}
		this.client.getConnectionStateListenable().removeListener(this.connectionListener);
		this.subscriptions.closeAll(this.ownsClient);
		this.holds.shutdown();
		if (this.ownsClient) {
			this.client.close();
		}
	}

	// Helpers

	/** For the tests: called at the points named where an interleaving with another thread matters. */
	interface Hook {

		void at(String point, String name) throws Exception;

	}

	/** For the tests only. */
	volatile Hook hook = (point, name) -> {
	};

	private void hook(String point, String name) throws Exception {
		this.hook.at(point, name);
	}

	/** As {@link #hook}, where a failing hook must not stop what follows (a connection state's handling). */
	private void hookQuietly(String point, String name) {
		try {
			hook(point, name);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			log.debug("The hook at {} failed: {}", point, ex.toString());
		}
	}

	/** For the tests: waits until the lease thread has run every task submitted before this call. */
	void awaitBackgroundTasks() throws Exception {
		this.holds.awaitBackgroundTasks();
	}

	/** A ZooKeeper call failed; the message names the ensemble and the cause. */
	static final class ZooKeeperCallException extends RuntimeException {

		ZooKeeperCallException(Throwable cause) {
			super(cause);
		}

		ZooKeeperCallException(String message, Throwable cause) {
			super(message, cause);
		}

	}

}
