package io.distlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.DistLock;
import io.distlock.HoldInfo;
import io.distlock.LockBackendException;
import io.distlock.LockLostException;
import io.distlock.LockRegistry;
import io.distlock.LockRegistryStats;
import io.distlock.LockWatchdog;
import io.distlock.WorkHold;
import io.distlock.core.HoldTable.HoldKey;
import io.distlock.core.LockBackend.Acquisition;

/**
 * The backend-independent lock engine: hold bookkeeping, reentrancy, waiting, the watchdog and
 * lost-hold reporting, over any {@link LockBackend}. Backends only store state atomically.
 *
 * <p>This class is the facade; each part is a type of its own in this package:
 * <ul>
 * <li>{@link Attempt}: one acquisition's backend calls and what they answered;</li>
 * <li>{@link BlockingAcquisition}: waiting on the calling thread; {@link AsyncAcquisition}: the same
 * wait without a thread;</li>
 * <li>{@link ReleaseWaits}: this client's waiters per lock name, in arrival order, woken by release
 * messages and hand-offs;</li>
 * <li>{@link HoldTable}: the holds, their reentrant counts, and lost-hold reporting;</li>
 * <li>{@link Unlocking}: ending holds; {@link Watchdog}: renewing them; {@link DeadlineGuard}: bounding
 * backend calls by the caller's wait.</li>
 * </ul>
 *
 * <p>Owner ids are {@code clientId:threadId}, computed here and passed to the backend as values.
 *
 * <p>Over 300 lines because it is the registry's whole public face (locks, waits, diagnostics) over the
 * parts above; issue 19 would have registries hold an engine rather than extend it.
 */
public class LockEngine implements LockRegistry, LockRegistryStats, AutoCloseable {

	private static final Logger log = LoggerFactory.getLogger(LockEngine.class);

	/** The threads of each of the pools for non-blocking acquisitions' calls and asynchronous releases. */
	static final int POOL_THREADS = 8;

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
	static final Duration RELEASE_MIN_WAIT = Duration.ofSeconds(1);

	/**
	 * Numbers this client's attempts (with the owner id, a hand-off names exactly one, and a release
	 * names the hold it ends). It starts at a random number: a client restarted with the same client
	 * id must not reuse the tickets of its previous run, whose release markers live on for 15 s.
	 */
	final AtomicLong tickets = new AtomicLong(ThreadLocalRandom.current().nextLong(1L << 40));

	final LockBackend backend;

	final LockEngineOptions options;

	/** This client's holds, and those that ran out before their owner released them. */
	final HoldTable holds;


	final ReleaseWaits waits;

	final Watchdog watchdog;

	/** The watchdog's threads when the application gave none: the engine's to stop. */
	private final LockWatchdog ownWatchdog;

	final DeadlineGuard deadlines;

	private final ListenerNotifier listeners;

	volatile boolean closed;

	/** Whether close() ran: it runs once, whoever else calls it later. */
	private final AtomicBoolean closing = new AtomicBoolean();

	/** Numbers the owners of holds that belong to work rather than to a thread. */
	private final AtomicLong workOwners = new AtomicLong();

	/** Releases, and leases kept after them. */
	private final Unlocking unlocking;

	/** Acquisitions that wait on the calling thread. */
	private final BlockingAcquisition blocking;

	/**
	 * Where acquisitions that wait without a thread make their backend calls: a thread is taken for
	 * the length of one call, never for a wait.
	 */
	final ExecutorService calls;

