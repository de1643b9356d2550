package io.distlock.core;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import io.distlock.HoldKind;

/**
 * What a storage backend (single Redis, Redlock, a SQL table, ZooKeeper) does for the lock engine behind a
 * {@link BackendLockRegistry}. Each
 * state change is atomic on the backend and idempotent when re-sent with the same arguments: the
 * caller passes the hold count it believes it has, and the backend sets the count from it instead
 * of incrementing or decrementing blindly, so a command replayed after a reconnect cannot count twice.
 *
 * <p>Owner ids are values chosen by the engine; backends never derive them from the calling thread.
 * Each operation is one method; an acquisition and a release are asked with one small record each
 * ({@link AcquireRequest}, {@link ReleaseRequest}).
 */
public interface LockBackend extends AutoCloseable {

	/** @return where this backend keeps its locks, for messages (an address, never credentials) */
	default String description() {
		return getClass().getSimpleName();
	}

	/**
	 * Says what a failure of one of this backend's calls means, naming the server and the real cause
	 * (a rejected password, an untrusted certificate, a refused connection) and never a secret.
	 * @param failure what the call threw
	 * @return one sentence for an exception message
	 */
	default String explain(RuntimeException failure) {
		return String.valueOf(failure.getMessage());
	}

	/**
	 * Refuses a name this backend cannot keep as it is; called on every name a caller passes, after
	 * the checks every backend shares (not blank, whole characters), before any other call sees it.
	 * A backend that wraps another forwards this call too, or the other's rules are lost.
	 * @param name a name that is not blank and has no unpaired surrogate
	 * @return the name
	 * @throws IllegalArgumentException naming what is wrong with it and what to do
	 */
	default String checkName(String name) {
		return name;
	}

	/**
	 * How long a queued owner keeps its place without calling again, and how long a hold handed to
	 * it lasts until it takes the hold up and extends it to its own lease: a waiter that vanished
	 * holds nobody up for longer.
	 */
	Duration QUEUE_PLACE = Duration.ofSeconds(4);

	/**
	 * @return whether a hold ends by itself once its lease has run out without renewal. Backends whose
	 * holds last as long as something else (a ZooKeeper session) answer {@code false}: a hold cannot
	 * be kept for a while after its release there ({@link io.distlock.DistLock#unlockKeepingFor}).
	 */
	default boolean leasesExpire() {
		return true;
	}

	/**
	 * @return whether this backend's holds carry fencing tokens that only grow; one that cannot
	 * issue sound ones (Redlock's masters count independently) answers {@code false}
	 */
	default boolean issuesFencingTokens() {
		return true;
	}

	/**
	 * @return whether this backend serves waiters in arrival order: Redis queues them and hands a
	 * released lock to the first; ZooKeeper lines them up, each woken when the one before it is done
	 */
	default boolean queuesWaiters() {
		return false;
	}

	/**
	 * @return whether a hold handed to a queued attempt counts only once that attempt has taken it up
	 * with {@link #acquire} (which then confirms it, e.g. waits for replicas to have it), rather than
	 * as soon as the hand-off is announced
	 */
	default boolean confirmsHandOffs() {
		return false;
	}

	/**
	 * Acquires or re-enters the lock. If it is taken, a backend that {@linkplain #queuesWaiters() queues
	 * waiters} also queues the owner for {@link AcquireRequest#queueFor()}, so that a release hands the
	 * lock straight to the first live queued owner (with a lease of at most {@link #QUEUE_PLACE} until
	 * the owner extends it) and announces a {@link LockNotice.Granted} to subscribers. Calling again
	 * refreshes the owner's place; it stays where it was in line. Other backends ignore the queueing
	 * components.
	 * @param request the lock, the owner, its hold count and lease, and how to queue
	 * @return the outcome; {@link Acquisition.Status#ACQUIRED} also when the lock was handed over
	 */
	Acquisition acquire(AcquireRequest request);

