package io.distlock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.distlock.DistLock;
import io.distlock.DistSemaphore;
import io.distlock.testing.ThreadStates;

/**
 * One owner on a thread of its own: it acquires, holds until told, and releases on that same
 * thread, as read holds and permits belong to the thread that took them. A test can ask whether it
 * waits in the lock's queue, whether it got in, and tell it to let go. Every wait here is bounded,
 * so a lock that never lets it in fails the test rather than hanging it.
 */
final class HoldingThread implements AutoCloseable {

	/** How long any step may take before the test gives up on it; far above any lease used. */
	static final Duration PATIENCE = Duration.ofSeconds(30);

	private final Thread thread;

	private final CompletableFuture<Boolean> acquired = new CompletableFuture<>();

	private final CompletableFuture<Void> released = new CompletableFuture<>();

	private final CountDownLatch mayRelease = new CountDownLatch(1);

	private HoldingThread(String name, Callable<Boolean> acquire, Runnable release) {
		this.thread = new Thread(() -> run(acquire, release), name);
		// A thread left waiting by a failed test must not keep the JVM alive.
		this.thread.setDaemon(true);
	}

	/**
	 * Starts a thread that runs {@code acquire} and, if it answered true, holds until
	 * {@link #release()}, then runs {@code release}.
	 * @param name the thread's name, for failure messages and thread dumps
	 * @param acquire takes the hold; answers whether it got it
	 * @param release gives it back
	 * @return the running thread's handle
	 */
	static HoldingThread start(String name, Callable<Boolean> acquire, Runnable release) {
		HoldingThread holding = new HoldingThread(name, acquire, release);
		holding.thread.start();
		return holding;
	}

	/**
	 * @param name the thread's name
	 * @param lock what to lock on the new thread, with the watchdog
	 * @param wait how long the thread may wait for it
	 * @return the thread, holding once {@link #acquired()} says true, until {@link #release()}
	 */
	static HoldingThread lock(String name, DistLock lock, Duration wait) {
		return start(name, () -> lock.tryLock(wait), lock::unlock);
	}

	/**
	 * @param name the thread's name
	 * @param semaphore whose permit to take on the new thread, with the watchdog
	 * @param wait how long the thread may wait for it
	 * @return the thread, holding once {@link #acquired()} says true, until {@link #release()}
	 */
	static HoldingThread acquire(String name, DistSemaphore semaphore, Duration wait) {
		return start(name, () -> semaphore.tryAcquire(wait), semaphore::release);
	}

	/**
	 * Tries the lock on a thread other than the caller's (which may hold it itself), and lets go at
	 * once if it got it.
	 * @param lock the lock
	 * @param wait how long to wait for it
	 * @return whether it got it
	 */
	static boolean tryLockElsewhere(DistLock lock, Duration wait) throws Exception {
		try (HoldingThread other = lock("try-" + lock.getName(), lock, wait)) {
			boolean got = other.awaitAcquired(wait.plus(PATIENCE));
			if (got) {
				other.release();
			}
			return got;
		}
	}

	/**
	 * As {@link #tryLockElsewhere}, for a semaphore's permit.
	 * @param semaphore the semaphore
	 * @param wait how long to wait for a permit
	 * @return whether it got one
	 */
	static boolean tryAcquireElsewhere(DistSemaphore semaphore, Duration wait) throws Exception {
		try (HoldingThread other = acquire("try-" + semaphore.getName(), semaphore, wait)) {
			boolean got = other.awaitAcquired(wait.plus(PATIENCE));
			if (got) {
				other.release();
			}
			return got;
		}
	}

	private void run(Callable<Boolean> acquire, Runnable release) {
		try {
			boolean got = acquire.call();
			this.acquired.complete(got);
			if (got) {
				awaitReleaseKeepingInterrupts();
				release.run();
			}
			this.released.complete(null);
		}
		catch (Throwable ex) {
			this.acquired.completeExceptionally(ex);
			this.released.completeExceptionally(ex);
		}
	}

	/**
	 * Waits for {@link #release()} whatever interrupts come: a test may interrupt the thread while it
	 * acquires, and an uninterruptible acquisition keeps the flag, which must not end the hold early.
	 */
	private void awaitReleaseKeepingInterrupts() {
		boolean interrupted = false;
		while (true) {
			try {
				this.mayRelease.await();
				break;
			}
			catch (InterruptedException ex) {
				interrupted = true;
			}
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
	}

	/** @return the acquisition's answer to come: true if it got in, false if its wait ran out */
	CompletableFuture<Boolean> acquired() {
		return this.acquired;
	}

	/** @return whether it got in, waiting at most {@link #PATIENCE} for the answer */
	boolean awaitAcquired() throws Exception {
		return awaitAcquired(PATIENCE);
	}

	/**
	 * @param within how long to wait for the answer
	 * @return whether it got in; fails the test if there is no answer within {@code within}
	 */
	boolean awaitAcquired(Duration within) throws Exception {
		return this.acquired.get(within.toMillis(), TimeUnit.MILLISECONDS);
	}

	/**
	 * Waits until the thread is parked in the engine's release wait, that is, it made its first call
	 * to the backend, was refused, and (being its client's only waiter) took its place in the
	 * backend's queue: what makes arrival order between clients known. Fails if it got an answer
	 * instead.
	 */
	void awaitQueued() {
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.acquired.isDone() || ThreadStates.parkedWaitingForRelease(this.thread));
		assertThat(this.acquired).as("%s answered instead of waiting", this.thread.getName()).isNotDone();
	}

	/** Tells the thread to let go, and waits until it did; rethrows what its release threw. */
	void release() throws Exception {
		this.mayRelease.countDown();
		this.released.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
	}

	/** @return the thread */
	Thread thread() {
		return this.thread;
	}

	/** Lets the thread go on if the test did not; its own bounded wait ends it otherwise. */
	@Override
	public void close() {
		this.mayRelease.countDown();
	}

}
