package io.distlock.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;

import org.HdrHistogram.Histogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.distlock.embedded.RedisServerProcess;

/**
 * Runs distlock and its peers side by side in one JVM against one local {@code redis-server}, and
 * prints a table, {@code RESULT} lines and distlock's ratios to each peer.
 *
 * <p>Arguments: measured duration and warm-up per scenario and library (ISO-8601, e.g. PT10S PT3S).
 * A run fails (non-zero) if a contended run loses an update: speed without exclusion is worthless.
 */
public final class LockBenchmarks {

	private static final Logger log = LoggerFactory.getLogger(LockBenchmarks.class);

	private LockBenchmarks() {
	}

	public static void main(String[] args) throws Exception {
		Duration duration = Duration.parse(args.length > 0 ? args[0] : "PT10S");
		Duration warmup = Duration.parse(args.length > 1 ? args[1] : "PT3S");
		List<String> report = new ArrayList<>();
		try (RedisServerProcess redis = RedisServerProcess.start()) {
			List<Contender> contenders = Contenders.all(redis.host(), redis.port());
			// Whoever runs first would pay the JVM's warm-up of the shared stack (Lettuce, Spring,
			// Netty) alone; one discarded pass over every library levels that.
			for (Contender contender : contenders) {
				uncontended(contender, warmup, warmup);
				redis.command("FLUSHALL");
			}
			Map<String, Result> uncontended = new LinkedHashMap<>();
			Map<String, Result> contended = new LinkedHashMap<>();
			for (Contender contender : contenders) {
				uncontended.put(contender.name(), uncontended(contender, warmup, duration));
				redis.command("FLUSHALL");
			}
			for (Contender contender : contenders) {
				contended.put(contender.name(), contended(contender, redis, warmup, duration));
				redis.command("FLUSHALL");
			}
			report.add("Scenario 1, uncontended: 4 threads, a key each, lock()+unlock() pairs; one client");
			report.add(String.format(Locale.ROOT, "%-14s %10s %10s %10s %10s", "library", "pairs/s", "p50 us", "p99 us", "p999 us"));
			uncontended.forEach((name, result) -> report.add(String.format(Locale.ROOT, "%-14s %10.0f %10d %10d %10d", name,
					result.opsPerSecond, result.pair.getValueAtPercentile(50) / 1000, result.pair.getValueAtPercentile(99) / 1000,
					result.pair.getValueAtPercentile(99.9) / 1000)));
			report.add("");
			report.add("Scenario 2, contended: 8 threads on one key, 4 independent clients; GET+SET of a Redis counter inside");
			report.add(String.format(Locale.ROOT, "%-14s %10s %12s %12s %14s %12s", "library", "acq/s", "handoff p50", "handoff p99",
					"lock+wait p99", "min/max"));
			contended.forEach((name, result) -> report.add(String.format(Locale.ROOT, "%-14s %10.0f %9d us %9d us %11d us %12.2f", name,
					result.opsPerSecond, result.handoff.getValueAtPercentile(50) / 1000,
					result.handoff.getValueAtPercentile(99) / 1000, result.pair.getValueAtPercentile(99) / 1000,
					result.fairness)));
			report.add("");
			uncontended.forEach((name, result) -> report.add(String.format(Locale.ROOT,
					"RESULT scenario=uncontended lib=%s pairsPerSec=%.0f p50us=%d p99us=%d p999us=%d", name, result.opsPerSecond,
					result.pair.getValueAtPercentile(50) / 1000, result.pair.getValueAtPercentile(99) / 1000,
					result.pair.getValueAtPercentile(99.9) / 1000)));
			contended.forEach((name, result) -> report.add(String.format(Locale.ROOT,
					"RESULT scenario=contended lib=%s acqPerSec=%.0f handoffP50us=%d handoffP99us=%d lockWaitP99us=%d fairness=%.2f",
					name, result.opsPerSecond, result.handoff.getValueAtPercentile(50) / 1000,
					result.handoff.getValueAtPercentile(99) / 1000, result.pair.getValueAtPercentile(99) / 1000, result.fairness)));
			report.add("");
			ratios(report, "uncontended", uncontended);
			ratios(report, "contended", contended);
		}
		report.forEach(System.out::println);
	}

	private static void ratios(List<String> report, String scenario, Map<String, Result> results) {
		Result ours = results.get("distlock");
		results.forEach((name, peer) -> {
			if (!name.equals("distlock")) {
				report.add(String.format(Locale.ROOT, "RATIO scenario=%s distlock/%s throughput=%.2f p99=%.2f", scenario, name,
						ours.opsPerSecond / Math.max(1, peer.opsPerSecond),
						(double) ours.pair.getValueAtPercentile(99) / Math.max(1, peer.pair.getValueAtPercentile(99))));
			}
		});
	}

