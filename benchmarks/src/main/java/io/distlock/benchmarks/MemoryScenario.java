package io.distlock.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;

import io.distlock.embedded.RedisServerProcess;

/**
 * Scenario 5: what a client keeps in its heap, and Redis in its memory, after taking and releasing
 * many distinct lock names once each, measured with the client still open.
 */
final class MemoryScenario {

	private static final int THREADS = 8;

	/**
	 * Longer than any short-lived key a library leaves on purpose: distlock's release markers keep
	 * their hold's expiry, up to the watchdog's 30 s lease here.
	 */
	private static final long EXPIRY_SETTLE_MILLIS = 31_000;

	private MemoryScenario() {
	}

	/**
	 * @param heapGrowthBytes retained heap growth of the open client (after full GCs)
	 * @param redisGrowthBytes growth of Redis's {@code used_memory}
	 * @param keysLeft keys left in Redis
	 * @param namesPerSecond how fast the names went through
	 */
	record Result(long heapGrowthBytes, long redisGrowthBytes, long keysLeft, double namesPerSecond) {
	}

	static Result run(Contender contender, RedisServerProcess redis, int names) throws Exception {
		MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
		try (Contender.Client client = contender.newClient()) {
			// Touch the client once so that its connections and caches exist in the baseline.
			Lock first = client.lock("memory:baseline");
			first.lock();
			first.unlock();
			long heapBefore = settledHeap(memory);
			long redisBefore = usedMemory(redis);
			long keysBefore = keys(redis);
			AtomicInteger next = new AtomicInteger();
			ExecutorService pool = Executors.newFixedThreadPool(THREADS);
			long start = System.nanoTime();
			try {
				List<Future<?>> workers = new ArrayList<>();
				for (int t = 0; t < THREADS; t++) {
					workers.add(pool.submit(() -> {
						for (int i = next.getAndIncrement(); i < names; i = next.getAndIncrement()) {
							Lock lock = client.lock("memory:" + i);
							lock.lock();
							lock.unlock();
						}
						return null;
					}));
				}
				for (Future<?> worker : workers) {
					worker.get(30, TimeUnit.MINUTES);
				}
			}
			finally {
				pool.shutdown();
			}
			double seconds = (System.nanoTime() - start) / 1e9;
			// What a library leaves to expire by itself (distlock's release markers live 15 to 30 s) is not
			// what stays behind: every library gets the same time for it.
			long settleUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(EXPIRY_SETTLE_MILLIS);
			while (keys(redis) > keysBefore && System.nanoTime() - settleUntil < 0) {
				Thread.sleep(200);
			}
			long heapAfter = settledHeap(memory);
			long redisAfter = usedMemory(redis);
			return new Result(heapAfter - heapBefore, redisAfter - redisBefore, keys(redis) - keysBefore, names / seconds);
		}
	}

	private static long settledHeap(MemoryMXBean memory) throws InterruptedException {
		long used = Long.MAX_VALUE;
		// Several collections, so that what is only softly or weakly reachable (caches) is counted out.
		for (int i = 0; i < 4; i++) {
			System.gc();
			Thread.sleep(100);
			used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
		}
		return used;
	}

	private static long usedMemory(RedisServerProcess redis) {
		for (String line : redis.query("INFO", "memory").split("\r?\n")) {
			if (line.startsWith("used_memory:")) {
				return Long.parseLong(line.substring("used_memory:".length()).trim());
			}
		}
		throw new IllegalStateException("INFO memory without used_memory");
	}

	private static long keys(RedisServerProcess redis) {
		return Long.parseLong(redis.command("DBSIZE").substring(1).trim());
	}

}
