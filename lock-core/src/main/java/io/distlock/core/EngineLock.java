package io.distlock.core;

import java.time.Duration;

import io.distlock.DistLock;

/**
 * A handle to one lock name of a {@link LockEngine}; holds no state of its own.
 */
final class EngineLock implements DistLock {

	private final LockEngine engine;

	private final String name;

	EngineLock(LockEngine engine, String name) {
		this.engine = engine;
		this.name = name;
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
		this.engine.acquire(this.name, null, null, true);
	}

	@Override
	public boolean tryLock() {
		try {
			return this.engine.acquire(this.name, null, Duration.ZERO, false);
		}
		catch (InterruptedException ex) {
			throw new IllegalStateException("Unreachable: a zero wait never sleeps", ex);
		}
	}

	@Override
	public boolean tryLock(Duration waitTime, Duration leaseTime) throws InterruptedException {
		Duration wait = (waitTime != null) ? waitTime : Duration.ZERO;
		Duration lease = (leaseTime != null) ? requirePositiveLease(leaseTime) : null;
		return this.engine.acquire(this.name, lease, wait, true);
	}

	@Override
	public void unlock() {
		this.engine.release(this.name, this.engine.currentOwner());
	}

	@Override
	public void unlockKeepingFor(Duration keep) {
		this.engine.release(this.name, this.engine.currentOwner(), (keep != null) ? keep : Duration.ZERO);
	}

	@Override
	public boolean isHeldByCurrentThread() {
		return this.engine.isHeldBy(this.name, this.engine.currentOwner());
	}

	@Override
	public boolean isLocked() {
		return !this.engine.remainingLease(this.name).isZero();
	}

	@Override
	public int getHoldCount() {
		return this.engine.holdCount(this.name, this.engine.currentOwner());
	}

	@Override
	public Duration remainingLease() {
		return this.engine.remainingLease(this.name);
	}

	@Override
	public long getFencingToken() {
		return this.engine.tokens.fencingToken(this.name, this.engine.currentOwner());
	}

	private void acquireUninterruptibly(Duration lease) {
		try {
			this.engine.acquire(this.name, lease, null, false);
		}
		catch (InterruptedException ex) {
			throw new IllegalStateException("Unreachable: lock() does not answer interrupts", ex);
		}
	}

	private Duration requirePositiveLease(Duration leaseTime) {
		return LockArguments.requirePositiveLease(this.name, leaseTime);
	}

	/** Two handles of one registry and name are one lock: either unlocks what the other locked. */
	@Override
	public boolean equals(Object other) {
		return other instanceof EngineLock that && this.engine == that.engine && this.name.equals(that.name);
	}

	@Override
	public int hashCode() {
		return System.identityHashCode(this.engine) * 31 + this.name.hashCode();
	}

	@Override
	public String toString() {
		return "DistLock[" + this.name + "]";
	}

}