	/** 4 threads, a key each, on one client. */
	static Result uncontended(Contender contender, Duration warmup, Duration duration) throws Exception {
		try (Contender.Client client = contender.newClient()) {
			Histogram pairs = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
			long[] counts = run(4, warmup, duration, (thread, measuring) -> {
				Lock lock = client.lock("uncontended:" + thread);
				return () -> {
					long start = System.nanoTime();
					lock.lock();
					lock.unlock();
					if (measuring.get()) {
						synchronized (pairs) {
							pairs.recordValue(Math.min(System.nanoTime() - start, pairs.getHighestTrackableValue()));
						}
						return true;
					}
					return false;
				};
			});
			long total = java.util.Arrays.stream(counts).sum();
			return new Result(total / (duration.toNanos() / 1e9), pairs, new Histogram(1), 1);
		}
	}

	/** 8 threads on one key, split over 4 clients, with a non-atomic Redis read-modify-write inside. */
	static Result contended(Contender contender, RedisServerProcess redis, Duration warmup, Duration duration)
			throws Exception {
		List<Contender.Client> clients = new ArrayList<>();
		LettuceConnectionFactory counterConnection = Contenders.connectionFactory(redis.host(), redis.port());
		try {
			for (int i = 0; i < 4; i++) {
				clients.add(contender.newClient());
			}
			StringRedisTemplate counter = new StringRedisTemplate(counterConnection);
			counter.opsForValue().set("bench:counter", "0");
			long[] local = new long[1];
			AtomicLong acquisitions = new AtomicLong();
			AtomicLong releaseStartedAt = new AtomicLong();
			AtomicLong lastHolder = new AtomicLong(-1);
			Histogram lockWait = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
			Histogram handoff = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
			long[] counts = run(8, warmup, duration, (thread, measuring) -> {
				Lock lock = clients.get(thread % 4).lock("contended");
				return () -> {
					long start = System.nanoTime();
					lock.lock();
					long acquired = System.nanoTime();
					try {
						// A volatile read of what the previous holder wrote last: its local increment
						// is visible, so a lost update below means the lock failed, not the memory model.
						long releasedAt = releaseStartedAt.get();
						long previous = lastHolder.getAndSet(thread);
						String value = counter.opsForValue().get("bench:counter");
						counter.opsForValue().set("bench:counter", Long.toString(Long.parseLong(value) + 1));
						local[0]++;
						acquisitions.incrementAndGet();
						if (measuring.get()) {
							synchronized (lockWait) {
								lockWait.recordValue(Math.min(acquired - start, lockWait.getHighestTrackableValue()));
								if (previous >= 0 && previous != thread) {
									handoff.recordValue(Math.min(Math.max(0, acquired - releasedAt),
											handoff.getHighestTrackableValue()));
								}
							}
						}
						releaseStartedAt.set(System.nanoTime());
					}
					finally {
						lock.unlock();
					}
					return measuring.get();
				};
			});
			long inRedis = Long.parseLong(counter.opsForValue().get("bench:counter"));
			if (inRedis != acquisitions.get() || local[0] != acquisitions.get()) {
				throw new IllegalStateException(contender.name() + " LOST UPDATES: " + acquisitions.get()
						+ " acquisitions, Redis counter " + inRedis + ", local counter " + local[0]);
			}
			long min = java.util.Arrays.stream(counts).min().orElse(0);
			long max = java.util.Arrays.stream(counts).max().orElse(1);
			long total = java.util.Arrays.stream(counts).sum();
			return new Result(total / (duration.toNanos() / 1e9), lockWait, handoff, (double) min / Math.max(1, max));
		}
		finally {
			clients.forEach(Contender.Client::close);
			counterConnection.destroy();
		}
	}

	/** Runs {@code threads} loops for the warm-up and then the measured duration; counts measured iterations. */
	private static long[] run(int threads, Duration warmup, Duration duration, LoopFactory loops) throws Exception {
		java.util.concurrent.atomic.AtomicBoolean measuring = new java.util.concurrent.atomic.AtomicBoolean();
		java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
		long[] counts = new long[threads];
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		CountDownLatch ready = new CountDownLatch(threads);
		List<Future<?>> futures = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			int thread = t;
			futures.add(pool.submit(() -> {
				Loop loop = loops.create(thread, measuring);
				ready.countDown();
				while (!stop.get()) {
					if (loop.once()) {
						counts[thread]++;
					}
				}
				return null;
			}));
		}
		ready.await();
		Thread.sleep(warmup.toMillis());
		measuring.set(true);
		Thread.sleep(duration.toMillis());
		measuring.set(false);
		stop.set(true);
		for (Future<?> future : futures) {
			future.get(2, TimeUnit.MINUTES);
		}
		pool.shutdown();
		log.debug("ran {} threads", threads);
		return counts;
	}

	@FunctionalInterface
	interface LoopFactory {

		Loop create(int thread, java.util.concurrent.atomic.AtomicBoolean measuring);

	}

	@FunctionalInterface
	interface Loop {

		/** @return whether this iteration was measured */
		boolean once() throws Exception;

	}

	/** One library's numbers in one scenario. */
	record Result(double opsPerSecond, Histogram pair, Histogram handoff, double fairness) {
	}

}
