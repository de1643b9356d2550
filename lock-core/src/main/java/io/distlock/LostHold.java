package io.distlock;

import java.time.Instant;

/**
 * A hold that the backend no longer has although its owner never released it.
 *
 * @param lockName the lock's name
 * @param ownerId the owner id that held it
 * @param fencingToken the lost hold's fencing token; -1 if none was issued (see {@link HoldInfo})
 * @param detectedAt when this client noticed
 * @param reason what happened, in words fit for a log
 * @param kind what the hold was: an exclusive lock's, a read or write hold, or a semaphore's permit
 */
public record LostHold(String lockName, String ownerId, long fencingToken, Instant detectedAt, String reason,
		HoldKind kind) {

	/**
	 * A lost hold of an exclusive lock: the form before holds had kinds.
	 * @param lockName the lock's name
	 * @param ownerId the owner id that held it
	 * @param fencingToken the lost hold's fencing token, or -1
	 * @param detectedAt when this client noticed
	 * @param reason what happened
	 */
	public LostHold(String lockName, String ownerId, long fencingToken, Instant detectedAt, String reason) {
		this(lockName, ownerId, fencingToken, detectedAt, reason, HoldKind.EXCLUSIVE);
	}

}
