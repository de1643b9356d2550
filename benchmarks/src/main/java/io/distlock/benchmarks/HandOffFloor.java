package io.distlock.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Semaphore;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;

import org.HdrHistogram.Histogram;
import org.springframework.core.io.ClassPathResource;

/**
 * Not a lock but the floor under every hand-off through Redis: one client runs a script that deletes
 * a key and publishes to the other client's channel (what distlock's release does at its shortest),
 * and the other client's parked thread wakes on the message. Measured from the release's start to
 * the woken thread running, as scenario 2 measures a hand-off, but with nothing else running: no
 * lock that hands over through Redis can beat it on this machine, and under scenario 2's load it
 * only grows. Opt-in scenario {@code handoff-floor}.
 */
final class HandOffFloor {

	private static final String CHANNEL = "floor:grants:waiter";

	private HandOffFloor() {
	}

	/**
	 * @return the hand-off latencies of the measured window, in nanoseconds
	 */
	static Histogram run(String host, int port, Duration warmup, Duration duration) throws Exception {
		RedisClient holderClient = RedisClient.create(RedisURI.create(host, port));
		RedisClient waiterClient = RedisClient.create(RedisURI.create(host, port));
		try (StatefulRedisConnection<String, String> holder = holderClient.connect();
				StatefulRedisPubSubConnection<String, String> waiter = waiterClient.connectPubSub()) {
			Semaphore granted = new Semaphore(0);
			waiter.addListener(new RedisPubSubAdapter<>() {
				@Override
				public void message(String channel, String message) {
					granted.release();
				}
			});
			waiter.sync().subscribe(CHANNEL);
			String sha = holder.sync()
				.scriptLoad(new ClassPathResource("io/distlock/benchmarks/floor-handoff.lua")
					.getContentAsString(StandardCharsets.UTF_8));
			Histogram latencies = new Histogram(Duration.ofSeconds(10).toNanos(), 3);
			Semaphore parked = new Semaphore(0);
			Semaphore woken = new Semaphore(0);
			long[] wokenAt = new long[1];
			Thread waiterThread = new Thread(() -> {
				try {
					while (true) {
						parked.release();
						granted.acquire();
						wokenAt[0] = System.nanoTime();
						woken.release();
					}
				}
				catch (InterruptedException ex) {
					// The run is over.
				}
			}, "floor-waiter");
			waiterThread.setDaemon(true);
			waiterThread.start();
			try {
				measure(holder, sha, parked, woken, wokenAt, waiterThread, null, warmup);
				measure(holder, sha, parked, woken, wokenAt, waiterThread, latencies, duration);
			}
			finally {
				waiterThread.interrupt();
			}
			return latencies;
		}
		finally {
			holderClient.shutdown();
			waiterClient.shutdown();
		}
	}

	private static void measure(StatefulRedisConnection<String, String> holder, String sha, Semaphore parked,
			Semaphore woken, long[] wokenAt, Thread waiterThread, Histogram latencies, Duration duration)
			throws InterruptedException {
		long end = System.nanoTime() + duration.toNanos();
		while (System.nanoTime() - end < 0) {
			parked.acquire();
			// Released only once the waiter is parked, as a queued waiter is when its hand-off comes.
			while (waiterThread.getState() != Thread.State.WAITING) {
				Thread.onSpinWait();
			}
			long start = System.nanoTime();
			holder.sync().evalsha(sha, ScriptOutputType.INTEGER, new String[] { "floor:lock" }, CHANNEL);
			woken.acquire();
			if (latencies != null) {
				latencies.recordValue(Math.min(Math.max(0, wokenAt[0] - start), latencies.getHighestTrackableValue()));
			}
		}
	}

}
