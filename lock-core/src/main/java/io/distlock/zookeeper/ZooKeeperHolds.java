package io.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.HoldKind;
import io.distlock.core.LockBackend.HoldRef;

/**
 * This client's holds and their leases: ZooKeeper keeps no lease, so each hold's expiry is
 * scheduled here, on one thread for all holds, which also runs the backend's background tidying.
 */
final class ZooKeeperHolds {

	// Under the backend's name, which is the one users set levels for.
	private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

	/** This client's exclusive holds, one per lock name at most (the znode is unique per name). */
	private final ConcurrentHashMap<String, Held> holds = new ConcurrentHashMap<>();

	/** This client's read, write and permit holds: one per lock name, kind and owner. */
	private final ConcurrentHashMap<SharedKey, Held> shared = new ConcurrentHashMap<>();

	/** Runs lease expiries: one thread for all holds. */
	private final ScheduledThreadPoolExecutor leases;

	private final ZooKeeperConnection connection;

	private final Consumer<Held> deleteNode;

	/**
	 * @param connection the backend's connection, for the tests' hook
	 * @param deleteNode deletes the node of a hold whose lease ran out, already forgotten
	 */
	ZooKeeperHolds(ZooKeeperConnection connection, Consumer<Held> deleteNode) {
		this.connection = connection;
		this.deleteNode = deleteNode;
		this.leases = new ScheduledThreadPoolExecutor(1, runnable -> {
			Thread thread = new Thread(runnable, "distlock-zookeeper-leases");
			thread.setDaemon(true);
			return thread;
		});
		this.leases.setRemoveOnCancelPolicy(true);
	}

	/** @return the exclusive hold of the lock, if this client has it */
	Held get(String name) {
		return this.holds.get(name);
	}

	/** @return the owner's hold of that kind, if this client has it */
	Held get(String name, HoldKind kind, String owner) {
		if (kind == HoldKind.EXCLUSIVE) {
			Held hold = this.holds.get(name);
			return (hold != null && hold.owner.equals(owner)) ? hold : null;
		}
		return this.shared.get(new SharedKey(name, kind, owner));
	}

	/** @return the hold a renewal names by its lock, kind and owner (whether it is the very hold is the caller's check) */
	Held get(HoldRef ref) {
		return get(ref.name(), ref.kind(), ref.owner());
	}

	/** @return this client's holds of that kind of the lock, of any owner */
	List<Held> shared(String name, HoldKind kind) {
		if (kind == HoldKind.EXCLUSIVE) {
			Held hold = this.holds.get(name);
			return (hold != null) ? List.of(hold) : List.of();
		}
		List<Held> found = new ArrayList<>();
		for (Held hold : this.shared.values()) {
			if (hold.kind == kind && hold.name.equals(name)) {
				found.add(hold);
			}
		}
		return found;
	}

	/** @return every hold now */
	List<Held> all() {
		List<Held> all = new ArrayList<>(this.holds.values());
		all.addAll(this.shared.values());
		return all;
	}

	/** @return whether a hold here has the node created at {@code czxid} */
	boolean hasNode(long czxid) {
		for (Held hold : this.holds.values()) {
			if (hold.czxid == czxid) {
				return true;
			}
		}
		for (Held hold : this.shared.values()) {
			if (hold.czxid == czxid) {
				return true;
			}
		}
		return false;
	}

	/** Records the hold of the node this session created, with its lease starting now. */
	Held take(String name, String owner, String path, Stat stat, Duration lease) {
		Held hold = new Held(name, owner, path, stat.getCzxid(), stat.getEphemeralOwner());
		this.holds.put(name, hold);
		extend(hold, lease);
		return hold;
	}

	/**
	 * Records a hold of a node in line this session created (read, write, permit, or exclusive when
	 * its holder is the first in line), with its lease starting now.
	 */
	Held takeShared(String name, HoldKind kind, String owner, String path, long czxid, long session, Duration lease) {
		Held hold = new Held(name, kind, owner, path, czxid, session);
		if (kind == HoldKind.EXCLUSIVE) {
			this.holds.put(name, hold);
		}
		else {
			this.shared.put(new SharedKey(name, kind, owner), hold);
		}
		extend(hold, lease);
		return hold;
	}

	void remove(Held hold) {
		if (hold.kind == HoldKind.EXCLUSIVE) {
			this.holds.remove(hold.name, hold);
		}
		else {
			this.shared.remove(new SharedKey(hold.name, hold.kind, hold.owner), hold);
		}
	}

	/** Moves the hold's deadline to {@code lease} from now; this client deletes the node then unless renewed. */
	private void extend(Held hold, Duration lease) {
		long deadline = System.nanoTime() + saturatedNanos(lease);
		synchronized (hold) {
			hold.deadline = deadline;
			if (hold.expiry != null) {
				hold.expiry.cancel(false);
			}
			try {
				hold.expiry = this.leases.schedule(() -> leaseRanOut(hold), Math.max(0, deadline - System.nanoTime()),
						TimeUnit.NANOSECONDS);
			}
			catch (RejectedExecutionException closedBackend) {
				// Closed: the node lives until the session ends.
				hold.expiry = null;
			}
		}
	}

