package io.distlock.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

import io.distlock.WorkHold;

/**
 * A {@link WorkHold} of a {@link LockEngine}: the engine's hold under an owner of its own, released
 * once, by whichever thread ends the work.
 */
final class EngineWorkHold implements WorkHold {

	private final FencingTokens tokens;

	private final Unlocking unlocking;

	private final ExecutorService releases;

	private final ClosedState closed;

	private final LockBackend backend;

	private final LockId id;

	private final String name;

	private final String owner;

	private final AtomicBoolean released = new AtomicBoolean();

	/**
	 * What the work holds of one engine work with, built once by the engine.
	 * @param releases where holds are released asynchronously: the engine's pool for releases
	 */
	record Parts(FencingTokens tokens, Unlocking unlocking, ExecutorService releases, ClosedState closed,
			LockBackend backend) {

		EngineWorkHold hold(LockId id, String owner) {
			return new EngineWorkHold(this, id, owner);
		}

	}

	private EngineWorkHold(Parts parts, LockId id, String owner) {
		this.tokens = parts.tokens();
		this.unlocking = parts.unlocking();
		this.releases = parts.releases();
		this.closed = parts.closed();
		this.backend = parts.backend();
		this.id = id;
		this.name = id.name();
		this.owner = owner;
	}

	@Override
	public String lockName() {
		return this.name;
	}

	@Override
	public long fencingToken() {
		return this.tokens.fencingToken(this.id, this.owner);
	}

	@Override
	public void release() {
		// Completion and cancellation can race to end the work: the hold is released once.
		if (this.released.compareAndSet(false, true)) {
			this.unlocking.release(this.id, this.owner, Duration.ZERO);
		}
	}

	@Override
	public CompletableFuture<Void> releaseAsync() {
		try {
			return CompletableFuture.runAsync(this::release, this.releases);
		}
		catch (RejectedExecutionException closed) {
			// The registry closed: its backend is gone and the hold expires within its lease.
			return CompletableFuture.failedFuture(this.closed.exception(this.name));
		}
	}

	@Override
	public void releaseKeepingFor(Duration keep) {
		if (LockArguments.isPositive(keep) && !this.backend.leasesExpire()) {
			// Refused before it counts as released, so that release() still frees the lock.
			throw new UnsupportedOperationException("Lock '" + this.name + "' cannot be kept for " + keep
					+ " after its release: its holds do not expire on their own; release() it instead");
		}
		if (this.released.compareAndSet(false, true)) {
			this.unlocking.release(this.id, this.owner, keep);
		}
	}

	@Override
	public String toString() {
		return "WorkHold[" + ((this.id.kind() == io.distlock.HoldKind.EXCLUSIVE) ? this.name : this.id.describe()) + ", "
				+ this.owner + "]";
	}

}
