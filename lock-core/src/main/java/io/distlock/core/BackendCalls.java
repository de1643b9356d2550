package io.distlock.core;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.HoldKind;
import io.distlock.LockBackendException;

/**
 * The two backend calls every part of the engine makes the same way: leaving a wait queue, which
 * never fails its caller, and turning a failed call into the {@link LockBackendException} the
 * caller sees.
 */
final class BackendCalls {

	private static final Logger log = LoggerFactory.getLogger(BackendCalls.class);

	private BackendCalls() {
	}

	/**
	 * Sends a waiting attempt out of the backend's queue. It never fails the caller and keeps its
	 * interrupt status: a place left behind lapses within its place time by itself.
	 */
	static void leaveQueue(LockBackend backend, LockId id, String owner, String ticket, boolean passOnHandOff) {
		boolean interrupted = Thread.interrupted();
		try {
			if (id.kind() == HoldKind.EXCLUSIVE) {
				// Exclusive locks keep the form every backend and wrapper implements (so everywhere in the engine).
				backend.leaveQueue(id.name(), owner, ticket, passOnHandOff);
			}
			else {
				backend.leaveQueue(id.name(), id.kind(), owner, ticket, passOnHandOff);
			}
		}
		catch (RuntimeException ex) {
			// The place lapses by itself; a hold handed over meanwhile expires after its provisional lease.
			log.debug("Could not leave the queue of {} for {}", id.describe(), owner, ex);
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * @param doing what failed, as the start of the message after the lock's name, or empty
	 * @return a backend call's failure as the caller sees it: naming the lock and the real cause
	 */
	static LockBackendException backendFailure(LockBackend backend, String name, String doing, RuntimeException ex) {
		return (ex instanceof LockBackendException failure) ? failure
				: new LockBackendException(name, "Lock '" + name + "': " + doing + backend.explain(ex), ex);
	}

}
