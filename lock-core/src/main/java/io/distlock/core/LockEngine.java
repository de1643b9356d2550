package io.distlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.DistLock;
import io.distlock.HoldInfo;
import io.distlock.LockBackendException;
import io.distlock.LockRegistryStats;
import io.distlock.WorkHold;
import io.distlock.LockLostException;
import io.distlock.LockRegistry;
import io.distlock.LostHold;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.HoldRef;
import io.distlock.core.LockBackend.Release;

/**
 * The backend-independent lock engine: hold bookkeeping, reentrancy, waiting, the watchdog and
 * lost-hold reporting, over any {@link LockBackend}. Backends only store state atomically.
 *
 * <p>Owner ids are {@code clientId:threadId}, computed here and passed to the backend as values.
 */
public class LockEngine implements LockRegistry, LockRegistryStats, AutoCloseable {

	private static final Logger log = LoggerFactory.getLogger(LockEngine.class);

	/** How long a waiter sleeps when the holder's TTL is unknown or already over. */
	static final long RETRY_NANOS = Duration.ofMillis(10).toNanos();

	/** The least time a timed acquisition gets for its backend calls, even with a zero wait. */
	static final long MIN_ATTEMPT_NANOS = Duration.ofSeconds(1).toNanos();

	/** How far past its wait a timed acquisition may block on the backend before it is cut off. */
	static final long DEADLINE_GRACE_NANOS = Duration.ofMillis(100).toNanos();

	/** The first and the longest sleep between attempts while release notifications cannot be received. */
	static final long UNSUBSCRIBED_FIRST_SLEEP_NANOS = Duration.ofMillis(5).toNanos();

	static final long UNSUBSCRIBED_MAX_SLEEP_NANOS = Duration.ofMillis(100).toNanos();

	/** How long unlock() waits for the backend beyond the hold's confirmed lease. */
	private static final Duration RELEASE_MIN_WAIT = Duration.ofSeconds(1);

	/** Numbers this client's waiting attempts (with the owner id, a hand-off names exactly one). */
	final AtomicLong tickets = new AtomicLong();

	final LockBackend backend;

	final LockEngineOptions options;

	final ConcurrentHashMap<HoldKey, Hold> holds = new ConcurrentHashMap<>();

	/** Explicit-lease holds whose lease ran out before their live owner released them; reported lost. */
	final ConcurrentHashMap<HoldKey, Hold> expired = new ConcurrentHashMap<>();

	final ReleaseWaits waits;

	final Watchdog watchdog;

	final DeadlineGuard deadlines;

	private final ListenerNotifier listeners;

	private final AtomicLong lostHolds = new AtomicLong();

	volatile boolean closed;

	/** Whether close() ran: it runs once, whoever else calls it later. */
	private final AtomicBoolean closing = new AtomicBoolean();

	/** Numbers the owners of holds that belong to work rather than to a thread. */
	private final AtomicLong workOwners = new AtomicLong();

	/**
	 * Where acquisitions that wait without a thread make their backend calls, and where work holds
	 * are released asynchronously: a thread is taken for the length of one call, never for a wait.
	 */
	final ExecutorService calls;

	/** Each thread's owner id, built once per thread rather than on every call. */
	private final ThreadLocal<String> owners;

	/**
	 * @param backend where lock state is kept
	 * @param options the engine's settings
	 */
	public LockEngine(LockBackend backend, LockEngineOptions options) {
		this.backend = backend;
		this.options = options;
		this.waits = new ReleaseWaits(backend, options.clientId());
		this.watchdog = new Watchdog(options.clientId(), backend, options.watchdogTimeout(), this::renewable,
				this::markLost, this::renewalFailed);
		this.deadlines = new DeadlineGuard(options.clientId());
		this.listeners = new ListenerNotifier(options.clientId(), options.listeners());
		this.calls = callThreads(options.clientId());
		this.owners = ThreadLocal.withInitial(() -> options.clientId() + ":" + Thread.currentThread().getId());
	}