	/** Where work holds are released asynchronously: apart from the calls, so that no release queues behind them. */
	final ExecutorService releases;

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
		this.listeners = new ListenerNotifier(options.clientId(), options.listeners());
		this.holds = new HoldTable(options, this.listeners);
		this.ownWatchdog = (options.watchdog() != null) ? null : LockWatchdog.create();
		this.watchdog = new Watchdog((options.watchdog() != null) ? options.watchdog() : this.ownWatchdog, backend,
				options.watchdogTimeout(), this.holds::renewable, this.holds::markLost, this::renewalFailed);
		this.deadlines = new DeadlineGuard(options.clientId());
		this.blocking = new BlockingAcquisition(this);
		this.unlocking = new Unlocking(this);
		this.calls = pool("distlock-call-", options.clientId());
		this.releases = pool("distlock-release-", options.clientId());
		this.owners = ThreadLocal.withInitial(() -> options.clientId() + ":" + Thread.currentThread().getId());
	}

	@Override
	public DistLock getLock(String name) {
		return new EngineLock(this, requireName(name));
	}

	@Override
	public List<HoldInfo> heldLocks() {
		List<HoldInfo> snapshot = new ArrayList<>();
		this.holds.forEach(hold -> snapshot.add(hold.info()));
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
		return this.holds.lostHolds();
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
		return this.backend.remainingLease(requireName(name));
	}

	/**
	 * Refuses a name this registry's backend cannot keep as it is; called on every name a caller
	 * passes, after the checks every backend shares, before the backend sees it.
	 * @param name a name that is not blank and has no unpaired surrogate
	 * @return the name
	 * @throws IllegalArgumentException naming what is wrong with it and what to do
	 */
	protected String checkName(String name) {
		return name;
	}

	private String requireName(String name) {
		return checkName(requireWholeText(name));
	}

	private static String requireWholeText(String name) {
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
		name = requireName(name);
		Duration lease = (leaseTime != null) ? requirePositiveLease(name, leaseTime) : null;
		// An owner of its own, never a thread's: the work may end on any thread, and the thread that
		// took the hold may take the lock again meanwhile (then it waits like any other owner).
		String owner = this.options.clientId() + ":w" + Long.toString(this.workOwners.incrementAndGet(), 36);
		Duration wait = (waitTime != null && !waitTime.isNegative()) ? waitTime : Duration.ZERO;
		if (!this.blocking.acquire(name, owner, false, lease, wait, true)) {
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
		CompletableFuture<Optional<WorkHold>> acquisition = acquireForWork(name, null, leaseTime);
		// A future of the caller's own, tied both ways: cancelling it (or timing it out) must reach the
		// acquisition, which a dependent stage's cancel does not, or the hold it wins is nobody's.
		CompletableFuture<WorkHold> returned = new CompletableFuture<>();
		acquisition.whenComplete((hold, error) -> {
			if (error != null) {
				returned.completeExceptionally(error);
			}
			else if (hold.isEmpty()) {
				returned.completeExceptionally(new CancellationException());
			}
			else if (!returned.complete(hold.get())) {
				hold.get().releaseAsync().whenComplete((ignored, failure) -> {
					if (failure != null) {
						log.debug("Could not give back lock '{}' won after its acquisition was cancelled", name, failure);
					}
				});
			}
		});
		// However the caller ends its future (cancel, a timeout, complete), the acquisition ends.
		returned.whenComplete((hold, error) -> acquisition.cancel(false));
		return returned;
	}

	private CompletableFuture<Optional<WorkHold>> acquireForWork(String name, Duration wait, Duration leaseTime) {
		name = requireName(name);
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

	/**
	 * A pool of {@value #POOL_THREADS} threads for backend calls, each bounded in time: enough that a
	 * few slow calls do not hold up the rest (idle ones end after a minute); calls wait for I/O, so the
	 * number does not follow the processors. Submitting to a fork-join pool never parks the submitting
	 * thread (an event loop, a timer).
	 */
	private static ExecutorService pool(String prefix, String clientId) {
		String name = prefix + clientId.substring(0, Math.min(8, clientId.length())) + "-";
		AtomicInteger count = new AtomicInteger();
		return new ForkJoinPool(POOL_THREADS, pool -> {
			ForkJoinWorkerThread thread = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
			thread.setName(name + count.incrementAndGet());
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
		this.releases.shutdown();
		this.watchdog.close();
		if (this.ownWatchdog != null) {
			this.ownWatchdog.close();
		}
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
		return this.blocking.acquire(name, currentOwner(), true, lease, wait, interruptible);
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
	 * Releases one hold level; the last level with a positive {@code keep} leaves the lock taken
	 * for that long ({@link Unlocking}).
	 */
	void release(String name, String owner, Duration keep) {
		this.unlocking.release(name, owner, keep);
	}

	@Override
	public boolean offersFencingTokens() {
		return this.backend.issuesFencingTokens();
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
		if (hold.token == Acquisition.TOKEN_ON_REQUEST) {
			hold.token = issueToken(hold);
		}
		return hold.token;
	}

	/**
	 * @param doing what failed, as the start of the message after the lock's name, or empty
	 * @return a backend call's failure as the caller sees it: naming the lock and the real cause
	 */
	LockBackendException backendFailure(String name, String doing, RuntimeException ex) {
		return (ex instanceof LockBackendException backend) ? backend
				: new LockBackendException(name, "Lock '" + name + "': " + doing + this.backend.explain(ex), ex);
	}

	/** The first request for a hold's token: the backend issues it only if the hold is still there. */
	private long issueToken(Hold hold) {
		if (hold.lost() != null) {
			throw new LockLostException(hold.lost());
		}
		long token;
		try {
			token = this.backend.issueToken(hold.name, hold.owner, hold.holdId);
		}
		catch (RuntimeException ex) {
			throw backendFailure(hold.name, "no fencing token could be issued: ", ex);
		}
		if (token == Acquisition.NO_TOKEN) {
			// The hold is gone: a token now might be above the next holder's, and must not be used.
			throw new LockLostException(this.holds.markLost(hold, "the backend no longer had the hold when its fencing token was asked for"));
		}
		return token;
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

}
