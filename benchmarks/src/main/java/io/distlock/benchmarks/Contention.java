package io.distlock.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.Lock;
import java.util.function.IntUnaryOperator;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.HdrHistogram.Histogram;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The one contended measurement behind scenario 2 (and 7b, 8, 9, 14) on a single server and
 * scenario 13 on a Cluster: threads on keys, split over independent clients, each holder doing a
 * non-atomic GET+SET of its key's Redis counter, with the lock-wait and hand-off histograms and the
 * counts a lost update is judged by. What differs between the callers is in {@link Setup}; what a
 * lost update means (a failed run, or a figure for a peer) is left to them.
 */
final class Contention {

	private Contention() {
	}

	/**
	 * How one contended run is laid out.
	 * @param clientCount independent clients of the library, each connected before the run
	 * @param threads calling threads
	 * @param lockNames the lock names, by key
	 * @param counterKeys each key's Redis counter, by key
	 * @param connectName the lock each client takes and releases once to connect (most libraries
	 * connect lazily)
	 * @param keyOf a thread's key
	 * @param clientOf the client whose lock a thread uses
	 * @param counterConnection the counters' connection (a single server's, or a Cluster's)
	 * @param connectedClients Redis's connected clients, read before the clients connect and after
	 * the run, or {@code null} not to count them
	 * @param closeInParallel closes the clients side by side (a Lettuce Cluster client takes about
	 * a tenth of a second to shut down)
	 */
	record Setup(int clientCount, int threads, List<String> lockNames, List<String> counterKeys, String connectName,
			IntUnaryOperator keyOf, IntUnaryOperator clientOf, Supplier<LettuceConnectionFactory> counterConnection,
			LongSupplier connectedClients, boolean closeInParallel) {
	}

	/**
	 * What one run measured.
	 * @param counts measured acquisitions by thread
	 * @param lockWait {@code lock()} call to its return, per measured acquisition
	 * @param handoff a holder's release start to another thread's {@code lock()} returning, same key
	 * @param acquisitions all acquisitions by key, warm-up included
	 * @param inRedis each key's Redis counter after the run
	 * @param local each key's counter in the JVM after the run
	 * @param connections connections the clients added, counted after the run (some libraries open
	 * their pub/sub connections only when a thread waits); -1 if not counted
	 */
	record Outcome(long[] counts, Histogram lockWait, Histogram handoff, long[] acquisitions, long[] inRedis,
			long[] local, long connections) {

		long total() {
			return java.util.Arrays.stream(this.counts).sum();
		}

		/** Per-thread min/max measured acquisitions. */
		double fairness() {
			long min = java.util.Arrays.stream(this.counts).min().orElse(0);
			long max = java.util.Arrays.stream(this.counts).max().orElse(1);
			return (double) min / Math.max(1, max);
		}

	}

	/**
	 * Runs {@code setup} with {@code contender}'s clients for the warm-up and then the measured
	 * duration; {@code meter}, if given, measures the window.
	 */
	static Outcome run(Contender contender, Setup setup, Duration warmup, Duration duration, LockBenchmarks.Window meter)
			throws Exception {
		int keys = setup.lockNames().size();
		List<Contender.Client> clients = new ArrayList<>();
		LettuceConnectionFactory counterConnection = setup.counterConnection().get();
		try {
			long connectionsBefore = (setup.connectedClients() != null) ? setup.connectedClients().getAsLong() : 0;
			for (int i = 0; i < setup.clientCount(); i++) {
				Contender.Client client = contender.newClient();
				clients.add(client);
				Lock first = client.lock(setup.connectName());
				first.lock();
				first.unlock();
			}
			StringRedisTemplate counter = new StringRedisTemplate(counterConnection);
			setup.counterKeys().forEach(counterKey -> counter.opsForValue().set(counterKey, "0"));
			long[] local = new long[keys];
			AtomicLongArray acquisitions = new AtomicLongArray(keys);
			AtomicLongArray releaseStartedAt = new AtomicLongArray(keys);
			AtomicLongArray lastHolder = new AtomicLongArray(keys);
			for (int key = 0; key < keys; key++) {
				lastHolder.set(key, -1);
			}
			Histogram lockWait = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
			Histogram handoff = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
			long[] counts = LockBenchmarks.run(setup.threads(), warmup, duration, (thread, measuring) -> {
				int key = setup.keyOf().applyAsInt(thread);
				String counterKey = setup.counterKeys().get(key);
				Lock lock = clients.get(setup.clientOf().applyAsInt(thread)).lock(setup.lockNames().get(key));
				return () -> {
					long start = System.nanoTime();
					lock.lock();
					long acquired = System.nanoTime();
					try {
						// A volatile read of what the key's previous holder wrote last: its local increment is
						// visible, so a lost update below means the lock failed, not the memory model.
						long releasedAt = releaseStartedAt.get(key);
						long previous = lastHolder.getAndSet(key, thread);
						String value = counter.opsForValue().get(counterKey);
						counter.opsForValue().set(counterKey, Long.toString(Long.parseLong(value) + 1));
						local[key]++;
						acquisitions.incrementAndGet(key);
						// Read once: an acquisition is counted exactly when it is recorded.
						boolean inWindow = measuring.get();
						if (inWindow) {
							synchronized (lockWait) {
								lockWait.recordValue(Math.min(acquired - start, lockWait.getHighestTrackableValue()));
								if (previous >= 0 && previous != thread) {
									handoff.recordValue(Math.min(Math.max(0, acquired - releasedAt),
											handoff.getHighestTrackableValue()));
								}
							}
						}
						releaseStartedAt.set(key, System.nanoTime());
						return inWindow;
					}
					finally {
						lock.unlock();
					}
				};
			}, meter);
			long connections = (setup.connectedClients() != null)
					? setup.connectedClients().getAsLong() - connectionsBefore : -1;
			long[] inRedis = new long[keys];
			long[] acquired = new long[keys];
			for (int key = 0; key < keys; key++) {
				inRedis[key] = Long.parseLong(counter.opsForValue().get(setup.counterKeys().get(key)));
				acquired[key] = acquisitions.get(key);
			}
			return new Outcome(counts, lockWait, handoff, acquired, inRedis, local, connections);
		}
		finally {
			List<Runnable> closing = new ArrayList<>();
			clients.forEach(client -> closing.add(client::close));
			closing.add(counterConnection::destroy);
			(setup.closeInParallel() ? closing.parallelStream() : closing.stream()).forEach(Runnable::run);
		}
	}

}
