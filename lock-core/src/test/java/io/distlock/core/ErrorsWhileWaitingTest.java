package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.distlock.DistLock;
import io.distlock.WorkHold;
import io.distlock.core.LockBackend.Acquisition;

/**
 * An {@code Error} raised while a caller waits for a lock (a StackOverflowError, an
 * OutOfMemoryError, a tool's) reaches the caller as itself, even when the clean-up on the way out
 * fails too, and the wait's bookkeeping is cleaned up: nothing stays in the waiting room, the
 * backend's queue is left, and the lock can be waited for again.
 */
class ErrorsWhileWaitingTest {

	@Test
	void anErrorThrownWhileALockWaitsReachesTheBlockingCallerAsItself() throws Exception {
		FailsWhileWaiting backend = new FailsWhileWaiting();
		BackendLockRegistry engine = new BackendLockRegistry(backend, LockEngineOptions.builder().clientId("c1").build());
		try {
			DistLock lock = engine.getLock("x");
			Throwable thrown = catchThrowable(() -> lock.tryLock(Duration.ofSeconds(10)));
			assertThat(thrown).isSameAs(backend.whileWaiting);
			assertThat(thrown.getSuppressed()).containsExactly(backend.whileLeaving);
			assertTheWaitWasCleanedUp(engine, backend);
			assertThat(lock.tryLock(Duration.ofSeconds(10))).as("waited for again").isTrue();
			lock.unlock();
		}
		finally {
			engine.close();
		}
	}

	@Test
	void anErrorThrownWhileALockWaitsReachesTheAsyncCallerAsItself() throws Exception {
		FailsWhileWaiting backend = new FailsWhileWaiting();
		BackendLockRegistry engine = new BackendLockRegistry(backend, LockEngineOptions.builder().clientId("c1").build());
		try {
			Throwable thrown = catchThrowable(
					() -> engine.tryLockForWorkAsync("x", Duration.ofSeconds(10), null).get(10, TimeUnit.SECONDS));
			assertThat(thrown).isInstanceOf(ExecutionException.class);
			assertThat(thrown.getCause()).isSameAs(backend.whileWaiting);
			assertThat(thrown.getCause().getSuppressed()).containsExactly(backend.whileLeaving);
			assertTheWaitWasCleanedUp(engine, backend);
			Optional<WorkHold> again = engine.tryLockForWorkAsync("x", Duration.ofSeconds(10), null)
				.get(10, TimeUnit.SECONDS);
			assertThat(again).as("waited for again").isPresent();
			again.get().release();
		}
		finally {
			engine.close();
		}
	}

	private static void assertTheWaitWasCleanedUp(BackendLockRegistry engine, FailsWhileWaiting backend) {
		await().atMost(Duration.ofSeconds(5)).until(() -> engine.waitingThreads() == 0);
		assertThat(backend.left).containsExactly("x passing on");
	}

	/** An Error of the test's own, so that no real one is mistaken for it. */
	static final class InjectedError extends Error {

		InjectedError(String message) {
			super(message);
		}

	}

	/**
	 * The lock is another client's at the first call; the call a waiter makes when its turn comes
	 * throws an Error, and so does leaving the queue after it. Later calls take the lock.
	 */
	static final class FailsWhileWaiting extends StubBackend {

		final InjectedError whileWaiting = new InjectedError("thrown while waiting");

		final InjectedError whileLeaving = new InjectedError("thrown while leaving the queue");

		final List<String> left = new CopyOnWriteArrayList<>();

		private int calls;

		@Override
		public synchronized Acquisition acquire(AcquireRequest request) {
			return switch (++this.calls) {
				case 1 -> Acquisition.heldByOther(Duration.ofSeconds(30), 0);
				case 2 -> throw this.whileWaiting;
				default -> Acquisition.acquired(1, request.lease());
			};
		}

		@Override
		public void leaveQueue(String name, String owner, String ticket, boolean passOnHandOff) {
			this.left.add(name + (passOnHandOff ? " passing on" : ""));
			if (this.left.size() == 1) {
				throw this.whileLeaving;
			}
		}

	}

}