	/**
	 * One waiting attempt stops waiting: it leaves the queue, and with {@code passOnHandOff}, if the
	 * lock was handed to this attempt meanwhile (it never took the hold up), the hold is released,
	 * handing the lock on. Only this attempt's place and hand-off are touched: a later attempt of the
	 * same owner may have queued or taken the lock since. Need not wait for the backend's answer.
	 * A no-op without a queue.
	 * @param name the lock's name
	 * @param owner the owner id
	 * @param ticket the attempt's {@linkplain AcquireRequest#ticket() ticket}
	 * @param passOnHandOff whether to release a hold handed to the attempt; {@code false} when the
	 * attempt's own thread will still see the hand-off and give it back itself
	 */
	default void leaveQueue(String name, String owner, String ticket, boolean passOnHandOff) {
	}

	/**
	 * Releases one hold of the lock; at zero the lock is freed and waiters are woken. A backend that
	 * re-sends commands after a reconnect recognises a copy of a release it already applied by
	 * {@link ReleaseRequest#attemptId()}, so that only a hold that is really gone is answered
	 * {@link Release#NOT_HELD}.
	 * @param request the hold to release, and how long the caller can wait
	 * @return the outcome
	 */
	Release release(ReleaseRequest request);

	/**
	 * Issues the fencing token of a hold whose acquisition answered {@link Acquisition#TOKEN_ON_REQUEST},
	 * or returns the one issued before. Issued while the owner still holds the lock, it is above the
	 * tokens of all the lock's earlier holders.
	 * @param name the lock's name
	 * @param owner the owner id
	 * @param attemptId the hold's {@link Acquisition#attemptId()}, or {@code null}
	 * @return the token, or {@link Acquisition#NO_TOKEN} if the owner no longer holds the lock
	 */
	default long issueToken(String name, String owner, String attemptId) {
		throw new UnsupportedOperationException(getClass().getSimpleName() + " issues fencing tokens with each acquisition");
	}

	/**
	 * Extends the lease of every hold that still lasts (the very hold each {@link HoldRef} names, not
	 * a later one of the same owner), in as few round trips as the backend allows, failing once
	 * {@code within} has passed without an answer: the watchdog passes what is left of the shortest
	 * lease, so that a holder learns of a loss when its lease runs out rather than at a
	 * connection-wide timeout. A backend that cannot bound its calls may take longer.
	 * @param holds the locks to renew
	 * @param lease the new lease from now
	 * @param within how long the caller can wait for the answer; {@code null}: the backend's own timeout
	 * @return for each hold, in order, whether it was still held and is now renewed
	 */
	List<Boolean> renew(List<HoldRef> holds, Duration lease, Duration within);

	/**
	 * @param name the lock's name
	 * @param owner the owner id
	 * @return whether the owner holds the lock now
	 */
	boolean isHeldBy(String name, String owner);

	/**
	 * @param name the lock's name
	 * @return the remaining lease, {@link Duration#ZERO} if the lock is free
	 */
	Duration remainingLease(String name);

	/**
	 * Starts delivering the notices of one lock (released, handed to a queued owner, an attempt
	 * abandoned) to {@code onNotice}, for the owners of one client: a backend that
	 * {@linkplain #queuesWaiters() queues waiters} may deliver a {@link LockNotice.Granted} only to the
	 * client whose owner it is for, instead of to every client waiting for the lock. Returns once the
	 * subscription is effective, so that a release right after the call is not missed.
	 * @param name the lock's name
	 * @param clientId the client id of the owners waiting here (an owner id is {@code clientId:...}), or
	 * {@code null} if none of them queues; backends that do not queue ignore it
	 * @param onNotice called (on any thread, quickly) with each notice
	 * @return the subscription, to close when no longer waiting; {@code null} if this backend
	 * announces nothing (the waiters then poll)
	 */
	AutoCloseable subscribe(String name, String clientId, Consumer<LockNotice> onNotice);

