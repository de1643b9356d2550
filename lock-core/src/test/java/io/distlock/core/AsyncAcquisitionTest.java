package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.distlock.WorkHold;
import io.distlock.core.LockBackend.Acquisition;

/**
 * Unit-level edges of the non-blocking acquisition, where a stand-in backend times a reply exactly:
 * a cancel that arrives while the backend is taking the lock must not leave the hold behind, and a
 * cancelled wait leaves the backend's queue.
 */
class AsyncAcquisitionTest {

	@Test
	void aHoldWonWhileItsAcquisitionWasCancelledIsReleased() throws Exception {
		CountDownLatch calling = new CountDownLatch(1);
		CountDownLatch answer = new CountDownLatch(1);
		List<String> released = new CopyOnWriteArrayList<>();
		StubBackend backend = new StubBackend() {
			@Override
			public Acquisition acquire(AcquireRequest request) {
				calling.countDown();
				pause(answer);
				return Acquisition.acquired(1, request.lease());
			}

			@Override
			public Release release(ReleaseRequest request) {
				released.add(request.name() + " by " + request.owner());
				return Release.RELEASED;
			}
		};
		BackendLockRegistry engine = new BackendLockRegistry(backend, LockEngineOptions.builder().clientId("c1").build());
		try {
			CompletableFuture<Optional<WorkHold>> wait = engine.tryLockForWorkAsync("x", Duration.ofSeconds(5), null);
			assertThat(calling.await(5, TimeUnit.SECONDS)).isTrue();
			// The backend is taking the lock for it right now; the caller gives up.
			assertThat(wait.cancel(false)).isTrue();
			answer.countDown();
			await().atMost(Duration.ofSeconds(5)).until(() -> released.size() == 1);
			assertThat(engine.heldLocks()).isEmpty();
		}
		finally {
			engine.close();
		}
	}

	@Test
	void aCancelledWaitLeavesTheBackendsQueue() throws Exception {
		HeldElsewhere backend = new HeldElsewhere();
		BackendLockRegistry engine = new BackendLockRegistry(backend, LockEngineOptions.builder().clientId("c1").build());
		try {
			CompletableFuture<Optional<WorkHold>> wait = engine.tryLockForWorkAsync("x", Duration.ofSeconds(60), null);
			await().atMost(Duration.ofSeconds(5)).until(() -> engine.waitingThreads() == 1);
			wait.cancel(false);
			await().atMost(Duration.ofSeconds(5)).until(() -> backend.left.contains("x passing on"));
			await().atMost(Duration.ofSeconds(5)).until(() -> engine.waitingThreads() == 0);
		}
		finally {
			engine.close();
		}
	}

	@Test
	void cancellingTheFutureOfAWaitWithoutEndEndsTheWait() throws Exception {
		HeldElsewhere backend = new HeldElsewhere();
		BackendLockRegistry engine = new BackendLockRegistry(backend, LockEngineOptions.builder().clientId("c1").build());
		try {
			CompletableFuture<WorkHold> wait = engine.lockForWorkAsync("x", null);
			await().atMost(Duration.ofSeconds(5)).until(() -> engine.waitingThreads() == 1);
			// The caller's future is one of its own; its cancel must reach the acquisition.
			wait.cancel(false);
			await().atMost(Duration.ofSeconds(5))
				.until(() -> engine.waitingThreads() == 0 && backend.left.contains("x passing on"));
		}
		finally {
			engine.close();
		}
	}

	@Test
	void stagesThatDependOnTheAcquisitionAreNotCutOffByItsDeadline() throws Exception {
		BackendLockRegistry engine = new BackendLockRegistry(new StubBackend(), LockEngineOptions.builder().clientId("c1").build());
		try {
			// A zero wait still gets 1.1 s for its backend call; a stage chained to it runs after that is over.
			CompletableFuture<Boolean> interrupted = engine.tryLockForWorkAsync("x", Duration.ZERO, null)
				.thenApply(hold -> {
					try {
						Thread.sleep(1500);
						return false;
					}
					catch (InterruptedException ex) {
						return true;
					}
					finally {
						hold.orElseThrow().release();
					}
				});
			assertThat(interrupted.get(10, TimeUnit.SECONDS)).isFalse();
		}
		finally {
			engine.close();
		}
	}

	@Test
	void aWaitWithoutEndOutlastsABackendThatDidNotAnswer() throws Exception {
		AtomicInteger calls = new AtomicInteger();
		StubBackend backend = new StubBackend() {
			@Override
			public Acquisition acquire(AcquireRequest request) {
				if (calls.incrementAndGet() == 1) {
					// Hangs as a client does while it reconnects, until the step's deadline cuts it off.
					try {
						Thread.sleep(10_000);
					}
					catch (InterruptedException ex) {
						throw new IllegalStateException("cut off", ex);
					}
				}
				return Acquisition.acquired(1, request.lease());
			}
		};
		BackendLockRegistry engine = new BackendLockRegistry(backend, LockEngineOptions.builder().clientId("c1").build());
		try {
			WorkHold hold = engine.lockForWorkAsync("x", Duration.ofMillis(200)).get(10, TimeUnit.SECONDS);
			assertThat(calls).as("asked again after the first call was cut off").hasValue(2);
			hold.release();
		}
		finally {
			engine.close();
		}
	}

	/** A lock that another client holds for the whole test; records the attempts that leave its queue. */
	static final class HeldElsewhere extends StubBackend {

		final List<String> left = new CopyOnWriteArrayList<>();

		@Override
		public Acquisition acquire(AcquireRequest request) {
			return Acquisition.heldByOther(Duration.ofSeconds(30), 0);
		}

		@Override
		public void leaveQueue(String name, String owner, String ticket, boolean passOnHandOff) {
			this.left.add(name + (passOnHandOff ? " passing on" : ""));
		}

	}

	private static void pause(CountDownLatch latch) {
		try {
			latch.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
