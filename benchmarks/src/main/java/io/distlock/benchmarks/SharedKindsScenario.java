package io.distlock.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.redisson.Redisson;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistSemaphore;
import io.distlock.core.LockEngineOptions;
import io.distlock.redis.RedisLockRegistry;

/**
 * Scenarios 11 and 12, the lock kinds beyond the exclusive one, each library with several clients
 * (one per application instance, with connections of its own):
 * <ul>
 * <li>read-mostly: {@value #READERS} readers and {@value #WRITERS} writer over {@value #CLIENTS}
 * clients on one read-write lock, each reader inside for {@value #HOLD_MILLIS} ms; the writer pauses
 * {@value #WRITER_PAUSE_MILLIS} ms between writes.
 * Reported: acquisitions per second (reads and writes), the writer's wait p50/p99 (how long a writer
 * waits behind a stream of readers), and whether a reader was ever inside with a writer;</li>
 * <li>semaphore: {@value #SEMAPHORE_THREADS} threads over {@value #CLIENTS} clients on one semaphore of
 * {@value #PERMITS} permits, acquire, {@value #HOLD_MILLIS} ms inside, release, in a loop. Reported: acquisitions per second, the wait
 * p50/p99, and the most holders ever inside at once (must be {@value #PERMITS}).</li>
 * </ul>
 * distlock and Redisson run on the benchmark's Redis; Curator on an in-process ZooKeeper server.
 */
final class SharedKindsScenario {

	static final int CLIENTS = 4;

	static final int READERS = 16;

	static final int WRITERS = 1;

	static final int WRITER_PAUSE_MILLIS = 5;

	static final int SEMAPHORE_THREADS = 8;

	static final int PERMITS = 3;

	/** How long a reader or a permit holder stays inside: a short read, a call to a provider. */
	static final int HOLD_MILLIS = 1;

	private SharedKindsScenario() {
	}

	/**
	 * What one library did.
	 * @param opsPerSecond acquisitions per second, all threads
	 * @param waits for read-mostly the writer's waits, for the semaphore every acquisition's wait
	 * @param mostInside the most holders inside at once (readers, or permit holders)
	 * @param violations times a reader was inside with a writer, or more than the permits were inside
	 * @param writesPerSecond for read-mostly, the writer's acquisitions per second (0: it starved)
	 */
	record Result(double opsPerSecond, Histogram waits, int mostInside, long violations, double writesPerSecond) {
	}

	/** One client of a library: a connection (or session) of its own. */
	interface SharedClient extends AutoCloseable {

		ReadWriteLock readWriteLock(String name);

		/** @return what releases the permit taken */
		Runnable acquirePermit(String name) throws Exception;

		@Override
		void close();

	}

	/** A library: its name and how it makes a client. */
	record Library(String name, java.util.function.Supplier<SharedClient> newClient) {
	}

	static List<Library> libraries(String redisHost, int redisPort, String zooKeeper) {
		return List.of(new Library("distlock", () -> distlock(redisHost, redisPort)),
				new Library("redisson", () -> redisson(redisHost, redisPort)),
				new Library("curator", () -> curator(zooKeeper)));
	}

	static Result readMostly(Library library, Duration warmup, Duration duration) throws Exception {
		List<SharedClient> clients = clients(library);
		try {
			run(clients, warmup, null, false);
			Recorder writerWaits = new Recorder(3);
			return run(clients, duration, writerWaits, true);
		}
		finally {
			clients.forEach(SharedClient::close);
		}
	}

