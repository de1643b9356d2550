package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.distlock.DistLock;
import io.distlock.core.AsyncAcquisitionTest.HeldElsewhere;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;

/**
 * An Error thrown where a waiting thread parks reaches the caller as itself. BlockHound throws one
 * from every park of the threads it watches, as it did on CI's event loop, where the wait's own
 * lock was left half-taken and the caller got an unrelated IllegalMonitorStateException. Runs in a
 * JVM of its own (see the module's pom): BlockHound stays installed for the JVM's life.
 */
class ErrorWhileParkedBlockHoundTest {

	private static final String WATCHED = "distlock-test-watched";

	@BeforeAll
	static void watchOneThread() {
		BlockHound.builder()
			.loadIntegrations()
			.nonBlockingThreadPredicate(ignored -> thread -> thread.getName().startsWith(WATCHED))
			.install();
	}

	@Test
	void anErrorThrownWhereAWaiterParksReachesTheCallerAsItself() throws Exception {
		HeldElsewhere backend = new HeldElsewhere();
		BackendLockRegistry engine = new BackendLockRegistry(backend, LockEngineOptions.builder().clientId("c1").build());
		try {
			DistLock lock = engine.getLock("x");
			CompletableFuture<Throwable> thrown = new CompletableFuture<>();
			Thread watched = new Thread(() -> {
				try {
					thrown.complete(lock.tryLock(Duration.ofSeconds(10)) ? null : new AssertionError("timed out"));
				}
				catch (Throwable ex) {
					thrown.complete(ex);
				}
			}, WATCHED);
			watched.start();
			assertThat(thrown.get(30, TimeUnit.SECONDS)).isInstanceOf(BlockingOperationError.class);
			await().atMost(Duration.ofSeconds(5)).until(() -> engine.waitingThreads() == 0);
			// The room's lock is whole: a thread that may park waits there, and times out, as usual.
			assertThat(lock.tryLock(Duration.ofMillis(200))).isFalse();
			assertThat(engine.waitingThreads()).isZero();
		}
		finally {
			engine.close();
		}
	}

	/**
	 * Leaving waits for the room's guard, which another thread may hold (a wake-up runs under it).
	 * That wait must not park in Java code: an Error raised there would leave the waiter counted in
	 * its room for good, and on JDK 17 leave the guard's own queue with a node nobody wakes.
	 */
	@Test
	void aWatchedWaiterLeavesItsRoomWhileAnotherThreadIsInsideIt() throws Exception {
		ReleaseWaits waits = new ReleaseWaits(new HeldElsewhere(), "c1");
		LockId id = LockId.exclusive("x");
		AtomicBoolean holdOn = new AtomicBoolean(true);
		CountDownLatch inside = new CountDownLatch(1);
		CountDownLatch letGo = new CountDownLatch(1);
		Waiter busy = waits.enter(id, "c1:1", "a", () -> {
			// The first wake-up (the subscriber's or the waker's) stays inside the room until let go.
			if (holdOn.getAndSet(false)) {
				inside.countDown();
				awaitQuietly(letGo);
			}
		});
		Waiter leaving = waits.enter(id, "c1:2", "b");
		new Thread(busy.room::signal, "distlock-test-waker").start();
		assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();

		CompletableFuture<Throwable> left = new CompletableFuture<>();
		Thread watched = new Thread(() -> {
			try {
				waits.leave(leaving);
				left.complete(null);
			}
			catch (Throwable ex) {
				left.complete(ex);
			}
		}, WATCHED);
		watched.start();
		await().atMost(Duration.ofSeconds(30)).until(() -> left.isDone() || blockedIn(watched, "remove"));
		letGo.countDown();
		assertThat(left.get(30, TimeUnit.SECONDS)).isNull();
		assertThat(waits.waitingThreads()).isEqualTo(1);
		waits.leave(busy);
		assertThat(waits.waitingThreads()).isZero();
		waits.closeAll(waiter -> {
		});
	}

	/**
	 * Entering and leaving hand the room's subscribing and unsubscribing to the subscriber's thread;
	 * that hand-off must never park the waiting thread either (a thread that may not block, such as
	 * an event loop, waits through the async API's callbacks, which enter and leave rooms).
	 */
	@Test
	void aWatchedThreadEntersAndLeavesRoomsWithoutParking() throws Exception {
		ReleaseWaits waits = new ReleaseWaits(new HeldElsewhere(), "c1");
		CompletableFuture<Throwable> done = new CompletableFuture<>();
		Thread watched = new Thread(() -> {
			try {
				for (int i = 0; i < 5_000; i++) {
					waits.leave(waits.enter(LockId.exclusive("x" + (i % 4)), "c1:1", "t" + i, () -> {
					}));
				}
				done.complete(null);
			}
			catch (Throwable ex) {
				done.complete(ex);
			}
		}, WATCHED);
		watched.start();
		assertThat(done.get(60, TimeUnit.SECONDS)).isNull();
		assertThat(waits.waitingThreads()).isZero();
		waits.closeAll(waiter -> {
		});
	}

	/** @return whether {@code thread} waits for a room's guard in {@code WaitingRoom.<method>} */
	private static boolean blockedIn(Thread thread, String method) {
		return thread.getState() == Thread.State.BLOCKED && java.util.Arrays.stream(thread.getStackTrace())
			.anyMatch(frame -> frame.getClassName().equals(WaitingRoom.class.getName()) && frame.getMethodName().equals(method));
	}

	private static void awaitQuietly(CountDownLatch latch) {
		try {
			latch.await(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
