package io.distlock.core;

import java.time.Duration;

import io.distlock.HoldKind;

import io.distlock.core.LockBackend.Acquisition;

/**
 * What {@link LockBackend#release} is asked: one hold of one lock to give up.
 * @param name the lock's name
 * @param owner the owner id
 * @param heldCount the hold count the owner has before this release
 * @param attemptId the {@link Acquisition#attemptId()} of the acquisition being released, or {@code null}
 * for whatever hold the owner has: only the hold it names is released, as a release that reaches a
 * server late must not free the hold the same owner took after it (Redlock, where one node may apply a
 * release after the next acquisition)
 * @param token the hold's fencing token, {@link Acquisition#NO_TOKEN} or {@link Acquisition#TOKEN_ON_REQUEST}
 * @param within how long the caller can wait for the answer; {@code null}: the backend's own timeout. A
 * backend that cannot bound its calls may take longer.
 * @param kind what hold is released
 * @param leaseLeftMillis how long the backend is known to keep the hold from this request on, in ms (the
 * lease it last confirmed, less the time since); 0 when not known. A backend may keep something of a
 * released hold that long without adding to what the hold itself took (Redis's release marker).
 */
public record ReleaseRequest(String name, String owner, int heldCount, String attemptId, long token,
		Duration within, HoldKind kind, long leaseLeftMillis) {

	/**
	 * A release without what the hold has left of its lease.
	 * @param name the lock's name
	 * @param owner the owner id
	 * @param heldCount the hold count before this release
	 * @param attemptId the acquisition's attempt id, or {@code null}
	 * @param token the hold's fencing token
	 * @param within how long the caller can wait, or {@code null}
	 * @param kind what hold is released
	 */
	public ReleaseRequest(String name, String owner, int heldCount, String attemptId, long token, Duration within,
			HoldKind kind) {
		this(name, owner, heldCount, attemptId, token, within, kind, 0);
	}

	/**
	 * A release of an exclusive lock's hold: the form before holds had kinds.
	 * @param name the lock's name
	 * @param owner the owner id
	 * @param heldCount the hold count before this release
	 * @param attemptId the acquisition's attempt id, or {@code null}
	 * @param token the hold's fencing token
	 * @param within how long the caller can wait, or {@code null}
	 */
	public ReleaseRequest(String name, String owner, int heldCount, String attemptId, long token, Duration within) {
		this(name, owner, heldCount, attemptId, token, within, HoldKind.EXCLUSIVE, 0);
	}

	/**
	 * @param name the lock's name
	 * @param owner the owner id
	 * @param heldCount the hold count the owner has before this release
	 * @return a request for whatever hold the owner has, without a token, within the backend's own timeout
	 */
	public static ReleaseRequest of(String name, String owner, int heldCount) {
		return new ReleaseRequest(name, owner, heldCount, null, Acquisition.NO_TOKEN, null);
	}

}
