package io.distlock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.distlock.DistLock;
import io.distlock.DistReadWriteLock;
import io.distlock.DistSemaphore;
import io.distlock.HoldKind;
import io.distlock.HoldInfo;
import io.distlock.LockRegistry;
import io.distlock.LockRegistryStats;
import io.distlock.WorkHold;

/**
 * A {@link LockRegistry} over any {@link LockBackend}: what the Redis, Redlock, table and ZooKeeper
 * registries are, and what a backend of the application's own becomes with
 * {@code new BackendLockRegistry(backend, options)}.
 *
 * <p>It holds its engine rather than being one, so its public face is the registry, the numbers an
 * operator reads ({@link LockRegistryStats}), its settings and {@link #close()}; the engine's parts
 * stay package-private.
 */
public class BackendLockRegistry implements LockRegistry, LockRegistryStats, AutoCloseable {

	private final LockEngine engine;

	/**
	 * @param backend where lock state is kept; closed with the registry
	 * @param options the engine's settings
	 */
	public BackendLockRegistry(LockBackend backend, LockEngineOptions options) {
		this.engine = new LockEngine(backend, options);
	}

	@Override
	public DistLock getLock(String name) {
		return this.engine.getLock(name);
	}

	@Override
	public Optional<WorkHold> tryLockForWork(String name, Duration waitTime, Duration leaseTime)
			throws InterruptedException {
		return this.engine.tryLockForWork(name, waitTime, leaseTime);
	}

	/**
	 * {@inheritDoc}
	 * <p>The wait holds no thread: the backend calls run on a few {@code distlock-call} threads of
	 * this registry, one call at a time per acquisition, and the waiting between them is done by
	 * release messages, hand-offs and a timer.
	 */
	@Override
	public CompletableFuture<Optional<WorkHold>> tryLockForWorkAsync(String name, Duration waitTime,
			Duration leaseTime) {
		return this.engine.tryLockForWorkAsync(name, waitTime, leaseTime);
	}

	@Override
	public CompletableFuture<WorkHold> lockForWorkAsync(String name, Duration leaseTime) {
		return this.engine.lockForWorkAsync(name, leaseTime);
	}

	@Override
	public DistReadWriteLock getReadWriteLock(String name) {
		return this.engine.getReadWriteLock(name);
	}

	@Override
	public DistSemaphore getSemaphore(String name, int permits) {
		return this.engine.getSemaphore(name, permits);
	}

	@Override
	public boolean offersReadWriteLocks() {
		return this.engine.offersReadWriteLocks();
	}

	@Override
	public boolean offersSemaphores() {
		return this.engine.offersSemaphores();
	}

	@Override
	public boolean offersFencingTokens() {
		return this.engine.offersFencingTokens();
	}

	@Override
	public Optional<Instant> restartGraceEnds() {
		return this.engine.restartGraceEnds();
	}

	@Override
	public boolean canKeepAfterUnlock() {
		return this.engine.canKeepAfterUnlock();
	}

	@Override
	public List<HoldInfo> heldLocks() {
		return this.engine.heldLocks();
	}

	@Override
	public int activeHolds() {
		return this.engine.holds.size();
	}

	@Override
	public int waitingThreads() {
		return this.engine.waits.waitingThreads();
	}

	@Override
	public Map<String, Integer> waiters() {
		return this.engine.waits.waiters();
	}

	@Override
	public long watchdogRenewals() {
		return this.engine.renewals.renewals();
	}

	@Override
	public long watchdogRenewalFailures() {
		return this.engine.renewals.failedRenewals();
	}

	@Override
	public long lostHolds() {
		return this.engine.holds.lostHolds();
	}

	@Override
	public Duration remainingLease(String name) {
		return this.engine.remainingLease(name);
	}

	@Override
	public Duration remainingLease(String name, HoldKind kind) {
		return this.engine.remainingLease(name, kind);
	}

	@Override
	public BackendHealth backendHealth() {
		LockBackend.Health health = this.engine.backend.health();
		return new BackendHealth(health.up(), health.details());
	}

	@Override
	public List<String> serverWarnings() {
		return this.engine.backend.serverWarnings();
	}

	/** @return this registry's settings */
	public LockEngineOptions options() {
		return this.engine.options();
	}

	/**
	 * Stops the watchdog and the backend's resources. Holds are not released: a thread may still be
	 * inside its critical section, so they expire after their lease as they would after a crash.
	 * Waiting threads wake and fail with {@link IllegalStateException}.
	 */
	@Override
	public void close() {
		this.engine.close();
	}

	/** For the engine's tests: the engine behind this registry. */
	LockEngine engine() {
		return this.engine;
	}

}
