package io.distlock;

import java.util.List;

/**
 * Hands out distributed locks by name. The entry point of distlock: one registry per client
 * (usually one per application), shared by all threads.
 *
 * <p>Lock handles are cheap and not cached; two handles of the same name share the same hold
 * state in this registry, so a thread may lock through one and unlock through another.
 */
public interface LockRegistry {

	/**
	 * Returns a handle to the lock of the given name. Does not talk to the backend.
	 * @param name the lock's name; not blank
	 * @return a handle to the lock
	 * @throws IllegalArgumentException if the name is null or blank
	 */
	DistLock getLock(String name);

	/**
	 * Returns the holds this registry's threads have at this moment, for diagnostics.
	 * @return a snapshot, possibly empty
	 */
	List<HoldInfo> heldLocks();

}
