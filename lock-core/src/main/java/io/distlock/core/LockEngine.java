package io.distlock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.distlock.DistLock;
import io.distlock.DistReadWriteLock;
import io.distlock.DistSemaphore;
import io.distlock.HoldKind;
import io.distlock.HoldInfo;
import io.distlock.LockBackendException;
import io.distlock.LockRegistry;
import io.distlock.LockWatchdog;
import io.distlock.WorkHold;

/**
 * The backend-independent lock engine: hold bookkeeping, reentrancy, waiting, the watchdog and
 * lost-hold reporting, over any {@link LockBackend}. Backends only store state atomically.
 *
 * <p>Registries hold one ({@link BackendLockRegistry}, their public face); it is not public API. It
 * wires the parts, each a type of its own in this package that receives the parts it calls on
 * (so that what a part can touch is what its constructor names, not the whole engine):
 * <ul>
 * <li>{@link Attempt}: one acquisition's backend calls and what they answered;</li>
 * <li>{@link BlockingAcquisition}: waiting on the calling thread; {@link AsyncAcquisition}: the same
 * wait without a thread; {@link WorkAcquisitions}: holds that belong to work, not a thread;</li>
 * <li>{@link ReleaseWaits}: this client's waiters per lock name, in arrival order, woken by release
 * messages and hand-offs;</li>
 * <li>{@link HoldTable}: the holds, their reentrant counts, and lost-hold reporting;
 * {@link FencingTokens}: their tokens, issued on request;</li>
 * <li>{@link Unlocking}: ending holds; {@link LeaseRenewals}: renewing them; {@link DeadlineGuard}: bounding
 * backend calls by the caller's wait; {@link LockArguments}: checking what callers pass.</li>
 * </ul>
 *
 * <p>Owner ids are {@code clientId:threadId}, computed here and passed to the backend as values.
 */
final class LockEngine implements LockRegistry, AutoCloseable {

	/** The threads of each of the pools for non-blocking acquisitions' calls and asynchronous releases. */
	static final int POOL_THREADS = 8;

	/**
	 * Numbers this client's attempts (with the owner id, a hand-off names exactly one, and a release
	 * names the hold it ends). It starts at a random number: a client restarted with the same client
	 * id must not reuse the tickets of its previous run, whose release markers live on for up to 30 s.
	 */
	private final AtomicLong tickets = new AtomicLong(ThreadLocalRandom.current().nextLong(1L << 40));

	final LockBackend backend;

	final LockEngineOptions options;

	/** This client's holds, and those that ran out before their owner released them. */
	final HoldTable holds;

	final ReleaseWaits waits;

	final LeaseRenewals renewals;

	/** The watchdog's threads when the application gave none: the engine's to stop. */
	private final LockWatchdog ownWatchdog;

	private final DeadlineGuard deadlines;

	private final ListenerNotifier listeners;

	private final ClosedState closed;

	/** When (epoch ms of the options' clock) the restart grace the backend last refused with ends; 0 if none. */
	private volatile long restartGraceEndsMillis;

	/** Whether close() ran: it runs once, whoever else calls it later. */
	private final AtomicBoolean closing = new AtomicBoolean();

	/** Holds that belong to work rather than to a thread. */
	private final WorkAcquisitions work;

	/** The holds' fencing tokens, issued on request. */
	final FencingTokens tokens;

	/** Releases, and leases kept after them. */
	private final Unlocking unlocking;

	/** What each acquisition attempt works with. */
	private final Attempt.Parts attempts;

	/** Acquisitions that wait on the calling thread. */
	private final BlockingAcquisition blocking;

	/**
	 * Where acquisitions that wait without a thread make their backend calls: a thread is taken for
	 * the length of one call, never for a wait.
	 */
	private final ExecutorService calls;

	/** Where work holds are released asynchronously: apart from the calls, so that no release queues behind them. */
	private final ExecutorService releases;

	/** Each thread's owner id, built once per thread rather than on every call. */
	private final ThreadLocal<String> owners;

