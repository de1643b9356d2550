package io.distlock.core;

import io.distlock.DistLock;
import io.distlock.DistReadWriteLock;
import io.distlock.HoldKind;

/**
 * A {@link DistReadWriteLock} of a {@link LockEngine}: two {@link EngineLock}s of one name, kinds
 * {@link HoldKind#READ} and {@link HoldKind#WRITE}. The engine does the rest: a read hold and a
 * write hold of one owner are two holds in its table, waiting readers and writers share one room,
 * and an upgrade is refused from the table before anything is sent.
 */
final class EngineReadWriteLock implements DistReadWriteLock {

	private final LockEngine engine;

	private final String name;

	private final EngineLock read;

	private final EngineLock write;

	EngineReadWriteLock(LockEngine engine, String name) {
		this.engine = engine;
		this.name = name;
		this.read = new EngineLock(engine, new LockId(name, HoldKind.READ, 0));
		this.write = new EngineLock(engine, new LockId(name, HoldKind.WRITE, 0));
	}

	@Override
	public String getName() {
		return this.name;
	}

	@Override
	public DistLock readLock() {
		return this.read;
	}

	@Override
	public DistLock writeLock() {
		return this.write;
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof EngineReadWriteLock that && this.engine == that.engine && this.name.equals(that.name);
	}

	@Override
	public int hashCode() {
		return System.identityHashCode(this.engine) * 31 + this.name.hashCode();
	}

	@Override
	public String toString() {
		return "DistReadWriteLock[" + this.name + "]";
	}

}
