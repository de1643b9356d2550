package io.distlock;

import java.util.List;

/**
 * Told about events of a registry's holds. Called on a thread of the registry's own, one event at a
 * time in the order they happened, shortly after the registry noticed them (the owner's
 * {@code unlock()} may throw {@link LockLostException} first); a slow listener delays only other
 * listeners, never renewals.
 */
@FunctionalInterface
public interface LockListener {

	/**
	 * A hold was lost while its owner still held it: the critical section may no longer be
	 * exclusive. Typical reactions: abort the work, or rely on the fencing token being rejected.
	 * @param lost what was lost and why
	 */
	void holdLost(LostHold lost);

	/**
	 * The watchdog could not reach the backend to renew these holds. They are not lost yet: the
	 * watchdog retries at its next tick, and reports them lost only once their lease has run out.
	 * @param lockNames the locks it tried to renew
	 * @param cause what the backend said
	 */
	default void renewalFailed(List<String> lockNames, Throwable cause) {
	}

}