	@Override
	public DistLock getLock(String name) {
		return new EngineLock(this, requireName(name));
	}

	@Override
	public List<HoldInfo> heldLocks() {
		List<HoldInfo> snapshot = new ArrayList<>();
		this.holds.values().forEach(hold -> snapshot.add(hold.info()));
		return snapshot;
	}

	/** @return this engine's settings */
	public LockEngineOptions options() {
		return this.options;
	}

	@Override
	public long watchdogRenewals() {
		return this.watchdog.renewals();
	}

	@Override
	public int activeHolds() {
		return this.holds.size();
	}

	@Override
	public int waitingThreads() {
		return this.waits.waitingThreads();
	}

	@Override
	public long watchdogRenewalFailures() {
		return this.watchdog.failedRenewals();
	}

	@Override
	public long lostHolds() {
		return this.lostHolds.get();
	}

	/** @return how many lock names this client is waiting on right now */
	public int waitingLockNames() {
		return this.waits.size();
	}

	@Override
	public Map<String, Integer> waiters() {
		return this.waits.waiters();
	}

	@Override
	public BackendHealth backendHealth() {
		LockBackend.Health health = this.backend.health();
		return new BackendHealth(health.up(), health.details());
	}

	@Override
	public Duration remainingLease(String name) {
		return this.backend.remainingLease(name);
	}

