package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Unit-level edges of how the steps of a wait without a thread are handed to the engine's pool: a
 * hand-off that throws on the asking thread is made by the timer, and asks during a run add one
 * run, never a second runner.
 */
class StepRunnerTest {

	private final ExecutorService pool = Executors.newFixedThreadPool(2);

	private final DeadlineGuard timer = new DeadlineGuard("step-runner-test");

	@AfterEach
	void close() {
		this.pool.shutdownNow();
		this.timer.close();
	}

	/**
	 * Defect: the asking thread raised the count, then the pool threw where that thread would have
	 * parked (BlockHound's Error on an event loop); no run was on its way, and every later ask, a
	 * cancel's included, returned at once, so the wait never ended.
	 */
	@Test
	void anAskWhoseHandOffThrowsIsRunByTheTimerAndLaterAsksStillRun() throws Exception {
		Semaphore runs = new Semaphore(0);
		StepRunner steps = new StepRunner(throwingOnceThenPool(), this.timer, runs::release, () -> {
		});

		// The asker (a room waking its waiters one after the other) goes on: the timer hands the run on.
		steps.ask();
		assertThat(runs.tryAcquire(30, TimeUnit.SECONDS)).as("the timer handed the run on").isTrue();
		steps.ask();
		assertThat(runs.tryAcquire(30, TimeUnit.SECONDS)).as("a later ask runs").isTrue();
	}

	/** A pool may queue the task and throw after (a fork-join pool that fails to start a worker). */
	@Test
	void aRunThePoolQueuedBeforeItThrewRunsOnceThoughTheTimerHandsItOnAgain() throws Exception {
		AtomicBoolean throwOnce = new AtomicBoolean(true);
		CountDownLatch handedOnTwice = new CountDownLatch(2);
		CountDownLatch bothDone = new CountDownLatch(2);
		AtomicInteger ran = new AtomicInteger();
		StepRunner steps = new StepRunner(task -> {
			this.pool.execute(() -> {
				// Both hand-offs are in before either runs.
				handedOnTwice.countDown();
				awaitQuietly(handedOnTwice);
				task.run();
				bothDone.countDown();
			});
			if (throwOnce.getAndSet(false)) {
				throw new AssertionError("queued, then failed");
			}
		}, this.timer, ran::incrementAndGet, () -> {
		});

		steps.ask();
		assertThat(handedOnTwice.await(30, TimeUnit.SECONDS)).as("the timer handed the run on again").isTrue();
		assertThat(bothDone.await(30, TimeUnit.SECONDS)).isTrue();
		assertThat(ran).as("one step for the two hand-offs").hasValue(1);
		steps.ask();
		await().atMost(Duration.ofSeconds(30)).until(() -> ran.get() == 2);
	}

	/** Defect: the timer's hand-off, dropped by a closing timer, left the count raised with no run on its way. */
	@Test
	void aHandOffTheClosingTimerDroppedIsMadeByTheNextAsk() throws Exception {
		CountDownLatch timerBusy = new CountDownLatch(1);
		CountDownLatch never = new CountDownLatch(1);
		this.timer.schedule(() -> {
			timerBusy.countDown();
			awaitQuietly(never);
		}, 1);
		assertThat(timerBusy.await(30, TimeUnit.SECONDS)).isTrue();
		Semaphore runs = new Semaphore(0);
		StepRunner steps = new StepRunner(throwingOnceThenPool(), this.timer, runs::release, () -> {
		});

		// The pool throws; the timer's hand-off waits behind the busy task, and closing drops it.
		steps.ask();
		this.timer.close();
		steps.ask();
		assertThat(runs.tryAcquire(30, TimeUnit.SECONDS)).as("the next ask handed it on").isTrue();
	}

	/** The pool and the timer both refused: the run waits for the next ask (a cancel, say) to hand it on. */
	@Test
	void aRunNeitherThePoolNorTheTimerCouldHandOnIsHandedOnByTheNextAsk() throws Exception {
		this.timer.close();
		Semaphore runs = new Semaphore(0);
		StepRunner steps = new StepRunner(throwingOnceThenPool(), this.timer, runs::release, () -> {
		});

		steps.ask();
		assertThat(runs.availablePermits()).as("no run on its way").isZero();
		steps.ask();
		assertThat(runs.tryAcquire(30, TimeUnit.SECONDS)).as("the next ask handed it on").isTrue();
	}

	/** A step that throws is counted as run, or no later ask would run one. */
	@Test
	void aStepThatThrowsLeavesLaterAsksRunning() throws Exception {
		AtomicBoolean throwOnce = new AtomicBoolean(true);
		Semaphore runs = new Semaphore(0);
		StepRunner steps = new StepRunner(this.pool, this.timer, () -> {
			runs.release();
			if (throwOnce.getAndSet(false)) {
				throw new IllegalStateException("a step that failed outside its own handling");
			}
		}, () -> {
		});
		steps.ask();
		assertThat(runs.tryAcquire(30, TimeUnit.SECONDS)).isTrue();
		steps.ask();
		assertThat(runs.tryAcquire(30, TimeUnit.SECONDS)).as("a later ask runs").isTrue();
	}

	@Test
	void asksDuringARunAddOneRunAndNeverASecondRunner() throws Exception {
		CountDownLatch inFirstRun = new CountDownLatch(1);
		CountDownLatch finishFirstRun = new CountDownLatch(1);
		AtomicInteger running = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		Semaphore runs = new Semaphore(0);
		StepRunner steps = new StepRunner(this.pool, this.timer, () -> {
			if (running.incrementAndGet() > 1) {
				overlaps.incrementAndGet();
			}
			inFirstRun.countDown();
			try {
				finishFirstRun.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			running.decrementAndGet();
			runs.release();
		}, () -> {
		});

		steps.ask();
		assertThat(inFirstRun.await(30, TimeUnit.SECONDS)).isTrue();
		steps.ask();
		steps.ask();
		finishFirstRun.countDown();
		assertThat(runs.tryAcquire(2, 30, TimeUnit.SECONDS)).as("the first run and one more").isTrue();
		// Had the two asks started runs of their own, they would show by now.
		steps.ask();
		assertThat(runs.tryAcquire(30, TimeUnit.SECONDS)).isTrue();
		assertThat(runs.availablePermits()).isZero();
		assertThat(overlaps).hasValue(0);
	}

	@Test
	void aRefusedRunIsAnsweredInstead() throws Exception {
		CountDownLatch refused = new CountDownLatch(1);
		this.pool.shutdown();
		StepRunner steps = new StepRunner(this.pool, this.timer, () -> {
		}, refused::countDown);
		steps.ask();
		assertThat(refused.await(30, TimeUnit.SECONDS)).isTrue();
	}

	/** A pool that throws where the asking thread would have parked, the first time only. */
	private Executor throwingOnceThenPool() {
		AtomicBoolean throwOnce = new AtomicBoolean(true);
		return task -> {
			if (throwOnce.getAndSet(false)) {
				throw new AssertionError("parked where it may not");
			}
			this.pool.execute(task);
		};
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
