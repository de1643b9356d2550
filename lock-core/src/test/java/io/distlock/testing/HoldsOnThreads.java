package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.distlock.DistLock;
import io.distlock.LockRegistry;

/**
 * Many locks of one client held at once, each taken by a thread of its own and held until
 * {@link #close()}, as many application threads would: what the watchdog must keep renewing, in
 * batches, without falling behind a lease.
 */
public final class HoldsOnThreads implements AutoCloseable {

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
		try {
			for (String name : names) {
				DistLock lock = client.getLock(name);
				holds.threads.submit(() -> {
					lock.lock();
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