	/**
	 * @param backend where lock state is kept
	 * @param options the engine's settings
	 */
	LockEngine(LockBackend backend, LockEngineOptions options) {
		this.backend = backend;
		this.options = options;
		this.waits = new ReleaseWaits(backend, options.clientId());
		this.closed = new ClosedState(options.clientId());
		this.listeners = new ListenerNotifier(options.clientId(), options.listeners());
		this.holds = new HoldTable(options, this.listeners);
		backend.onHoldsLost(this.holds::lostInBackend);
		this.ownWatchdog = (options.watchdog() != null) ? null : LockWatchdog.create();
		this.renewals = new LeaseRenewals((options.watchdog() != null) ? options.watchdog() : this.ownWatchdog, backend,
				options.watchdogTimeout(), this.holds::renewable, this.holds::markLost, this::renewalFailed);
		this.deadlines = new DeadlineGuard(options.clientId());
		this.unlocking = new Unlocking(backend, this.holds, this.waits, this.renewals);
		this.tokens = new FencingTokens(backend, this.holds);
		this.attempts = new Attempt.Parts(backend, options, this.holds, this.renewals, this.unlocking, this.closed,
				this.tickets, this::restartGraceSeen);
		this.blocking = new BlockingAcquisition(backend, options, this.closed, this.waits, this.deadlines, this.attempts);
		this.calls = pool("distlock-call-", options.clientId());
		this.releases = pool("distlock-release-", options.clientId());
		this.owners = ThreadLocal.withInitial(() -> options.clientId() + ":" + Thread.currentThread().getId());
		EngineWorkHold.Parts workHolds = new EngineWorkHold.Parts(this.tokens, this.unlocking, this.releases, this.closed,
				backend);
		this.work = new WorkAcquisitions(options, this.closed, this.blocking, this.attempts,
				new AsyncAcquisition.Parts(backend, this.closed, this.waits, this.holds, this.deadlines, this.calls,
						workHolds),
				workHolds);
	}

	@Override
	public DistLock getLock(String name) {
		return new EngineLock(this, LockId.exclusive(requireName(name)));
	}

	@Override
	public DistReadWriteLock getReadWriteLock(String name) {
		if (!offersReadWriteLocks()) {
			throw new UnsupportedOperationException(this.backend.description() + " keeps exclusive locks only (it keeps "
					+ this.backend.supportedKinds() + " holds); read-write locks need a distlock registry on Redis (single, "
					+ "Sentinel or Cluster, without replica acknowledgement), the table lock with its <table>_shared table, "
					+ "or ZooKeeper (Redlock will not: its independent masters cannot keep one fair queue)");
		}
		return new EngineReadWriteLock(this, requireName(name));
	}

	@Override
	public DistSemaphore getSemaphore(String name, int permits) {
		if (!offersSemaphores()) {
			throw new UnsupportedOperationException(this.backend.description() + " keeps exclusive locks only (it keeps "
					+ this.backend.supportedKinds() + " holds); semaphores need a distlock registry on Redis (single, "
					+ "Sentinel or Cluster, without replica acknowledgement), the table lock with its <table>_shared table, "
					+ "or ZooKeeper (Redlock will not: a majority of independent masters can admit more holders than "
					+ "permits)");
		}
		String checked = requireName(name);
		if (permits < 1) {
			throw new IllegalArgumentException("Semaphore '" + checked + "' needs at least 1 permit, not " + permits);
		}
		return new EngineSemaphore(this, checked, permits);
	}

	@Override
	public boolean offersReadWriteLocks() {
		return this.backend.supportedKinds().containsAll(EnumSet.of(HoldKind.READ, HoldKind.WRITE));
	}

	@Override
	public boolean offersSemaphores() {
		return this.backend.supportedKinds().contains(HoldKind.PERMIT);
	}

	@Override
	public List<HoldInfo> heldLocks() {
		List<HoldInfo> snapshot = new ArrayList<>();
		this.holds.forEach(hold -> snapshot.add(hold.info()));
		return snapshot;
	}

	/** @return this engine's settings */
	LockEngineOptions options() {
		return this.options;
	}

	/** @return how many lock names this client is waiting on right now */
	int waitingLockNames() {
		return this.waits.size();
	}

	/** @return how long the backend keeps the lock without renewal; zero if free */
	Duration remainingLease(String name) {
		return this.backend.remainingLease(requireName(name));
	}

	/** @return how long the backend keeps the longest hold of that kind without renewal; zero if none */
	Duration remainingLease(String name, HoldKind kind) {
		if (kind == HoldKind.EXCLUSIVE) {
			return remainingLease(name);
		}
		String checked = requireName(name);
		return this.backend.supportedKinds().contains(kind) ? this.backend.remainingLease(checked, kind) : Duration.ZERO;
	}