	/**
	 * Extends the lease as {@link #extend} if the hold is still live, atomically with the check: a
	 * lease running out, or the session's loss, either comes first (and this answers {@code false})
	 * or finds the new deadline. A hold being released stays live and is left to its release.
	 * @return whether the hold is live
	 */
	boolean extendIfLive(Held hold, Duration lease) {
		synchronized (hold) {
			if (hold.gone) {
				return false;
			}
			if (!hold.releasing) {
				extend(hold, lease);
			}
			return true;
		}
	}

	private void leaseRanOut(Held hold) {
		synchronized (hold) {
			if (hold.gone || hold.releasing || System.nanoTime() - hold.deadline < 0) {
				return;
			}
			hold.gone = true;
		}
		remove(hold);
		this.connection.hookQuietly("lease-ran-out", hold.name);
		log.debug("Lease of lock '{}' held by {} ran out; deleting its node", hold.name, hold.owner);
		this.deleteNode.accept(hold);
	}

	/** What the check after a hold's record found. */
	enum Check {

		/** The hold stands. */
		CURRENT,

		/** The check gave the hold up: its node, if still there, is the caller's to keep or delete. */
		FORGOTTEN,

		/** Given up before the check (the handling of a session's end, say), whose giver deletes the node. */
		GIVEN_UP

	}

	/**
	 * Checked once a hold is recorded: Curator may have given the node's session up (and the end of
	 * the session been reported, without this hold) and opened another while the node still stands on
	 * the server until the old session expires there; or the session could not be read (Curator hands a
	 * failure queued in the background to whoever asks next); or the handling of a session's end gave
	 * the hold up meanwhile. Such a hold is forgotten. A session lost after this check finds the hold
	 * recorded and reports it.
	 */
	Check checkRecorded(Held hold) {
		if (this.connection.sessionIdOrNone() == hold.session && !hold.gone) {
			return Check.CURRENT;
		}
		return forget(hold) ? Check.FORGOTTEN : Check.GIVEN_UP;
	}

	/**
	 * Gives the hold up: it is gone from now on, for every deleter of its node.
	 * @return whether this call gave it up (false: it was gone already, and whoever gave it up deletes its node)
	 */
	boolean forget(Held hold) {
		boolean live;
		synchronized (hold) {
			live = !hold.gone;
			hold.gone = true;
			if (hold.expiry != null) {
				hold.expiry.cancel(false);
			}
		}
		remove(hold);
		return live;
	}

	/** Runs {@code task} on the lease thread, unless the backend is closed. */
	void inBackground(Runnable task) {
		try {
			this.leases.execute(task);
		}
		catch (RejectedExecutionException closedBackend) {
			// Closed: nothing left to tidy; the session's end deletes what remains.
		}
	}

	/** Waits until the lease thread has run every task submitted before this call. */
	void awaitBackgroundTasks() throws Exception {
		this.leases.submit(() -> {
		}).get(30, TimeUnit.SECONDS);
	}

	void shutdown() {
		// Lease expiries already scheduled still run (ScheduledThreadPoolExecutor's default), then the thread ends.
		this.leases.shutdown();
	}

	/** At most {@code Long.MAX_VALUE / 2}: it is added to {@code System.nanoTime()}. */
	static long saturatedNanos(Duration duration) {
		try {
			return Math.min(duration.toNanos(), Long.MAX_VALUE / 2);
		}
		catch (ArithmeticException tooLong) {
			return Long.MAX_VALUE / 2;
		}
	}

	/** Where a read, write or permit hold is kept here. */
	private record SharedKey(String name, HoldKind kind, String owner) {
	}

	/** One hold of this client: its node, the session that made it, and its lease. */
	static final class Held {

		final String name;

		final HoldKind kind;

		final String owner;

		final String path;

		final long czxid;

		final long session;

		/** System.nanoTime() when the lease runs out; written under this. */
		volatile long deadline;

		ScheduledFuture<?> expiry;

		/** Deleted, lost or given up; guarded by this (read without it where staleness is harmless). */
		volatile boolean gone;

		/** Its owner's release is under way: a lease running out meanwhile leaves it to the release. */
		boolean releasing;

		/** A read, write or permit hold's fencing token once asked for (0 until then); guarded by this. */
		long token;

		Held(String name, String owner, String path, long czxid, long session) {
			this(name, HoldKind.EXCLUSIVE, owner, path, czxid, session);
		}

		Held(String name, HoldKind kind, String owner, String path, long czxid, long session) {
			this.name = name;
			this.kind = kind;
			this.owner = owner;
			this.path = path;
			this.czxid = czxid;
			this.session = session;
		}

		/**
		 * @return what names this hold to the engine ({@code Acquisition.attemptId()}): its node, which no
		 * later hold of the same owner has
		 */
		String attemptId() {
			return Long.toString(this.czxid);
		}

		/** @return whether {@code ref} means this hold: its owner's, naming this hold's attempt or none */
		boolean namedBy(HoldRef ref) {
			return this.owner.equals(ref.owner()) && (ref.attemptId() == null || ref.attemptId().equals(attemptId()));
		}

	}

}
