package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import io.distlock.DistLock;
import io.distlock.LockRegistry;

/**
 * Many locks of one client held at once, each taken by a thread of its own and held until
 * {@link #close()}, as many application threads would: what the watchdog must keep renewing, in
 * batches, without falling behind a lease.
 */
public final class HoldsOnThreads implements AutoCloseable {

	/**
	 * How many of the threads acquire at the same moment. A hold's lease counts from its acquisition,
	 * and the watchdog's first renewal of it may wait only for what is left of that lease: hundreds of
	 * acquisitions at once on a loaded 2-core machine took seconds each (600 on a Cluster, 3 s lease),
	 * so that holds reached the watchdog with under 200 ms left and their first renewal timed out.
	 * What the callers test is the renewal of many holds, not a burst of acquisitions.
	 */
	private static final int ACQUIRING_AT_ONCE = 16;

	private final List<String> names;

	private final ExecutorService threads;

	private final CountDownLatch release = new CountDownLatch(1);

	private HoldsOnThreads(List<String> names) {
		this.names = names;
		this.threads = Executors.newFixedThreadPool(names.size());
	}

	/**
	 * Takes {@code count} locks, {@code prefix + 0} to {@code prefix + (count - 1)}, each on a thread of
	 * its own, and fails unless all are held within 30 s.
	 * @param client whose threads hold them
	 * @return the holds, released by {@link #close()}
	 */
	public static HoldsOnThreads take(LockRegistry client, String prefix, int count) throws InterruptedException {
		List<String> names = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			names.add(prefix + i);
		}
		HoldsOnThreads holds = new HoldsOnThreads(List.copyOf(names));
		CountDownLatch allHeld = new CountDownLatch(count);
		Semaphore acquiring = new Semaphore(ACQUIRING_AT_ONCE);
		try {
			for (String name : names) {
				DistLock lock = client.getLock(name);
				holds.threads.submit(() -> {
					acquiring.acquire();
					try {
						lock.lock();
					}
					finally {
						acquiring.release();
					}
					allHeld.countDown();
					holds.release.await();
					lock.unlock();
					return null;
				});
			}
			assertThat(allHeld.await(30, TimeUnit.SECONDS)).as("all %d locks held", count).isTrue();
			return holds;
		}
		catch (RuntimeException | Error | InterruptedException ex) {
			holds.close();
			throw ex;
		}
	}

	/** @return the names of the locks held, in the order they were taken */
	public List<String> names() {
		return this.names;
	}

	/** Lets every thread release its lock, and waits up to 20 s for them to finish. */
	@Override
	public void close() throws InterruptedException {
		this.release.countDown();
		this.threads.shutdown();
		this.threads.awaitTermination(20, TimeUnit.SECONDS);
	}

}
