package io.distlock.core;

import java.time.Duration;

import io.distlock.HoldKind;

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
 * @param kind what hold is asked for; a backend is only asked for the kinds it
 * {@linkplain LockBackend#supportedKinds() supports}
 * @param permits for a {@link HoldKind#PERMIT}, the semaphore's permits as the caller declares them;
 * otherwise 0
 */
public record AcquireRequest(String name, String owner, int heldCount, Duration lease, Duration queueFor,
		String ticket, HoldKind kind, int permits) {

	/**
	 * A request for an exclusive lock: the form before holds had kinds.
	 * @param name the lock's name
	 * @param owner the owner id
	 * @param heldCount the hold count the owner has now
	 * @param lease how long the lock stays held without renewal
	 * @param queueFor how long the owner stays queued without calling again
	 * @param ticket the waiting attempt's ticket, or {@code null}
	 */
	public AcquireRequest(String name, String owner, int heldCount, Duration lease, Duration queueFor,
			String ticket) {
		this(name, owner, heldCount, lease, queueFor, ticket, HoldKind.EXCLUSIVE, 0);
	}

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
