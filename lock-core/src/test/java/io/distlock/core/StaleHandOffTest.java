package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import io.distlock.DistLock;

/**
 * Unit-level edge (a stand-in backend times the message exactly): a hand-off made before the
 * attempt's last refusing call has lapsed (that call found the lock someone else's and queued the
 * attempt again), even when its message arrives after that call started; taking it up would be a
 * second holder.
 */
class StaleHandOffTest {

	@Test
	void aGrantIssuedBeforeTheLastRefusingCallIsNotTakenUp() throws Exception {
		FakeBackend backend = new FakeBackend();
		BackendLockRegistry engine = new BackendLockRegistry(backend, LockEngineOptions.builder().clientId("c1").build());
		try {
			DistLock lock = engine.getLock("x");
			boolean acquired = lock.tryLock(Duration.ofSeconds(2), null);
			assertThat(backend.sent).as("the stale hand-off was announced").isTrue();
			// The backend never gave this owner the lock (someone else holds it): acquiring is a second holder.
			assertThat(acquired).isFalse();
		}
		finally {
			engine.close();
		}
	}

	/** Announces a stale hand-off to the attempt while its call finds the lock someone else's. */
	static final class FakeBackend extends StubBackend {

		final AtomicBoolean sent = new AtomicBoolean();

		volatile Consumer<LockNotice> messages;

		@Override
		public Acquisition acquire(AcquireRequest request) {
			Consumer<LockNotice> messages = this.messages;
			if (messages != null && this.sent.compareAndSet(false, true)) {
				// The message of an earlier hand-off (token 5) to this attempt arrives while this call is in
				// flight; in Redis that hand-off ran out and another owner holds the lock now, so this very
				// call finds it taken and re-queues the attempt.
				messages.accept(new LockNotice.Granted(5, request.owner(), request.ticket()));
			}
			// Redis has handed out token 7 since (to the owner that holds the lock now).
			return Acquisition.heldByOther(Duration.ofSeconds(10), 7);
		}

		@Override
		public Release release(ReleaseRequest request) {
			return Release.NOT_HELD;
		}

		@Override
		public List<Boolean> renew(List<HoldRef> holds, Duration lease, Duration within) {
			return holds.stream().map(hold -> false).toList();
		}

		@Override
		public AutoCloseable subscribe(String name, String clientId, Consumer<LockNotice> onNotice) {
			this.messages = onNotice;
			return () -> this.messages = null;
		}

	}

}