	private static Result run(List<SharedClient> clients, Duration duration, Recorder writerWaits, boolean measured)
			throws Exception {
		AtomicBoolean stop = new AtomicBoolean();
		AtomicLong operations = new AtomicLong();
		AtomicLong writes = new AtomicLong();
		AtomicInteger readersInside = new AtomicInteger();
		AtomicInteger writersInside = new AtomicInteger();
		AtomicInteger mostReaders = new AtomicInteger();
		AtomicLong violations = new AtomicLong();
		Recorder waits = (writerWaits != null) ? writerWaits : new Recorder(3);
		List<Thread> threads = new ArrayList<>();
		CountDownLatch started = new CountDownLatch(READERS + WRITERS);
		for (int i = 0; i < READERS; i++) {
			ReadWriteLock lock = clients.get(i % CLIENTS).readWriteLock("report");
			threads.add(started("reader-" + i, () -> {
				started.countDown();
				while (!stop.get()) {
					lock.readLock().lock();
					try {
						int now = readersInside.incrementAndGet();
						mostReaders.accumulateAndGet(now, Math::max);
						if (writersInside.get() > 0) {
							violations.incrementAndGet();
						}
						sleep(HOLD_MILLIS);
						readersInside.decrementAndGet();
					}
					finally {
						lock.readLock().unlock();
					}
					operations.incrementAndGet();
				}
			}));
		}
		for (int i = 0; i < WRITERS; i++) {
			ReadWriteLock lock = clients.get(i % CLIENTS).readWriteLock("report");
			threads.add(started("writer-" + i, () -> {
				started.countDown();
				while (!stop.get()) {
					long asked = System.nanoTime();
					lock.writeLock().lock();
					try {
						waits.recordValue(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - asked));
						if (writersInside.incrementAndGet() > 1 || readersInside.get() > 0) {
							violations.incrementAndGet();
						}
						writersInside.decrementAndGet();
					}
					finally {
						lock.writeLock().unlock();
					}
					operations.incrementAndGet();
					writes.incrementAndGet();
					sleep(WRITER_PAUSE_MILLIS);
				}
			}));
		}
		started.await();
		long start = System.nanoTime();
		operations.set(0);
		writes.set(0);
		waits.reset();
		Thread.sleep(duration.toMillis());
		long ops = operations.get();
		long written = writes.get();
		double seconds = (System.nanoTime() - start) / 1e9;
		Histogram waited = waits.getIntervalHistogram();
		stop.set(true);
		for (Thread thread : threads) {
			thread.join(TimeUnit.SECONDS.toMillis(60));
		}
		return new Result(ops / seconds, waited, mostReaders.get(), violations.get(), written / seconds);
	}

	static Result semaphore(Library library, Duration warmup, Duration duration) throws Exception {
		List<SharedClient> clients = clients(library);
		try {
			runSemaphore(clients, warmup);
			return runSemaphore(clients, duration);
		}
		finally {
			clients.forEach(SharedClient::close);
		}
	}

	private static Result runSemaphore(List<SharedClient> clients, Duration duration) throws Exception {
		AtomicBoolean stop = new AtomicBoolean();
		AtomicLong operations = new AtomicLong();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		AtomicLong violations = new AtomicLong();
		Recorder waits = new Recorder(3);
		List<Thread> threads = new ArrayList<>();
		CountDownLatch started = new CountDownLatch(SEMAPHORE_THREADS);
		for (int i = 0; i < SEMAPHORE_THREADS; i++) {
			SharedClient client = clients.get(i % CLIENTS);
			threads.add(started("permit-" + i, () -> {
				started.countDown();
				while (!stop.get()) {
					long asked = System.nanoTime();
					Runnable release;
					try {
						release = client.acquirePermit("payments");
					}
					catch (Exception ex) {
						throw new IllegalStateException(ex);
					}
					try {
						waits.recordValue(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - asked));
						int now = inside.incrementAndGet();
						most.accumulateAndGet(now, Math::max);
						if (now > PERMITS) {
							violations.incrementAndGet();
						}
						sleep(HOLD_MILLIS);
						inside.decrementAndGet();
					}
					finally {
						release.run();
					}
					operations.incrementAndGet();
				}
			}));
		}
		started.await();
		long start = System.nanoTime();
		operations.set(0);
		waits.reset();
		Thread.sleep(duration.toMillis());
		long ops = operations.get();
		double seconds = (System.nanoTime() - start) / 1e9;
		Histogram waited = waits.getIntervalHistogram();
		stop.set(true);
		for (Thread thread : threads) {
			thread.join(TimeUnit.SECONDS.toMillis(60));
		}
		return new Result(ops / seconds, waited, most.get(), violations.get(), 0);
	}

	private static Thread started(String name, Runnable body) {
		Thread thread = new Thread(body, name);
		thread.setDaemon(true);
		thread.start();
		return thread;
	}

	private static List<SharedClient> clients(Library library) {
		List<SharedClient> clients = new ArrayList<>();
		for (int i = 0; i < CLIENTS; i++) {
			clients.add(library.newClient().get());
		}
		return clients;
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static SharedClient distlock(String host, int port) {
		LettuceConnectionFactory factory = Contenders.connectionFactory(host, port);
		RedisLockRegistry registry = new RedisLockRegistry(factory, "bench",
				LockEngineOptions.builder().restartGrace(Contenders.restartGrace()).build());
		return new SharedClient() {
			@Override
			public ReadWriteLock readWriteLock(String name) {
				return registry.getReadWriteLock(name);
			}

			@Override
			public Runnable acquirePermit(String name) {
				DistSemaphore semaphore = registry.getSemaphore(name, PERMITS);
				semaphore.acquire();
				return semaphore::release;
			}

			@Override
			public void close() {
				registry.close();
				factory.destroy();
			}
		};
	}

	private static SharedClient redisson(String host, int port) {
		Config config = new Config();
		config.useSingleServer().setAddress("redis://" + host + ":" + port);
		RedissonClient client = Redisson.create(config);
		return new SharedClient() {
			@Override
			public ReadWriteLock readWriteLock(String name) {
				return client.getReadWriteLock("redisson:" + name);
			}

			@Override
			public Runnable acquirePermit(String name) throws InterruptedException {
				RPermitExpirableSemaphore semaphore = client.getPermitExpirableSemaphore("redisson:" + name);
				semaphore.trySetPermits(PERMITS);
				// With a lease, as its documentation advises: a permit taken without one never comes back
				// after a crash (Redisson has no watchdog for permits).
				String permit = semaphore.acquire(30, TimeUnit.SECONDS);
				return () -> semaphore.release(permit);
			}

			@Override
			public void close() {
				client.shutdown();
			}
		};
	}

	private static SharedClient curator(String connectString) {
		CuratorFramework client = ZooKeeperContenders.curator(connectString, "curator");
		// One lock and one semaphore object per client, shared by its threads (Curator keeps holds per thread).
		java.util.Map<String, ReadWriteLock> locks = new java.util.concurrent.ConcurrentHashMap<>();
		java.util.Map<String, InterProcessSemaphoreV2> semaphores = new java.util.concurrent.ConcurrentHashMap<>();
		return new SharedClient() {
			@Override
			public ReadWriteLock readWriteLock(String name) {
				return locks.computeIfAbsent(name, key -> {
					InterProcessReadWriteLock lock = new InterProcessReadWriteLock(client, "/curator-bench-rw/" + key);
					Lock read = new ZooKeeperContenders.MutexLock(lock.readLock());
					Lock write = new ZooKeeperContenders.MutexLock(lock.writeLock());
					return new ReadWriteLock() {
						@Override
						public Lock readLock() {
							return read;
						}

						@Override
						public Lock writeLock() {
							return write;
						}
					};
				});
			}

			@Override
			public Runnable acquirePermit(String name) throws Exception {
				InterProcessSemaphoreV2 semaphore = semaphores.computeIfAbsent(name,
						key -> new InterProcessSemaphoreV2(client, "/curator-bench-sem/" + key, PERMITS));
				Lease lease = semaphore.acquire();
				return () -> semaphore.returnLease(lease);
			}

			@Override
			public void close() {
				client.close();
			}
		};
	}

}
