package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.core.LockBackend.Acquisition;

/**
 * Unit-level edge (a stand-in backend times the reply exactly): an acquisition whose answer reaches
 * the caller only after the lease it gave has run out (the client's JVM was frozen between the
 * backend taking the lock for it and the reply being read) must not be reported as acquired without
 * asking again: the hold may have expired and the lock gone to another owner meanwhile.
 */
class LateAcquisitionReplyTest {

	@Test
	void aReplyThatArrivesAfterItsLeaseIsNotTrustedWhenTheLockIsSomeoneElsesNow() throws Exception {
		FakeBackend backend = new FakeBackend(Acquisition.heldByOther(Duration.ofSeconds(10), 7));
		BackendLockRegistry engine = new BackendLockRegistry(backend, LockEngineOptions.builder().clientId("c1").build());
		try {
			DistLock lock = engine.getLock("x");
			assertThat(lock.tryLock(Duration.ofMillis(300), null)).as("acquired on a lapsed reply").isFalse();
			assertThat(backend.calls.get()).as("the backend was asked again").isGreaterThanOrEqualTo(2);
		}
		finally {
			engine.close();
		}
	}

	@Test
	void aReplyThatArrivesAfterItsLeaseIsConfirmedWhenTheHoldIsStillThere() throws Exception {
		FakeBackend backend = new FakeBackend(Acquisition.acquired(5, Duration.ofSeconds(30)));
		BackendLockRegistry engine = new BackendLockRegistry(backend, LockEngineOptions.builder().clientId("c1").build());
		try {
			DistLock lock = engine.getLock("x");
			assertThat(lock.tryLock(Duration.ofMillis(300), null)).isTrue();
			assertThat(lock.getFencingToken()).isEqualTo(5);
			assertThat(backend.calls.get()).isEqualTo(2);
		}
		finally {
			engine.close();
		}
	}

	@Test
	void aBackendThatAlwaysAnswersAfterTheLeaseFailsTheAcquisitionInsteadOfAskingForEver() {
		FakeBackend backend = new FakeBackend(null);
		BackendLockRegistry engine = new BackendLockRegistry(backend, LockEngineOptions.builder().clientId("c1").build());
		try {
			DistLock lock = engine.getLock("x");
			assertThatThrownBy(() -> lock.tryLock(Duration.ofSeconds(5), null)).isInstanceOf(LockBackendException.class)
				.hasMessageContaining("only after the lease");
			assertThat(backend.calls.get()).isEqualTo(3);
			assertThat(lock.getHoldCount()).isZero();
		}
		finally {
			engine.close();
		}
	}

	/** Takes the lock at once, but its first reply is read only after the lease it gave has run out. */
	static final class FakeBackend extends StubBackend {

		final AtomicInteger calls = new AtomicInteger();

		/** The answer to every call after the first; {@code null}: every call answers late. */
		final Acquisition later;

		FakeBackend(Acquisition later) {
			this.later = later;
		}

		@Override
		public Acquisition acquire(AcquireRequest request) {
			if (this.calls.incrementAndGet() > 1 && this.later != null) {
				return this.later;
			}
			// Taken for this owner with a lease of 20 ms, but the reply is read only 100 ms later.
			try {
				Thread.sleep(100);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return Acquisition.acquired(5, Duration.ofMillis(20));
		}

	}

}
