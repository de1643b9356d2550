package io.distlock.core;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A stand-in backend for unit-level edges of the engine, where a test must time a reply or a
 * message exactly. It queues waiters, releases and renews successfully, and reports nothing held;
 * a test overrides what its edge is about.
 */
class StubBackend implements LockBackend {

	@Override
	public boolean queuesWaiters() {
		return true;
	}

	@Override
	public Acquisition acquire(AcquireRequest request) {
		return Acquisition.acquired(1, request.lease());
	}

	@Override
	public Release release(ReleaseRequest request) {
		return Release.RELEASED;
	}

	@Override
	public void leaveQueue(String name, String owner, String ticket, boolean passOnHandOff) {
	}

	@Override
	public List<Boolean> renew(List<HoldRef> holds, Duration lease, Duration within) {
		return holds.stream().map(hold -> true).toList();
	}

	@Override
	public boolean isHeldBy(String name, String owner) {
		return false;
	}

	@Override
	public Duration remainingLease(String name) {
		return Duration.ofSeconds(10);
	}

	@Override
	public AutoCloseable subscribe(String name, String clientId, Consumer<LockNotice> onNotice) {
		return () -> {
		};
	}

	@Override
	public Health health() {
		return new Health(true, Map.of());
	}

	@Override
	public void close() {
	}

}
