package io.distlock.core;

import java.time.Duration;

/**
 * What {@link LockBackend#acquire} is asked: one owner's acquisition or re-entry of one lock, and
 * whether to queue for it if it is taken.
 * @param name the lock's name
 * @param owner the owner id
 * @param heldCount the hold count the owner has now (0 for a first acquisition)
 * @param lease how long the lock stays held without renewal
 * @param queueFor how long the owner stays queued without calling again; zero: do not queue
 * @param ticket names this waiting attempt in the hand-off message, so that a message arriving late is
 * not taken by a later attempt of the same owner; a hold handed to the attempt has its ticket as its
 * {@link LockBackend.Acquisition#attemptId()}; or {@code null}
 */
public record AcquireRequest(String name, String owner, int heldCount, Duration lease, Duration queueFor,
		String ticket) {

	/**
	 * @param name the lock's name
	 * @param owner the owner id
	 * @param heldCount the hold count the owner has now (0 for a first acquisition)
	 * @param lease how long the lock stays held without renewal
	 * @return a request that does not queue and names no attempt
	 */
	public static AcquireRequest of(String name, String owner, int heldCount, Duration lease) {
		return new AcquireRequest(name, owner, heldCount, lease, Duration.ZERO, null);
	}

}