	/**
	 * The kinds of holds this backend keeps; the engine never asks it for another, and a registry over
	 * it refuses read-write locks or semaphores it cannot keep. A backend that wraps another forwards
	 * this call (and the kind-aware ones below), or the other's kinds are lost.
	 * @return the kinds, always including {@link HoldKind#EXCLUSIVE}
	 */
	default Set<HoldKind> supportedKinds() {
		return EnumSet.of(HoldKind.EXCLUSIVE);
	}

	/**
	 * @param kind a kind this backend supports
	 * @return whether waiters for holds of this kind queue, as {@link #queuesWaiters()} says for
	 * exclusive locks
	 */
	default boolean queuesWaiters(HoldKind kind) {
		return kind == HoldKind.EXCLUSIVE && queuesWaiters();
	}

	/**
	 * {@link #leaveQueue(String, String, String, boolean)} for a hold of any supported kind.
	 * @param name the lock's name
	 * @param kind what the attempt waited for
	 * @param owner the owner id
	 * @param ticket the attempt's ticket
	 * @param passOnHandOff whether to release a hold handed to the attempt
	 */
	default void leaveQueue(String name, HoldKind kind, String owner, String ticket, boolean passOnHandOff) {
		if (kind == HoldKind.EXCLUSIVE) {
			leaveQueue(name, owner, ticket, passOnHandOff);
			return;
		}
		throw unsupported(kind);
	}

	/**
	 * {@link #issueToken(String, String, String)} for a hold of any supported kind.
	 * @param name the lock's name
	 * @param kind the hold's kind
	 * @param owner the owner id
	 * @param attemptId the hold's attempt id, or {@code null}
	 * @return the token, or {@link Acquisition#NO_TOKEN} if the owner no longer has the hold
	 */
	default long issueToken(String name, HoldKind kind, String owner, String attemptId) {
		if (kind == HoldKind.EXCLUSIVE) {
			return issueToken(name, owner, attemptId);
		}
		throw unsupported(kind);
	}

	/**
	 * @param name the lock's name
	 * @param kind the hold's kind
	 * @param owner the owner id
	 * @return whether the owner has a hold of this kind now
	 */
	default boolean isHeldBy(String name, HoldKind kind, String owner) {
		if (kind == HoldKind.EXCLUSIVE) {
			return isHeldBy(name, owner);
		}
		throw unsupported(kind);
	}

	/**
	 * @param name the lock's name
	 * @param kind the holds' kind
	 * @return the longest remaining lease among the holds of this kind, {@link Duration#ZERO} if none
	 */
	default Duration remainingLease(String name, HoldKind kind) {
		if (kind == HoldKind.EXCLUSIVE) {
			return remainingLease(name);
		}
		throw unsupported(kind);
	}

	/**
	 * {@link #subscribe(String, String, Consumer)} for a lock of any supported family: a read-write
	 * lock's readers and writers share one subscription.
	 * @param name the lock's name
	 * @param family which lock of that name
	 * @param clientId the client id of the owners waiting here, or {@code null}
	 * @param onNotice called with each notice
	 * @return the subscription, or {@code null} if this backend announces nothing
	 */
	default AutoCloseable subscribe(String name, HoldKind.Family family, String clientId, Consumer<LockNotice> onNotice) {
		if (family == HoldKind.Family.LOCK) {
			return subscribe(name, clientId, onNotice);
		}
		throw new UnsupportedOperationException(description() + " keeps exclusive locks only, not " + family);
	}

	/**
	 * @param name the semaphore's name
	 * @param permits the permits the caller declares
	 * @return the permits no live holder has now
	 */
	default int availablePermits(String name, int permits) {
		throw unsupported(HoldKind.PERMIT);
	}

	private UnsupportedOperationException unsupported(HoldKind kind) {
		return new UnsupportedOperationException(description() + " keeps exclusive locks only, not " + kind + " holds");
	}

	/**
	 * How long a successful renewal to {@code lease} guarantees a hold, counted from when the renewal
	 * was sent: the lease itself, less what the backend must allow for clock drift between its
	 * servers (Redlock subtracts the same allowance at acquisition).
	 * @param lease the lease renewed to
	 * @return the guaranteed part of it
	 */
	default Duration renewalValidity(Duration lease) {
		return lease;
	}

