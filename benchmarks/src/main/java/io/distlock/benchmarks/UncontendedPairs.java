package io.distlock.benchmarks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.ThreadParams;

import io.distlock.embedded.RedisServerProcess;

/**
 * Scenario 1 of {@link LockBenchmarks} (4 threads, a key each, one client, {@code lock()} then
 * {@code unlock()}) measured by JMH: a harness the project did not write, with its own timing and
 * warm-up, and a fresh JVM and {@code redis-server} for every library and fork. {@link JmhCrossCheck}
 * runs it and prints the ratios to set beside those of {@code LockBenchmarks}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(4)
public class UncontendedPairs {

	/** The library under test, by its name in {@link Contenders}. */
	@Param({ "distlock", "naive", "redisson", "spring-spin" })
	public String library;

	private RedisServerProcess redis;

	private Contender.Client client;

	@Setup(Level.Trial)
	public void start() {
		this.redis = RedisServerProcess.start();
		this.client = contender(this.library, this.redis.host(), this.redis.port()).newClient();
	}

	@TearDown(Level.Trial)
	public void stop() {
		this.client.close();
		this.redis.close();
	}

	@Benchmark
	public void lockAndUnlock(Key key) {
		key.lock.lock();
		key.lock.unlock();
	}

	static Contender contender(String library, String host, int port) {
		return switch (library) {
			case "distlock" -> Contenders.distlock(host, port);
			case "naive" -> Contenders.naive(host, port);
			case "redisson" -> Contenders.redisson(host, port);
			case "floor-script" -> Contenders.scriptFloor(host, port);
			case "spring-spin" -> Contenders.springIntegration(host, port,
					org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType.SPIN_LOCK);
			default -> throw new IllegalArgumentException("No library '" + library
					+ "': one of distlock, naive, redisson, spring-spin, floor-script");
		};
	}

	/** A thread's own key, as in scenario 1: no two threads contend. */
	@State(Scope.Thread)
	public static class Key {

		Lock lock;

		@Setup(Level.Trial)
		public void pick(UncontendedPairs pairs, ThreadParams thread) {
			this.lock = pairs.client.lock("jmh-" + thread.getThreadIndex());
		}

	}

}
