package io.distlock;

import java.util.concurrent.locks.ReadWriteLock;

/**
 * A distributed read-write lock: any number of owners, on any instances, hold its read lock at
 * once while nobody holds its write lock; a write hold excludes every other owner's read and write
 * holds.
 *
 * <ul>
 * <li>Both sides are reentrant for their owner. The write holder may take the read lock too
 * (downgrade); a reader that asks for the write lock fails at once with
 * {@link LockUpgradeException} instead of waiting forever.</li>
 * <li>Fair: once a writer waits, readers that arrive after it wait behind it.</li>
 * <li>Every reader and writer has a lease of its own, renewed by the watchdog; a crashed reader's
 * share ends with its own lease while the other readers hold on.</li>
 * <li>A write hold's fencing token is above every earlier write hold's; a read hold's is above
 * every earlier write hold's.</li>
 * </ul>
 *
 * <p>Each side's {@link DistLock#getName()} is the read-write lock's name; two handles of one side
 * are equal, the read and the write side are not. A read lock's {@link DistLock#remainingLease()} and
 * {@link DistLock#isLocked()} are about every reader's hold: the longest lease among them, and whether
 * there is any.
 *
 * <p>Obtained from {@link LockRegistry#getReadWriteLock(String)}; a read-write lock named
 * {@code x} and the lock {@code getLock("x")} are unrelated.
 */
public interface DistReadWriteLock extends ReadWriteLock {

	/** @return the lock's name */
	String getName();

	/** @return the read side: shared among readers, excluded by a writer */
	@Override
	DistLock readLock();

	/** @return the write side: exclusive */
	@Override
	DistLock writeLock();

}