	/**
	 * Whom to tell when the backend finds holds lost by itself, before a renewal or a release asks:
	 * a ZooKeeper session that ended takes every hold of the session with it, explicit leases that
	 * nothing renews included. Called once, by the engine that uses this backend; a backend that learns
	 * of a loss only when asked ignores it.
	 * @param lost called (on any thread) with the holds lost and why
	 */
	default void onHoldsLost(BiConsumer<List<HoldRef>, String> lost) {
	}

	/**
	 * Asks the backend's servers whether they are set up in a way that can lose holds while they
	 * run, such as a Redis eviction policy that may evict lock keys. Called rarely (at start-up), so
	 * it may cost a round trip per server.
	 * @return one sentence per problem, naming the server and the setting; empty if none
	 * @throws RuntimeException if a server cannot be asked
	 */
	default List<String> serverWarnings() {
		return List.of();
	}

	/**
	 * Checks that the backend answers, without taking any lock.
	 * @return whether it is usable, with details (per server where there are several)
	 */
	Health health();

	/**
	 * The backend's reachability.
	 * @param up whether locks can be taken
	 * @param details what was checked, e.g. each node's state and the quorum
	 */
	record Health(boolean up, Map<String, Object> details) {
	}

	/** Releases the backend's own resources (not the application's connections). */
	@Override
	void close();

	/**
	 * A lock, the owner whose hold is meant, and which of that owner's holds: a renewal that reaches
	 * the backend after the owner released the hold and took the lock again (the watchdog took the
	 * hold from its list just before the release; a slow connection; a node of Redlock answering
	 * late) must not give the new hold the watchdog's lease, which a crashed holder would then block
	 * others for, and which the engine does not know of.
	 * @param name the lock's name
	 * @param owner the owner id
	 * @param attemptId the {@link Acquisition#attemptId()} of the acquisition that took the hold, which
	 * the backend renews only while that hold lasts; or {@code null} for whatever hold the owner has
	 * @param kind what the hold is; a backend only ever holds the kinds it {@linkplain #supportedKinds() supports}
	 */
	record HoldRef(String name, String owner, String attemptId, HoldKind kind) {

		/**
		 * A hold of an exclusive lock.
		 * @param name the lock's name
		 * @param owner the owner id
		 * @param attemptId the attempt that took the hold, or {@code null}
		 */
		public HoldRef(String name, String owner, String attemptId) {
			this(name, owner, attemptId, HoldKind.EXCLUSIVE);
		}

		/**
		 * @param name the lock's name
		 * @param owner the owner id
		 */
		public HoldRef(String name, String owner) {
			this(name, owner, null);
		}

	}

