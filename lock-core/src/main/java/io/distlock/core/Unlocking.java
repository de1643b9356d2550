package io.distlock.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.LockBackendException;
import io.distlock.LockLostException;
import io.distlock.LostHold;
import io.distlock.core.HoldTable.HoldKey;
import io.distlock.core.LockBackend.HoldRef;
import io.distlock.core.LockBackend.Release;

/**
 * Ending holds: one reentrant level at a time, the last one freeing the lock or leaving it taken
 * for a while ({@code holdAtLeast}); a hold found lost on the way is reported and cleaned up.
 */
final class Unlocking {

	private static final Logger log = LoggerFactory.getLogger(Unlocking.class);

	private final LockBackend backend;

	private final HoldTable holds;

	private final ReleaseWaits waits;

	private final LeaseRenewals renewals;

	Unlocking(LockBackend backend, HoldTable holds, ReleaseWaits waits, LeaseRenewals renewals) {
		this.backend = backend;
		this.holds = holds;
		this.waits = waits;
		this.renewals = renewals;
	}

	/**
	 * Releases one hold level; the last level with a positive {@code keep} does not free the lock
	 * but sets its lease to {@code keep} and stops renewing it, so that nobody else takes it before
	 * that time has passed (a job that must not run twice within a period, however short its run).
	 * @param keep how long the lock stays taken after the last release; zero or negative: freed now
	 */
	void release(LockId id, String owner, Duration keep) {
		// A release must reach the backend whatever the caller's interrupt status (a method that
		// restores the flag, the standard idiom, must not leak its lock); the flag is kept.
		boolean interrupted = Thread.interrupted();
		try {
			releaseUninterruptibly(id, owner, keep);
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private void releaseUninterruptibly(LockId id, String owner, Duration keep) {
		String name = id.name();
		if (LockArguments.isPositive(keep) && !this.backend.leasesExpire()) {
			// Checked before anything changes: the caller still holds the lock and can unlock it plainly.
			throw new UnsupportedOperationException(LockId.capitalized(id.describe()) + " cannot be kept for " + keep
					+ " after its release: holds of " + this.backend.description()
					+ " do not expire on their own; unlock() it instead");
		}
		HoldKey key = this.holds.key(name, id.kind(), owner);
		Hold hold = this.holds.get(key);
		if (hold == null) {
			Hold ranOut = this.holds.takeExpiredLevel(key);
			if (ranOut != null) {
				if (this.holds.expiredOf(key) != ranOut) {
					// Its last level: the owner knows now, and the backend may still have the hold.
					cleanUpLostHold(ranOut);
				}
				throw new LockLostException(ranOut.lost());
			}
			throw notHeld(id, owner);
		}
		int held = hold.count();
		LostHold lost = hold.lost();
		if (lost != null) {
			this.holds.dropOneLevel(key, hold, held);
			if (held == 1) {
				// Also set aside by the watchdog if its explicit lease ran out just now: nothing is left.
				this.holds.forgetExpired(key, hold);
				cleanUpLostHold(hold);
			}
			throw new LockLostException(lost);
		}
		if (held == 1 && !hold.end(Hold.Ending.RELEASING)) {
			// The watchdog found its explicit lease over a moment ago and reports it lost.
			this.holds.forgetExpired(key, hold);
			cleanUpLostHold(hold);
			throw new LockLostException(this.holds.markLost(hold, "its explicit lease ran out before unlock"));
		}
		boolean keeping = held == 1 && LockArguments.isPositive(keep);
		Release result;
		try {
			// Bounded by the lease: past it the hold is gone anyway, and the caller must not hang on a dead backend.
			long now = System.nanoTime();
			Duration within = hold.waitWithin(now, EngineTiming.RELEASE_MIN_WAIT.toNanos());
			result = keeping ? keepFor(hold, keep, within)
					: this.backend.release(new ReleaseRequest(name, owner, held, hold.attemptId, hold.token, within, id.kind(),
							Math.max(0, TimeUnit.NANOSECONDS.toMillis(hold.confirmedNanosLeft(now)))));
		}
		catch (RuntimeException ex) {
			// Whether the release reached the backend is unknown. Renewing on would keep the lock
			// forever if it did not, and block this thread's next acquisition: drop it here, and it
			// expires within its lease.
			this.holds.dropOneLevel(key, hold, held);
			String what = (held == 1) ? "it is no longer renewed and expires within its lease" : "one hold level dropped";
			log.warn("Could not release lock '{}' held by {}: {}; {}", name, owner, this.backend.explain(ex), what);
			throw (ex instanceof LockBackendException) ? ex
					: new LockBackendException(name, "Lock '" + name + "': the release failed ("
							+ this.backend.explain(ex) + "); " + what + ".", ex);
		}
		if (result == Release.RELEASED && !keeping) {
			this.waits.releasedLocally(id.room());
		}
		else if (result == Release.NOT_HELD) {
			// Backends recognise a copy of a release they applied already (a re-send after a
			// reconnect); this answer means the hold is really gone: expired, or the backend lost it.
			lost = this.holds.markLost(hold, hold.watchdog ? "the backend no longer had the hold at unlock"
					: "its explicit lease ran out before unlock");
			this.holds.dropOneLevel(key, hold, held);
			throw new LockLostException(lost);
		}
		this.holds.dropOneLevel(key, hold, held);
	}

	/**
	 * Leaves the hold to expire after {@code keep} instead of freeing it. Runs on the watchdog's
	 * thread, after any renewal already under way, which would otherwise set the longer lease again
	 * after this one; the hold is already marked as releasing, so no later renewal picks it up.
	 * @return {@link Release#RELEASED} if the lease was set, {@link Release#NOT_HELD} if the hold was gone
	 */
	private Release keepFor(Hold hold, Duration keep, Duration within) {
		List<HoldRef> ref = List.of(hold.ref());
		// Below a millisecond a lease of 0 would free the lock without waking anyone.
		Duration lease = (keep.toMillis() < 1) ? Duration.ofMillis(1) : keep;
		boolean kept = this.renewals.serially(() -> this.backend.renew(ref, lease, within).get(0),
				within.plus(EngineTiming.RELEASE_MIN_WAIT));
		return kept ? Release.RELEASED : Release.NOT_HELD;
	}

	private static IllegalMonitorStateException notHeld(LockId id, String owner) {
		String thread = "thread '" + Thread.currentThread().getName() + "' (owner " + owner + ")";
		return new IllegalMonitorStateException(switch (id.kind()) {
			case EXCLUSIVE -> "Cannot unlock lock '" + id.name() + "': " + thread + " does not hold it";
			case READ, WRITE -> "Cannot unlock the " + id.describe() + ": " + thread + " does not hold it";
			case PERMIT -> "Cannot release a permit of " + id.describe() + ": " + thread + " holds none";
		});
	}

	private void cleanUpLostHold(Hold hold) {
		try {
			// The hold may still exist if only the renewal failed (e.g. a network blip); free it for others.
			this.backend.release(
					new ReleaseRequest(hold.name, hold.owner, 1, hold.attemptId, hold.token, EngineTiming.RELEASE_MIN_WAIT,
							hold.kind));
		}
		catch (RuntimeException ex) {
			log.debug("Could not clean up lost hold of lock '{}' by {}", hold.name, hold.owner, ex);
		}
	}

}
