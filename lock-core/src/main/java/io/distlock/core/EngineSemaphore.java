package io.distlock.core;

import java.time.Duration;

import io.distlock.DistLock;
import io.distlock.DistSemaphore;
import io.distlock.HoldKind;

/**
 * A {@link DistSemaphore} of a {@link LockEngine}: a permit is an engine hold of kind
 * {@link HoldKind#PERMIT}, so it is reentrant per owner, renewed by the watchdog, handed over in the
 * backend's fair queue and reported when lost, exactly as a lock's hold is.
 */
final class EngineSemaphore implements DistSemaphore {

	private final LockEngine engine;

	private final String name;

	private final int permits;

	private final EngineLock permit;

	EngineSemaphore(LockEngine engine, String name, int permits) {
		this.engine = engine;
		this.name = name;
		this.permits = permits;
		this.permit = new EngineLock(engine, new LockId(name, HoldKind.PERMIT, permits));
	}

	@Override
	public String getName() {
		return this.name;
	}

	@Override
	public int getPermits() {
		return this.permits;
	}

	@Override
	public boolean tryAcquire(Duration waitTime) throws InterruptedException {
		return this.permit.tryLock(waitTime, null);
	}

	@Override
	public boolean tryAcquire(Duration waitTime, Duration leaseTime) throws InterruptedException {
		return this.permit.tryLock(waitTime, leaseTime);
	}

	@Override
	public void acquire() {
		this.permit.lock();
	}

	@Override
	public void acquireInterruptibly() throws InterruptedException {
		this.permit.lockInterruptibly();
	}

	@Override
	public void release() {
		this.permit.unlock();
	}

	@Override
	public int availablePermits() {
		return this.engine.availablePermits(this.permit.id());
	}

	@Override
	public boolean isHeldByCurrentThread() {
		return this.permit.isHeldByCurrentThread();
	}

	@Override
	public int getHoldCount() {
		return this.permit.getHoldCount();
	}

	@Override
	public long getFencingToken() {
		return this.permit.getFencingToken();
	}

	@Override
	public DistLock asLock() {
		return this.permit;
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof EngineSemaphore that && this.permit.equals(that.permit);
	}

	@Override
	public int hashCode() {
		return this.permit.hashCode();
	}

	@Override
	public String toString() {
		return "DistSemaphore[" + this.name + ", " + this.permits + " permits]";
	}

}