	/**
	 * The outcome of {@link #acquire}.
	 * @param status what happened
	 * @param token the fencing token when acquired, {@link #NO_TOKEN} if the backend offers none, or
	 * {@link #TOKEN_ON_REQUEST} if it issues one only when asked;
	 * when held by another, the last token handed out then (see {@link #heldByOther(Duration, long)})
	 * @param ttl the other holder's remaining lease when {@link Status#HELD_BY_OTHER}
	 * @param validity when acquired, how long from the start of the call the hold is guaranteed
	 * (the lease, less what the backend must allow for elapsed time and clock drift)
	 * @param attemptId when acquired, the id of the attempt that took the hold, which also names the hold to
	 * a release ({@link ReleaseRequest#attemptId()}); or {@code null}
	 * @param restartGrace when held by another: whether the backend refused because it serves its
	 * restart grace (it restarted or lost its data), {@code ttl} being what is left of it
	 */
	record Acquisition(Status status, long token, Duration ttl, Duration validity, String attemptId,
			boolean restartGrace) {

		/** The token of a backend that cannot issue sound fencing tokens. */
		public static final long NO_TOKEN = -1;

		/**
		 * The token of a hold whose backend issues it only when asked ({@link LockBackend#issueToken}):
		 * most holders never ask, and every token costs the backend a counter update.
		 */
		public static final long TOKEN_ON_REQUEST = -2;

		/** What an acquisition found. */
		public enum Status {
			/** Acquired or re-entered. */
			ACQUIRED,
			/** Another owner holds the lock. */
			HELD_BY_OTHER,
			/** The caller believed it held the lock, but the backend no longer has its hold. */
			LOST,
			/**
			 * A write hold was asked for by an owner that holds the read lock and not the write lock: a
			 * read lock cannot be upgraded. Nothing was queued; never retried.
			 */
			UPGRADE_REFUSED,
			/**
			 * A permit was asked for with other permits than the semaphore has ({@link #token()} carries
			 * the permits it has). Nothing was queued; never retried.
			 */
			PERMITS_DIFFER
		}

		/**
		 * @param token the fencing token, or {@link #NO_TOKEN}
		 * @param validity how long the hold is guaranteed from the start of the call
		 * @return an acquired outcome
		 */
		public static Acquisition acquired(long token, Duration validity) {
			return acquired(token, validity, null);
		}

		/**
		 * @param token the fencing token, or {@link #NO_TOKEN}
		 * @param validity how long the hold is guaranteed from the start of the call
		 * @param attemptId what identifies the hold to a later release, or {@code null}
		 * @return an acquired outcome
		 */
		public static Acquisition acquired(long token, Duration validity, String attemptId) {
			return new Acquisition(Status.ACQUIRED, token, Duration.ZERO, validity, attemptId, false);
		}

		/**
		 * @param ttl the holder's remaining lease
		 * @return a held-by-other outcome
		 */
		public static Acquisition heldByOther(Duration ttl) {
			return heldByOther(ttl, 0);
		}

		/**
		 * @param ttl the holder's remaining lease
		 * @param lastToken the last fencing token the backend had handed out when it refused (0 if
		 * unknown): a hand-off to the refused owner whose token is not above it was made before the
		 * refusal and has lapsed since
		 * @return a held-by-other outcome, carrying {@code lastToken} as its {@link #token()}
		 */
		public static Acquisition heldByOther(Duration ttl, long lastToken) {
			return new Acquisition(Status.HELD_BY_OTHER, lastToken, ttl, Duration.ZERO, null, false);
		}

		/**
		 * @param left what is left of the backend's restart grace, during which it lets no new holder in
		 * @param lastToken as for {@link #heldByOther(Duration, long)}
		 * @return a held-by-other outcome that says the restart grace refused it
		 */
		public static Acquisition inRestartGrace(Duration left, long lastToken) {
			return new Acquisition(Status.HELD_BY_OTHER, lastToken, left, Duration.ZERO, null, true);
		}

		/** @return a lost outcome */
		public static Acquisition lost() {
			return new Acquisition(Status.LOST, 0, Duration.ZERO, Duration.ZERO, null, false);
		}

		/** @return the refusal of a read lock's upgrade to the write lock */
		public static Acquisition upgradeRefused() {
			return new Acquisition(Status.UPGRADE_REFUSED, 0, Duration.ZERO, Duration.ZERO, null, false);
		}

		/**
		 * @param existingPermits the permits the semaphore has, as other owners declared them
		 * @return the refusal of a permit asked for with other permits, carrying {@code existingPermits}
		 * as its {@link #token()}
		 */
		public static Acquisition permitsDiffer(int existingPermits) {
			return new Acquisition(Status.PERMITS_DIFFER, existingPermits, Duration.ZERO, Duration.ZERO, null, false);
		}

	}

	/** The outcome of {@link #release}. */
	enum Release {
		/** The last hold was released; the lock is free. */
		RELEASED,
		/** One of several reentrant holds was released; the owner still holds the lock. */
		DECREMENTED,
		/**
		 * The owner does not hold the lock (any more): its hold was lost (expired, or the backend lost
		 * it). A copy of an already applied release is answered {@link #RELEASED} by backends that
		 * can tell.
		 */
		NOT_HELD
	}

}
