package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/**
 * One warning per interval goes through, the first at once, and the next says how many were held
 * back meanwhile.
 */
class WarningWindowTest {

	private static final long SECOND = Duration.ofSeconds(1).toNanos();

	@Test
	void theFirstWarningGoesThroughAndTheNextOneOnlyAfterTheIntervalWithTheCountHeldBack() {
		WarningWindow window = new WarningWindow(Duration.ofSeconds(30));
		long start = -5 * SECOND;
		assertThat(window.enter(start)).as("the first, whatever the clock says").isZero();
		assertThat(window.enter(start + SECOND)).isEqualTo(-1);
		assertThat(window.enter(start + 29 * SECOND)).isEqualTo(-1);
		assertThat(window.enter(start + 30 * SECOND)).as("two held back").isEqualTo(2);
		assertThat(window.enter(start + 31 * SECOND)).isEqualTo(-1);
		assertThat(window.enter(start + 61 * SECOND)).isEqualTo(1);
	}

	@Test
	void manyThreadsAtOnceLetOneWarningThrough() throws InterruptedException {
		WarningWindow window = new WarningWindow(Duration.ofMinutes(1));
		long now = System.nanoTime();
		AtomicInteger through = new AtomicInteger();
		Thread[] threads = new Thread[8];
		CountDownLatch start = new CountDownLatch(1);
		for (int i = 0; i < threads.length; i++) {
			threads[i] = new Thread(() -> {
				try {
					start.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				for (int j = 0; j < 1000; j++) {
					if (window.enter(now) >= 0) {
						through.incrementAndGet();
					}
				}
			});
			threads[i].start();
		}
		start.countDown();
		for (Thread thread : threads) {
			thread.join();
		}
		assertThat(through.get()).isEqualTo(1);
		assertThat(window.enter(now + Duration.ofMinutes(1).toNanos())).as("every other one held back").isEqualTo(7999);
	}

}
