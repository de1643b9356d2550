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
 */
public record LostHold(String lockName, String ownerId, long fencingToken, Instant detectedAt, String reason) {
}