	/** @return how long the backend keeps the longest hold of the lock's kind without renewal; zero if none */
	Duration remainingLease(LockId id) {
		return (id.kind() == HoldKind.EXCLUSIVE) ? this.backend.remainingLease(id.name())
				: this.backend.remainingLease(id.name(), id.kind());
	}

	/** @return the semaphore's permits that no live holder has */
	int availablePermits(LockId id) {
		return this.backend.availablePermits(id.name(), id.permits());
	}

	String requireName(String name) {
		return this.backend.checkName(LockArguments.requireWholeText(name));
	}

	@Override
	public Optional<WorkHold> tryLockForWork(String name, Duration waitTime, Duration leaseTime)
			throws InterruptedException {
		return this.work.tryLock(LockId.exclusive(requireName(name)), waitTime, leaseTime);
	}

	@Override
	public CompletableFuture<Optional<WorkHold>> tryLockForWorkAsync(String name, Duration waitTime, Duration leaseTime) {
		return this.work.tryLockAsync(LockId.exclusive(requireName(name)), waitTime, leaseTime);
	}

	@Override
	public CompletableFuture<WorkHold> lockForWorkAsync(String name, Duration leaseTime) {
		return this.work.lockAsync(LockId.exclusive(requireName(name)), leaseTime);
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
	String currentOwner() {
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
		this.closed.close();
		// Only out of the queues, before the backend goes: a hold handed to a waiter meanwhile is that
		// waiter's, and only the waiter may give it back (it may have taken it up already; releasing
		// it from here let a second holder in).
		this.waits.closeAll(waiter -> BackendCalls.leaveQueue(this.backend, waiter.id(), waiter.owner(), waiter.ticket(), false));
		// Steps already asked for still run, find the registry closed and end their futures.
		this.calls.shutdown();
		this.releases.shutdown();
		this.renewals.close();
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
	boolean acquire(LockId id, Duration lease, Duration wait, boolean interruptible) throws InterruptedException {
		return this.blocking.acquire(id, currentOwner(), true, lease, wait, interruptible);
	}

	void release(LockId id, String owner) {
		release(id, owner, Duration.ZERO);
	}

	/**
	 * Releases one hold level; the last level with a positive {@code keep} leaves the lock taken
	 * for that long ({@link Unlocking}).
	 */
	void release(LockId id, String owner, Duration keep) {
		this.unlocking.release(id, owner, keep);
	}

	/** The backend refused an acquisition for its restart grace, which ends in {@code left}. */
	void restartGraceSeen(Duration left) {
		this.restartGraceEndsMillis = this.options.clock().millis() + left.toMillis();
	}

	@Override
	public Optional<Instant> restartGraceEnds() {
		long ends = this.restartGraceEndsMillis;
		return (ends > this.options.clock().millis()) ? Optional.of(Instant.ofEpochMilli(ends)) : Optional.empty();
	}

	@Override
	public boolean offersFencingTokens() {
		return this.backend.issuesFencingTokens();
	}

	@Override
	public boolean canKeepAfterUnlock() {
		return this.backend.leasesExpire();
	}

	boolean isHeldBy(LockId id, String owner) {
		return (id.kind() == HoldKind.EXCLUSIVE) ? this.backend.isHeldBy(id.name(), owner)
				: this.backend.isHeldBy(id.name(), id.kind(), owner);
	}

	int holdCount(LockId id, String owner) {
		return this.holds.count(id.name(), id.kind(), owner);
	}

	/** {@link DistLock#tryLockForWork(Duration, Duration)} of one handle, whose name is checked already. */
	Optional<WorkHold> tryLockForWork(LockId id, Duration waitTime, Duration leaseTime) throws InterruptedException {
		return this.work.tryLock(id, waitTime, leaseTime);
	}

	/** {@link DistLock#tryLockForWorkAsync(Duration, Duration)} of one handle. */
	CompletableFuture<Optional<WorkHold>> tryLockForWorkAsync(LockId id, Duration waitTime, Duration leaseTime) {
		return this.work.tryLockAsync(id, waitTime, leaseTime);
	}

	private void renewalFailed(List<Hold> holds, RuntimeException cause) {
		this.listeners.renewalFailed(holds.stream().map(hold -> hold.name).toList(), cause);
	}
}
