package io.distlock.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.distlock.DistLock;
import io.distlock.HoldKind;
import io.distlock.WorkHold;

/**
 * A handle to one lock of a {@link LockEngine}: an exclusive lock, one side of a read-write lock,
 * or a semaphore's permit ({@link LockId}); holds no state of its own.
 */
final class EngineLock implements DistLock {

	private final LockEngine engine;

	private final LockId id;

	private final String name;

	EngineLock(LockEngine engine, LockId id) {
		this.engine = engine;
		this.id = id;
		this.name = id.name();
	}

	@Override
	public String getName() {
		return this.name;
	}

	@Override
	public void lock() {
		acquireUninterruptibly(null);
	}

	@Override
	public void lock(Duration leaseTime) {
		acquireUninterruptibly(requirePositiveLease(leaseTime));
	}

	@Override
	public void lockInterruptibly() throws InterruptedException {
		this.engine.acquire(this.id, null, null, true);
	}

	@Override
	public boolean tryLock() {
		try {
			return this.engine.acquire(this.id, null, Duration.ZERO, false);
		}
		catch (InterruptedException ex) {
			throw new IllegalStateException("Unreachable: a zero wait never sleeps", ex);
		}
	}

	@Override
	public boolean tryLock(Duration waitTime, Duration leaseTime) throws InterruptedException {
		Duration wait = (waitTime != null) ? waitTime : Duration.ZERO;
		Duration lease = (leaseTime != null) ? requirePositiveLease(leaseTime) : null;
		return this.engine.acquire(this.id, lease, wait, true);
	}

	@Override
	public void unlock() {
		this.engine.release(this.id, this.engine.currentOwner());
	}

	@Override
	public void unlockKeepingFor(Duration keep) {
		this.engine.release(this.id, this.engine.currentOwner(), (keep != null) ? keep : Duration.ZERO);
	}

	@Override
	public boolean isHeldByCurrentThread() {
		return this.engine.isHeldBy(this.id, this.engine.currentOwner());
	}

	/** @return whether some hold of this kind exists: for a read lock, any reader's */
	@Override
	public boolean isLocked() {
		return !this.engine.remainingLease(this.id).isZero();
	}

	@Override
	public int getHoldCount() {
		return this.engine.holdCount(this.id, this.engine.currentOwner());
	}

	/** @return the remaining lease; for a read lock or a semaphore, the longest among its holders */
	@Override
	public Duration remainingLease() {
		return this.engine.remainingLease(this.id);
	}

	@Override
	public long getFencingToken() {
		return this.engine.tokens.fencingToken(this.id, this.engine.currentOwner());
	}

	@Override
	public Optional<WorkHold> tryLockForWork(Duration waitTime, Duration leaseTime) throws InterruptedException {
		return this.engine.tryLockForWork(this.id, waitTime, leaseTime);
	}

	@Override
	public CompletableFuture<Optional<WorkHold>> tryLockForWorkAsync(Duration waitTime, Duration leaseTime) {
		return this.engine.tryLockForWorkAsync(this.id, waitTime, leaseTime);
	}

	/** @return what the handle locks, for the semaphore's other methods */
	LockId id() {
		return this.id;
	}

	private void acquireUninterruptibly(Duration lease) {
		try {
			this.engine.acquire(this.id, lease, null, false);
		}
		catch (InterruptedException ex) {
			throw new IllegalStateException("Unreachable: lock() does not answer interrupts", ex);
		}
	}

	private Duration requirePositiveLease(Duration leaseTime) {
		return LockArguments.requirePositiveLease(this.name, leaseTime);
	}

	/**
	 * Two handles of one registry, name and kind are one lock: either unlocks what the other locked
	 * (a semaphore's handles also agree on its permits).
	 */
	@Override
	public boolean equals(Object other) {
		return other instanceof EngineLock that && this.engine == that.engine && this.id.equals(that.id);
	}

	@Override
	public int hashCode() {
		return System.identityHashCode(this.engine) * 31 + this.id.hashCode();
	}

	@Override
	public String toString() {
		return "DistLock[" + ((this.id.kind() == HoldKind.EXCLUSIVE) ? this.name : this.id.describe()) + "]";
	}

}