	private static String requireName(String name) {
		if (name == null || name.isBlank()) {
			throw new IllegalArgumentException("Lock name must not be null or blank");
		}
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
				i++;
			}
			else if (Character.isSurrogate(c)) {
				// UTF-8, in which Redis, ZooKeeper and the databases keep names, has no form for it: encoders
				// write '?' instead, so the name would be the same lock as one with a '?' in its place.
				throw new IllegalArgumentException("Lock name '" + name + "' has an unpaired surrogate (\\u"
						+ String.format("%04X", (int) c) + ") at index " + i
						+ ", which has no UTF-8 form: it would be the same lock as other names. Build the name from "
						+ "whole characters (a String cut between the two halves of a code point has one).");
			}
		}
		return name;
	}

	static Duration requirePositiveLease(String name, Duration leaseTime) {
		if (leaseTime == null || leaseTime.isNegative() || leaseTime.isZero()) {
			throw new IllegalArgumentException("Lease of lock '" + name + "' must be positive but was " + leaseTime);
		}
		return leaseTime;
	}

	@Override
	public Optional<WorkHold> tryLockForWork(String name, Duration waitTime, Duration leaseTime)
			throws InterruptedException {
		requireName(name);
		Duration lease = (leaseTime != null) ? requirePositiveLease(name, leaseTime) : null;
		// An owner of its own, never a thread's: the work may end on any thread, and the thread that
		// took the hold may take the lock again meanwhile (then it waits like any other owner).
		String owner = this.options.clientId() + ":w" + Long.toString(this.workOwners.incrementAndGet(), 36);
		Duration wait = (waitTime != null && !waitTime.isNegative()) ? waitTime : Duration.ZERO;
		if (!acquire(name, owner, false, lease, wait, true)) {
			return Optional.empty();
		}
		return Optional.of(new EngineWorkHold(this, name, owner));
	}

	/**
	 * {@inheritDoc}
	 * <p>The wait holds no thread: the backend calls run on a few {@code distlock-call} threads of
	 * this registry, one call at a time per acquisition, and the waiting between them is done by
	 * release messages, hand-offs and a timer.
	 */
	@Override
	public CompletableFuture<Optional<WorkHold>> tryLockForWorkAsync(String name, Duration waitTime, Duration leaseTime) {
		Duration wait = (waitTime != null && !waitTime.isNegative()) ? waitTime : Duration.ZERO;
		return acquireForWork(name, wait, leaseTime);
	}

	@Override
	public CompletableFuture<WorkHold> lockForWorkAsync(String name, Duration leaseTime) {
		return acquireForWork(name, null, leaseTime).thenApply(Optional::get);
	}

	private CompletableFuture<Optional<WorkHold>> acquireForWork(String name, Duration wait, Duration leaseTime) {
		requireName(name);
		Duration lease = (leaseTime != null) ? requirePositiveLease(name, leaseTime) : null;
		if (this.closed) {
			return CompletableFuture.failedFuture(closedException(name));
		}
		Attempt attempt = new Attempt(this, name, newWorkOwner(), false,
				(lease != null) ? lease : this.options.defaultLease(), false);
		return new AsyncAcquisition(this, attempt, wait).start();
	}

	/**
	 * An owner of its own, never a thread's: the work may end on any thread, and the thread that took
	 * the hold may take the lock again meanwhile (then it waits like any other owner).
	 */
	private String newWorkOwner() {
		return this.options.clientId() + ":w" + Long.toString(this.workOwners.incrementAndGet(), 36);
	}

	private static ExecutorService callThreads(String clientId) {
		String prefix = "distlock-call-" + clientId.substring(0, Math.min(8, clientId.length())) + "-";
		AtomicInteger count = new AtomicInteger();
		// Submitting to a fork-join pool never parks the submitting thread (an event loop, a timer).
		return new ForkJoinPool(Math.max(4, 2 * Runtime.getRuntime().availableProcessors()), pool -> {
			ForkJoinWorkerThread thread = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
			thread.setName(prefix + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		}, null, true);
	}

	/** @return the owner id of the calling thread */
	public String currentOwner() {
		return this.owners.get();
	}

	/**
	 * Stops the watchdog and the backend's resources. Holds are not released: a thread may still be
	 * inside its critical section, so they expire after their lease as they would after a crash.
	 * Waiting threads wake and fail with {@link IllegalStateException}.
	 */
	@Override
	public void close() {
		if (!this.closing.compareAndSet(false, true)) {
			return;
		}
		this.closed = true;
		// Only out of the queues, before the backend goes: a hold handed to a waiter meanwhile is that
		// waiter's, and only the waiter may give it back (it may have taken it up already; releasing
		// it from here let a second holder in).
		this.waits.closeAll(waiter -> leaveQueue(waiter.name(), waiter.owner(), waiter.ticket(), false));
		// Steps already asked for still run, find the registry closed and end their futures.
		this.calls.shutdown();
		this.watchdog.close();
		this.deadlines.close();
		this.listeners.close();
		this.backend.close();
	}

	/**
	 * Acquires, waiting at most {@code wait} ({@code null}: as long as it takes). A timed acquisition
	 * never blocks on an unresponsive backend much beyond its wait: it fails with
	 * {@link LockBackendException} instead.
	 */
	boolean acquire(String name, Duration lease, Duration wait, boolean interruptible) throws InterruptedException {
		return acquire(name, currentOwner(), true, lease, wait, interruptible);
	}

	/**
	 * As {@link #acquire(String, Duration, Duration, boolean)}, for a given owner.
	 * @param threadBound whether the hold belongs to the calling thread (and ends with it) rather
	 * than to a piece of work that another thread may end
	 */
	private boolean acquire(String name, String owner, boolean threadBound, Duration requestedLease, Duration wait,
			boolean interruptible) throws InterruptedException {
		// With the watchdog off, a lock taken without a lease gets the configured one and is never renewed.
		Duration lease = (requestedLease != null) ? requestedLease : this.options.defaultLease();
		// lock() and tryLock() do not answer interrupts (java.util.concurrent.locks.Lock): a pending one
		// must not fail them, and is kept for the caller.
		if (this.closed) {
			throw closedException(name);
		}
		boolean pendingInterrupt = !interruptible && Thread.interrupted();
		try {
			if (wait == null) {
				return acquireWithin(name, owner, threadBound, lease, null, interruptible);
			}
			return acquireTimed(name, owner, threadBound, lease, wait, interruptible);
		}
		catch (LockBackendException ex) {
			if (interruptible && Thread.interrupted()) {
				// The caller's interrupt cut a backend call short (a deadline's is cleared by now).
				InterruptedException interrupted = new InterruptedException("Interrupted while acquiring lock '" + name + "'");
				interrupted.initCause(ex);
				throw interrupted;
			}
			throw ex;
		}
		finally {
			if (pendingInterrupt) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private boolean acquireTimed(String name, String owner, boolean threadBound, Duration lease, Duration wait,
			boolean interruptible) throws InterruptedException {
		long waitNanos = Math.max(0, saturatedNanos(wait));
		DeadlineGuard.Armed deadline = this.deadlines.arm(Math.max(waitNanos, MIN_ATTEMPT_NANOS) + DEADLINE_GRACE_NANOS);
		try {
			return acquireWithin(name, owner, threadBound, lease, wait, interruptible);
		}
		catch (InterruptedException | RuntimeException ex) {
			if (deadline.fired()) {
				throw new LockBackendException(name, "Lock '" + name + "': the backend (" + this.backend.description() + ") did not answer within the wait of "
						+ wait.toMillis() + " ms; the lock was not acquired", ex);
			}
			throw ex;
		}
		finally {
			deadline.disarm();
		}
	}

	private boolean acquireWithin(String name, String owner, boolean threadBound, Duration lease, Duration wait,
			boolean interruptible) throws InterruptedException {
		if (interruptible && Thread.interrupted()) {
			throw new InterruptedException("Interrupted before acquiring lock '" + name + "'");
		}
		boolean forever = wait == null;
		boolean mayWait = forever || (!wait.isNegative() && !wait.isZero());
		long deadline = forever ? 0 : System.nanoTime() + saturatedNanos(wait);
		Attempt attempt = new Attempt(this, name, owner, threadBound, lease, forever && !interruptible);
		boolean acquired = false;
		try {
			// Threads of this client already queued for the lock go first; only re-entry may pass them.
			if (!mayWait || !this.waits.hasWaiters(name) || holdCount(name, owner) > 0) {
				if (attempt.tryOnce(mayWait ? attempt.queueFor(forever, deadline) : 0) == null) {
					acquired = true;
					return true;
				}
				if (!mayWait) {
					return false;
				}
			}
			acquired = awaitAndAcquire(attempt, forever, deadline, interruptible);
			return acquired;
		}
		finally {
			if (!acquired && attempt.mayHaveBackendState()) {
				// Also passes on a hold handed to this attempt that it did not take up.
				leaveQueue(name, owner, attempt.ticket, true);
			}
			if (attempt.deferredInterrupt) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private boolean awaitAndAcquire(Attempt attempt, boolean forever, long deadline, boolean interruptible)
			throws InterruptedException {
		boolean interrupted = false;
		ReleaseWaits.Waiter waiter = this.waits.enter(attempt.name, attempt.owner, attempt.ticket);
		try {
			// Queued on the backend before joining the room: a hand-off announced meanwhile was missed, so look.
			boolean look = attempt.queued;
			long sleep = Long.MAX_VALUE;
			long poll = UNSUBSCRIBED_FIRST_SLEEP_NANOS;
			while (true) {
				long left = forever ? Long.MAX_VALUE : deadline - System.nanoTime();
				if (left <= 0) {
					return false;
				}
				ReleaseWaits.Turn turn;
				try {
					turn = waiter.awaitTurn(look ? 0 : Math.min(left, sleep));
				}
				catch (InterruptedException ex) {
					if (interruptible) {
						throw ex;
					}
					interrupted = true;
					continue;
				}
				if (turn == ReleaseWaits.Turn.GRANTED) {
					long token = waiter.grantedToken();
					waiter.forgetGrant();
					long now = System.nanoTime();
					if (this.closed) {
						// Given back by the caller's clean-up: a closed registry hands out nothing.
						throw closedException(attempt.name);
					}
					if (!forever && deadline - now <= 0) {
						// Too late for the caller, who may have moved on: given back by the clean-up.
						return false;
					}
					if (token <= attempt.refusedToken) {
						// Made before this attempt's last call, which found the lock someone else's: it
						// lapsed while this thread could not run, and that call queued it again.
						continue;
					}
					if (attempt.handOffStillFresh(now)) {
						attempt.granted(token);
						return true;
					}
					// This thread could not run for a while (a paused JVM, a long GC): the provisional lease
					// may have run out and the lock gone to another. Ask the backend, which also extends
					// the hold to its full lease if it is still this attempt's.
					look = true;
					continue;
				}
				if (turn == ReleaseWaits.Turn.WAIT && !look && !attempt.queued) {
					// Not the head: only a turn, a hand-off (or the deadline) ends this wait, never the holder's TTL.
					sleep = Long.MAX_VALUE;
					continue;
				}
				// The head, or queued on the backend although not the head here (threads of this client
				// that arrived together): it calls again to keep its place and to learn of a hand-off
				// whose message was lost.
				look = false;
				Duration ttl = attempt.tryOnce(attempt.queueFor(forever, deadline));
				if (ttl == null) {
					return true;
				}
				// A release message or hand-off wakes us; the holder's TTL bounds the sleep in case it is
				// lost, and a queued owner calls again before its place lapses.
				sleep = ttl.isNegative() || ttl.isZero() ? RETRY_NANOS : saturatedNanos(ttl);
				sleep = Math.min(sleep, attempt.placeNanos / 2);
				if (!waiter.subscribed()) {
					// No release messages (yet): poll, backing off from 5 ms to 100 ms.
					sleep = Math.min(sleep, poll);
					poll = Math.min(poll * 2, UNSUBSCRIBED_MAX_SLEEP_NANOS);
				}
			}
		}
		finally {
			this.waits.leave(waiter);
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Sends a waiting attempt out of the backend's queue. It never fails the caller and keeps its
	 * interrupt status: a place left behind lapses within its place time by itself.
	 */
	void leaveQueue(String name, String owner, String ticket, boolean passOnHandOff) {
		boolean interrupted = Thread.interrupted();
		try {
			this.backend.leaveQueue(name, owner, ticket, passOnHandOff);
		}
		catch (RuntimeException ex) {
			// The place lapses by itself; a hold handed over meanwhile expires after its provisional lease.
			log.debug("Could not leave the queue of lock '{}' for {}", name, owner, ex);
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	IllegalStateException closedException(String name) {
		return new IllegalStateException("Lock registry of client " + this.options.clientId()
				+ " is closed; cannot acquire lock '" + name + "'");
	}

	void release(String name, String owner) {
		release(name, owner, Duration.ZERO);
	}

	/**
	 * Releases one hold level; the last level with a positive {@code keep} does not free the lock
	 * but sets its lease to {@code keep} and stops renewing it, so that nobody else takes it before
	 * that time has passed (a job that must not run twice within a period, however short its run).
	 * @param keep how long the lock stays taken after the last release; zero or negative: freed now
	 */
	void release(String name, String owner, Duration keep) {
		// A release must reach the backend whatever the caller's interrupt status (a method that
		// restores the flag, the standard idiom, must not leak its lock); the flag is kept.
		boolean interrupted = Thread.interrupted();
		try {
			releaseUninterruptibly(name, owner, keep);
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private void releaseUninterruptibly(String name, String owner, Duration keep) {
		if (isPositive(keep) && !this.backend.leasesExpire()) {
			// Checked before anything changes: the caller still holds the lock and can unlock it plainly.
			throw new UnsupportedOperationException("Lock '" + name + "' cannot be kept for " + keep
					+ " after its release: holds of " + this.backend.description()
					+ " do not expire on their own; unlock() it instead");
		}
		HoldKey key = new HoldKey(name, owner);
		Hold hold = this.holds.get(key);
		if (hold == null) {
			Hold ranOut = this.expired.remove(key);
			if (ranOut != null) {
				cleanUpLostHold(ranOut);
				throw new LockLostException(ranOut.lost());
			}
			throw new IllegalMonitorStateException("Cannot unlock lock '" + name + "': thread '"
					+ Thread.currentThread().getName() + "' (owner " + owner + ") does not hold it");
		}
		int held = hold.count();
		LostHold lost = hold.lost();
		if (lost != null) {
			dropOneLevel(key, hold, held);
			if (held == 1) {
				cleanUpLostHold(hold);
			}
			throw new LockLostException(lost);
		}
		if (held == 1 && !hold.end(Hold.Ending.RELEASING)) {
			// The watchdog found its explicit lease over a moment ago and reports it lost.
			this.expired.remove(key, hold);
			cleanUpLostHold(hold);
			throw new LockLostException(markLost(hold, "its explicit lease ran out before unlock"));
		}
		boolean keeping = held == 1 && isPositive(keep);
		Release result;
		try {
			// Bounded by the lease: past it the hold is gone anyway, and the caller must not hang on a dead backend.
			Duration within = Hold.waitWithin(List.of(hold), System.nanoTime()).plus(RELEASE_MIN_WAIT);
			result = keeping ? keepFor(hold, keep, within)
					: this.backend.release(name, owner, held, hold.holdId, hold.token, within);
		}
		catch (RuntimeException ex) {
			// Whether the release reached the backend is unknown. Renewing on would keep the lock
			// forever if it did not, and block this thread's next acquisition: drop it here, and it
			// expires within its lease.
			dropOneLevel(key, hold, held);
			String what = (held == 1) ? "it is no longer renewed and expires within its lease" : "one hold level dropped";
			log.warn("Could not release lock '{}' held by {}: {}; {}", name, owner, this.backend.explain(ex), what);
			throw (ex instanceof LockBackendException) ? ex
					: new LockBackendException(name, "Lock '" + name + "': the release failed ("
							+ this.backend.explain(ex) + "); " + what + ".", ex);
		}
		if (result == Release.RELEASED && !keeping) {
			this.waits.releasedLocally(name);
		}
		else if (result == Release.NOT_HELD) {
			// Backends recognise a copy of a release they applied already (a re-send after a
			// reconnect); this answer means the hold is really gone: expired, or the backend lost it.
			lost = markLost(hold, hold.watchdog ? "the backend no longer had the hold at unlock"
					: "its explicit lease ran out before unlock");
			dropOneLevel(key, hold, held);
			throw new LockLostException(lost);
		}
		dropOneLevel(key, hold, held);
	}

	/**
	 * Leaves the hold to expire after {@code keep} instead of freeing it. Runs on the watchdog's
	 * thread, after any renewal already under way, which would otherwise set the longer lease again
	 * after this one; the hold is already marked as releasing, so no later renewal picks it up.
	 * @return {@link Release#RELEASED} if the lease was set, {@link Release#NOT_HELD} if the hold was gone
	 */
	private Release keepFor(Hold hold, Duration keep, Duration within) {
		List<HoldRef> ref = List.of(new HoldRef(hold.name, hold.owner));
		// Below a millisecond a lease of 0 would free the lock without waking anyone.
		Duration lease = (keep.toMillis() < 1) ? Duration.ofMillis(1) : keep;
		boolean kept = this.watchdog.serially(() -> this.backend.renew(ref, lease, within).get(0),
				within.plus(RELEASE_MIN_WAIT));
		return kept ? Release.RELEASED : Release.NOT_HELD;
	}

	@Override
	public boolean canKeepAfterUnlock() {
		return this.backend.leasesExpire();
	}

	boolean isHeldBy(String name, String owner) {
		return this.backend.isHeldBy(name, owner);
	}

	int holdCount(String name, String owner) {
		Hold hold = this.holds.get(new HoldKey(name, owner));
		return (hold != null) ? hold.count() : 0;
	}

	long fencingToken(String name, String owner) {
		Hold hold = this.holds.get(new HoldKey(name, owner));
		if (hold == null) {
			throw new IllegalMonitorStateException("No fencing token: thread '" + Thread.currentThread().getName()
					+ "' does not hold lock '" + name + "'");
		}
		if (hold.token == Acquisition.NO_TOKEN) {
			throw new UnsupportedOperationException("Lock '" + name + "' has no fencing token: its backend cannot "
					+ "issue tokens that are guaranteed to grow (Redlock's masters count independently and forget on "
					+ "restart). Use a single Redis or Cluster lock where the protected resource needs tokens.");
		}
		return hold.token;
	}

	private void dropOneLevel(HoldKey key, Hold hold, int held) {
		if (held > 1) {
			hold.count(held - 1);
		}
		else {
			this.holds.remove(key, hold);
		}
	}

	private void cleanUpLostHold(Hold hold) {
		try {
			// The hold may still exist if only the renewal failed (e.g. a network blip); free it for others.
			this.backend.release(hold.name, hold.owner, 1, hold.holdId, hold.token, RELEASE_MIN_WAIT);
		}
		catch (RuntimeException ex) {
			log.debug("Could not clean up lost hold of lock '{}' by {}", hold.name, hold.owner, ex);
		}
	}

	/**
	 * What the watchdog renews at each tick, after tidying the table: holds of threads that died are
	 * dropped (they expire after their lease, as after a crash), and explicit leases that ran out
	 * unreleased are reported lost and set aside, so that neither stays listed or blocks the next
	 * acquisition of its owner.
	 */
	private List<Hold> renewable() {
		long now = System.nanoTime();
		List<Hold> renewable = new ArrayList<>();
		for (Hold hold : this.holds.values()) {
			if (hold.releasing()) {
				continue;
			}
			if (!hold.ownerThreadAlive()) {
				dropOrphan(hold);
			}
			else if (!hold.watchdog) {
				if (hold.lost() == null && !hold.confirmedAt(now)) {
					expire(hold);
				}
			}
			else if (hold.lost() == null) {
				renewable.add(hold);
			}
		}
		this.expired.values().removeIf(hold -> !hold.ownerThreadAlive());
		return renewable;
	}

	private void expire(Hold hold) {
		HoldKey key = new HoldKey(hold.name, hold.owner);
		// Unless its owner is releasing it right now: then the release decides.
		if (hold.end(Hold.Ending.EXPIRED) && this.holds.remove(key, hold)) {
			markLost(hold, "its explicit lease ran out before unlock");
			// Its owner's unlock() still learns of the loss.
			this.expired.put(key, hold);
		}
	}

	private void dropOrphan(Hold hold) {
		if (this.holds.remove(new HoldKey(hold.name, hold.owner), hold)) {
			log.warn("Thread '{}' died holding lock '{}' (owner {}); it is no longer renewed and expires within {}",
					hold.threadName(), hold.name, hold.owner,
					hold.watchdog ? this.options.watchdogTimeout() : "its lease");
		}
	}

	LostHold markLost(Hold hold, String reason) {
		LostHold lost = new LostHold(hold.name, hold.owner, hold.token, this.options.clock().instant(), reason);
		if (!hold.markLost(lost)) {
			return hold.lost();
		}
		this.lostHolds.incrementAndGet();
		log.warn("Lock '{}' held by {} (thread '{}'{}) was lost: {}", hold.name, hold.owner, hold.threadName(),
				(hold.origin() != null) ? ", in " + hold.origin() : "", reason);
		this.listeners.holdLost(lost);
		return lost;
	}

	private void renewalFailed(List<Hold> holds, RuntimeException cause) {
		this.listeners.renewalFailed(holds.stream().map(hold -> hold.name).toList(), cause);
	}

	/** {@code Duration.isPositive()}, which Java 17 lacks. */
	static boolean isPositive(Duration duration) {
		return !duration.isNegative() && !duration.isZero();
	}

	/**
	 * A duration in nanoseconds, at most {@code Long.MAX_VALUE / 2} (146 years): deadlines are built by
	 * adding it to {@code System.nanoTime()} and to grace periods, which must not overflow into the past.
	 */
	static long saturatedNanos(Duration duration) {
		try {
			return Math.min(duration.toNanos(), Long.MAX_VALUE / 2);
		}
		catch (ArithmeticException tooLong) {
			return Long.MAX_VALUE / 2;
		}
	}

	record HoldKey(String name, String owner) {
	}

}
