package io.distlock.testing;

import java.time.Duration;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend;
import io.distlock.core.LockNotice;
import io.distlock.core.ReleaseRequest;

/**
 * A backend that hands every call to another one: tests extend it and override only the calls
 * they hold back, stall or count, so that every other call (the defaults included) behaves as the
 * real backend's.
 */
public class ForwardingLockBackend implements LockBackend {

	private final LockBackend backend;

	/** @param backend the backend every call goes to */
	public ForwardingLockBackend(LockBackend backend) {
		this.backend = backend;
	}

	/** @return the backend every call goes to */
	protected LockBackend backend() {
		return this.backend;
	}

	@Override
	public String description() {
		return this.backend.description();
	}

	@Override
	public String explain(RuntimeException failure) {
		return this.backend.explain(failure);
	}

	@Override
	public String checkName(String name) {
		return this.backend.checkName(name);
	}

	@Override
	public boolean leasesExpire() {
		return this.backend.leasesExpire();
	}

	@Override
	public boolean issuesFencingTokens() {
		return this.backend.issuesFencingTokens();
	}

	@Override
	public boolean queuesWaiters() {
		return this.backend.queuesWaiters();
	}

	@Override
	public boolean confirmsHandOffs() {
		return this.backend.confirmsHandOffs();
	}

	@Override
	public Acquisition acquire(AcquireRequest request) {
		return this.backend.acquire(request);
	}

	@Override
	public void leaveQueue(String name, String owner, String ticket, boolean passOnHandOff) {
		this.backend.leaveQueue(name, owner, ticket, passOnHandOff);
	}

	@Override
	public Release release(ReleaseRequest request) {
		return this.backend.release(request);
	}

	@Override
	public long issueToken(String name, String owner, String attemptId) {
		return this.backend.issueToken(name, owner, attemptId);
	}

	@Override
	public List<Boolean> renew(List<HoldRef> holds, Duration lease, Duration within) {
		return this.backend.renew(holds, lease, within);
	}

	@Override
	public boolean isHeldBy(String name, String owner) {
		return this.backend.isHeldBy(name, owner);
	}

	@Override
	public Duration remainingLease(String name) {
		return this.backend.remainingLease(name);
	}

	@Override
	public AutoCloseable subscribe(String name, String clientId, Consumer<LockNotice> onNotice) {
		return this.backend.subscribe(name, clientId, onNotice);
	}

	@Override
	public Duration renewalValidity(Duration lease) {
		return this.backend.renewalValidity(lease);
	}

	@Override
	public void onHoldsLost(BiConsumer<List<HoldRef>, String> lost) {
		this.backend.onHoldsLost(lost);
	}

	@Override
	public List<String> serverWarnings() {
		return this.backend.serverWarnings();
	}

	@Override
	public Health health() {
		return this.backend.health();
	}

	@Override
	public void close() {
		this.backend.close();
	}

}
