package io.distlock.core;

import io.distlock.HoldKind;
import io.distlock.LockLostException;
import io.distlock.core.LockBackend.Acquisition;

/**
 * The fencing tokens of this client's holds: a hold's token is issued on the first request for it
 * (most holders never ask), and only while the backend still has the hold.
 */
final class FencingTokens {

	private final LockBackend backend;

	private final HoldTable holds;

	FencingTokens(LockBackend backend, HoldTable holds) {
		this.backend = backend;
		this.holds = holds;
	}

	/**
	 * @return the hold's fencing token, asked of the backend the first time
	 * @throws IllegalMonitorStateException if the owner does not hold the lock
	 * @throws UnsupportedOperationException if the backend issues no tokens
	 */
	long fencingToken(LockId id, String owner) {
		String name = id.name();
		Hold hold = this.holds.get(this.holds.key(name, id.kind(), owner));
		if (hold == null) {
			throw new IllegalMonitorStateException("No fencing token: thread '" + Thread.currentThread().getName()
					+ "' does not hold " + id.describe());
		}
		if (hold.token == Acquisition.NO_TOKEN) {
			throw new UnsupportedOperationException("Lock '" + name + "' has no fencing token: its backend cannot "
					+ "issue tokens that are guaranteed to grow (Redlock's masters count independently and forget on "
					+ "restart). Use a single Redis or Cluster lock where the protected resource needs tokens.");
		}
		if (hold.token == Acquisition.TOKEN_ON_REQUEST) {
			hold.token = issueToken(hold);
		}
		return hold.token;
	}

	/** The first request for a hold's token: the backend issues it only if the hold is still there. */
	private long issueToken(Hold hold) {
		if (hold.lost() != null) {
			throw new LockLostException(hold.lost());
		}
		long token;
		try {
			token = (hold.kind == HoldKind.EXCLUSIVE) ? this.backend.issueToken(hold.name, hold.owner, hold.attemptId)
					: this.backend.issueToken(hold.name, hold.kind, hold.owner, hold.attemptId);
		}
		catch (RuntimeException ex) {
			throw BackendCalls.backendFailure(this.backend, hold.name, "no fencing token could be issued: ", ex);
		}
		if (token == Acquisition.NO_TOKEN) {
			// The hold is gone: a token now might be above the next holder's, and must not be used.
			throw new LockLostException(this.holds.markLost(hold, "the backend no longer had the hold when its fencing token was asked for"));
		}
		return token;
	}

}
