package io.distlock;

import java.time.Instant;

/**
 * A snapshot of one hold of this client, for diagnostics.
 *
 * @param lockName the lock's name
 * @param ownerId the owner id (client id and thread id)
 * @param threadName the owning thread's name at acquisition
 * @param holdCount reentrant acquisitions not yet released
 * @param fencingToken the hold's fencing token; -1 if none was issued: the backend offers none (Redlock),
 * or issues one only when the holder first asks (Redis, Cluster, the table lock) and it has not asked
 * @param since when the hold was first acquired
 * @param watchdog whether the watchdog renews it
 * @param lost whether the hold is known to be lost
 * @param origin the code that acquired it (e.g. {@code OrderService.ship(Order)}), or {@code null}
 * @param renewals how many times the watchdog has renewed it
 * @param logicalName the logical name the acquiring code gave (e.g. the annotation's {@code name}),
 * or {@code null}
 * @param kind what the hold is: an exclusive lock's, a read or write hold, or a semaphore's permit
 */
public record HoldInfo(String lockName, String ownerId, String threadName, int holdCount, long fencingToken,
		Instant since, boolean watchdog, boolean lost, String origin, long renewals, String logicalName,
		HoldKind kind) {

	/**
	 * A hold of an exclusive lock: the form before holds had kinds.
	 * @param lockName the lock's name
	 * @param ownerId the owner id
	 * @param threadName the owning thread's name
	 * @param holdCount reentrant acquisitions not yet released
	 * @param fencingToken the fencing token, or -1
	 * @param since when the hold was first acquired
	 * @param watchdog whether the watchdog renews it
	 * @param lost whether it is known lost
	 * @param origin the acquiring code, or {@code null}
	 * @param renewals the watchdog's renewals of it
	 * @param logicalName the logical name, or {@code null}
	 */
	public HoldInfo(String lockName, String ownerId, String threadName, int holdCount, long fencingToken,
			Instant since, boolean watchdog, boolean lost, String origin, long renewals, String logicalName) {
		this(lockName, ownerId, threadName, holdCount, fencingToken, since, watchdog, lost, origin, renewals,
				logicalName, HoldKind.EXCLUSIVE);
	}

}
