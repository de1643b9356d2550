package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.distlock.LockWatchdog;

/** A lane runs its tasks one at a time and in order on shared workers, beside other lanes. */
class SerialLaneTest {

	private final LockWatchdog watchdog = LockWatchdog.create();

	@AfterEach
	void close() {
		this.watchdog.close();
	}

	@Test
	void tasksGivenFromManyThreadsRunOneAtATimeAndEachThreadsInOrder() throws Exception {
		SerialLane lane = new SerialLane(this.watchdog);
		AtomicInteger running = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		List<List<Integer>> seen = new ArrayList<>();
		int producers = 8;
		int perProducer = 2_000;
		for (int p = 0; p < producers; p++) {
			seen.add(new ArrayList<>());
		}
		CountDownLatch done = new CountDownLatch(producers * perProducer);
		ExecutorService threads = Executors.newFixedThreadPool(producers);
		try {
			for (int p = 0; p < producers; p++) {
				int producer = p;
				threads.execute(() -> {
					for (int i = 0; i < perProducer; i++) {
						int index = i;
						lane.execute(() -> {
							if (running.incrementAndGet() > 1) {
								overlaps.incrementAndGet();
							}
							assertThat(lane.inLane()).isTrue();
							// Only the lane writes these lists, one task at a time.
							seen.get(producer).add(index);
							running.decrementAndGet();
							done.countDown();
						});
					}
				});
			}
			assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(overlaps).hasValue(0);
		for (List<Integer> order : seen) {
			assertThat(order).hasSize(perProducer).isSorted();
		}
		assertThat(lane.inLane()).isFalse();
	}

	@Test
	void aBlockedLaneDoesNotHoldUpAnother() throws Exception {
		SerialLane blocked = new SerialLane(this.watchdog);
		SerialLane other = new SerialLane(this.watchdog);
		CountDownLatch release = new CountDownLatch(1);
		CountDownLatch otherRan = new CountDownLatch(1);
		blocked.execute(() -> {
			try {
				release.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		other.schedule(otherRan::countDown, Duration.ofMillis(10));
		try {
			assertThat(otherRan.await(10, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			release.countDown();
		}
	}

	@Test
	void closingDropsWhatHasNotStartedAndCancelsItsFutures() throws Exception {
		SerialLane lane = new SerialLane(this.watchdog);
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		lane.execute(() -> {
			started.countDown();
			try {
				release.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
		FutureTask<String> waiting = new FutureTask<>(() -> "ran");
		lane.execute(waiting);
		lane.close();
		release.countDown();
		assertThat(waiting.isCancelled()).as("a caller waiting for it is told").isTrue();
		assertThatThrownBy(() -> lane.execute(() -> {
		})).isInstanceOf(RejectedExecutionException.class);
	}

}
