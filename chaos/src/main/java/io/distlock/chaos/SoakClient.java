package io.distlock.chaos;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryUntilElapsed;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistLock;
import io.distlock.LockLostException;
import io.distlock.LockRegistry;
import io.distlock.core.BackendLockRegistry;
import io.distlock.core.LockEngineOptions;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.redlock.RedlockLockRegistry;
import io.distlock.redlock.RedlockSettings;
import io.distlock.zookeeper.ZooKeeperLockRegistry;

/**
 * One soak client: a JVM of its own (so that it can be frozen and its connections killed like a
 * real application instance), whose threads lock random keys through the public
 * {@link LockRegistry} API and run a critical section against the {@link FencedResource}, logging
 * every attempt as a {@link HoldRecord}. Started and stopped by {@link SoakClients}.
 *
 * <p>Arguments are {@code name=value} pairs: {@code client}, {@code lock} ({@code redis:<port>},
 * {@code redlock:<port>,<port>,...}, all on 127.0.0.1, or {@code zookeeper:<connect string>}, or
 * {@code zookeeper-line:<connect string>} for exclusive locks held first in line), {@code resource} (port), {@code threads},
 * {@code keys}, {@code watchdog} and {@code wait} (milliseconds), {@code history} (file) and
 * {@code sanity} ({@code true}: no locking at all, to show that the checker catches what a missing
 * lock does). It prints {@code READY} once its registry works and stops when a line {@code stop}
 * (or the end of input) arrives, printing {@code DONE} once its history is written.
 */
public final class SoakClient {

	/** How long a Redis command, or a ZooKeeper call's retries of a lost connection, may take. */
	private static final Duration CALL_TIMEOUT = Duration.ofSeconds(1);

	private SoakClient() {
	}

	public static void main(String[] args) throws Exception {
		Map<String, String> options = new HashMap<>();
		for (String arg : args) {
			int equals = arg.indexOf('=');
			options.put(arg.substring(0, equals), arg.substring(equals + 1));
		}
		String client = options.get("client");
		int threads = Integer.parseInt(options.get("threads"));
		int keys = Integer.parseInt(options.get("keys"));
		Duration watchdog = Duration.ofMillis(Long.parseLong(options.get("watchdog")));
		long waitMillis = Long.parseLong(options.get("wait"));
		boolean sanity = Boolean.parseBoolean(options.get("sanity"));
		Path history = Path.of(options.get("history"));
		AtomicInteger lostNotices = new AtomicInteger();
		LockEngineOptions engineOptions = LockEngineOptions.builder()
			.clientId(client + "-" + ProcessHandle.current().pid())
			.watchdogTimeout(watchdog)
			// As Spring Boot configures it: a Redis that lost its data admits no holder for one
			// watchdog timeout, so that holders it forgot learn of it first.
			.restartGrace(watchdog)
			.listener(lost -> lostNotices.incrementAndGet())
			.build();
		BackendLockRegistry registry = registry(options.get("lock"), engineOptions, watchdog);
		FencedResource resource = new FencedResource(Integer.parseInt(options.get("resource")));
		List<String> records = Collections.synchronizedList(new ArrayList<>());
		SectionLoop loop = new SectionLoop(client, registry, resource, keys, waitMillis, sanity, records);
		List<Thread> workers = new ArrayList<>();
		for (int i = 0; i < threads; i++) {
			Thread worker = new Thread(loop.forThread(i), client + "-t" + i);
			workers.add(worker);
		}
		System.out.println("READY " + ProcessHandle.current().pid());
		System.out.flush();
		workers.forEach(Thread::start);
		BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		String line;
		while ((line = input.readLine()) != null && !"stop".equals(line.trim())) {
			// Nothing else is asked of a client.
		}
		loop.stop();
		// Well inside the orchestrator's patience: a thread still in an attempt by then is stuck, and
		// is written down as such below rather than silently left out of the history.
		long joinDeadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		for (Thread worker : workers) {
			worker.join(Math.max(1, (joinDeadline - System.nanoTime()) / 1_000_000));
		}
		loop.recordUnfinished();
		try (BufferedWriter out = Files.newBufferedWriter(history, StandardCharsets.UTF_8)) {
			synchronized (records) {
				for (String record : records) {
					out.write(record);
					out.newLine();
				}
			}
			out.write("L " + client + " " + lostNotices.get());
			out.newLine();
			for (Map.Entry<String, Integer> error : loop.errors.entrySet()) {
				out.write("E " + error.getValue() + " " + error.getKey());
				out.newLine();
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		System.out.println("DONE");
		System.out.flush();
		// The registry's and Lettuce's threads need not be shut down in order: the history is written.
		Runtime.getRuntime().halt(0);
	}

	private static BackendLockRegistry registry(String lock, LockEngineOptions options, Duration watchdog) {
		String[] kindAndServers = lock.split(":", 2);
		if (kindAndServers[0].startsWith("zookeeper")) {
			ZooKeeperLockRegistry.ExclusiveProtocol protocol = kindAndServers[0].equals("zookeeper-line")
					? ZooKeeperLockRegistry.ExclusiveProtocol.LINE : ZooKeeperLockRegistry.ExclusiveProtocol.LOCK_NODE;
			return ZooKeeperLockRegistry.owning(curator(kindAndServers[1], watchdog), "/distlock", options, protocol);
		}
		List<RedisConnectionFactory> factories = new ArrayList<>();
		for (String port : kindAndServers[1].split(",")) {
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", Integer.parseInt(port)),
					// Shorter than the watchdog timeout (docs/failure-semantics.md, timeouts), so that a renewal
					// stuck on a dead server fails while the lease still runs.
					LettuceClientConfiguration.builder().commandTimeout(CALL_TIMEOUT).build());
			factory.afterPropertiesSet();
			factory.start();
			factories.add(factory);
		}
		return switch (kindAndServers[0]) {
			case "redis" -> new RedisLockRegistry(factories.get(0), "distlock", options);
			case "redlock" -> RedlockLockRegistry.owning(factories, "distlock", RedlockSettings.DEFAULTS, options);
			default -> throw new IllegalArgumentException(
					"lock must be redis:<port>, redlock:<ports>, zookeeper:<connect string> or zookeeper-line:<connect string> but was "
							+ lock);
		};
	}

	/**
	 * A Curator client built as the auto-configuration builds one from {@code distlock.zookeeper.*},
	 * with the soak's short times: the session lasts one watchdog timeout (a frozen or cut-off client
	 * loses its holds after it, as a Redis client loses them after its lease), and a call retries a
	 * lost connection for the same second as a Redis command waits.
	 */
	private static CuratorFramework curator(String connectString, Duration sessionTimeout) {
		CuratorFramework curator = CuratorFrameworkFactory.builder()
			.connectString(connectString)
			.sessionTimeoutMs((int) sessionTimeout.toMillis())
			.connectionTimeoutMs((int) CALL_TIMEOUT.toMillis())
			.retryPolicy(new RetryUntilElapsed((int) CALL_TIMEOUT.toMillis(), 100))
			.build();
		curator.start();
		try {
			if (!curator.blockUntilConnected(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("No ZooKeeper server of " + connectString + " answered within 30 s");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while connecting to ZooKeeper", ex);
		}
		return curator;
	}

	/** The critical-section loop every thread of a client runs. */
	private static final class SectionLoop {

		private final String client;

		private final LockRegistry registry;

		private final FencedResource resource;

		private final int keys;

		private final long waitMillis;

		private final boolean sanity;

		private final List<String> records;

		/** What failed, by exception and message, with how often. */
		final Map<String, Integer> errors = new ConcurrentHashMap<>();

		private volatile boolean running = true;

		SectionLoop(String client, LockRegistry registry, FencedResource resource, int keys, long waitMillis,
				boolean sanity, List<String> records) {
			this.client = client;
			this.registry = registry;
			this.resource = resource;
			this.keys = keys;
			this.waitMillis = waitMillis;
			this.sanity = sanity;
			this.records = records;
		}

		void stop() {
			this.running = false;
		}

		/**
		 * Every thread's attempt under way (key, owner, when it began waiting), or {@code null}: what
		 * a thread that never comes back still gets recorded as.
		 */
		private final Map<String, String[]> inFlight = new ConcurrentHashMap<>();

		Runnable forThread(int index) {
			String owner = this.client + "-t" + index;
			return () -> {
				while (this.running) {
					String key = "k" + ThreadLocalRandom.current().nextInt(this.keys);
					long waitStart = System.nanoTime();
					this.inFlight.put(owner, new String[] { key, Long.toString(waitStart) });
					try {
						attempt(owner, key, waitStart);
					}
					catch (Throwable ex) {
						// The thread goes on: one unexpected failure must not end its part of the soak.
						this.errors.merge("attempt: " + describe(ex), 1, Integer::sum);
						long now = System.nanoTime();
						log(new HoldRecord("-", key, owner, waitStart, now, now, this.waitMillis, -1,
								HoldRecord.Outcome.ACQUIRE_FAILED, false, HoldRecord.Fenced.NONE));
					}
					finally {
						this.inFlight.remove(owner);
					}
				}
			};
		}

		/** Writes down the attempts of threads that did not end them by the time the client stopped. */
		void recordUnfinished() {
			long now = System.nanoTime();
			this.inFlight.forEach((owner, attempt) -> log(new HoldRecord("-", attempt[0], owner, Long.parseLong(attempt[1]),
					now, now, this.waitMillis, -1, HoldRecord.Outcome.UNFINISHED, false, HoldRecord.Fenced.NONE)));
		}

		private void attempt(String owner, String key, long waitStart) {
			ThreadLocalRandom random = ThreadLocalRandom.current();
			DistLock lock = this.registry.getLock(key);
			boolean acquired;
			try {
				acquired = this.sanity || lock.tryLock(Duration.ofMillis(this.waitMillis));
			}
			catch (InterruptedException ex) {
				// Nothing interrupts the workers but the JVM's end; this thread stops.
				Thread.currentThread().interrupt();
				this.running = false;
				return;
			}
			catch (RuntimeException ex) {
				this.errors.merge(describe(ex), 1, Integer::sum);
				long now = System.nanoTime();
				log(new HoldRecord("-", key, owner, waitStart, now, now, this.waitMillis, -1,
						HoldRecord.Outcome.ACQUIRE_FAILED, false, HoldRecord.Fenced.NONE));
				pause(50);
				return;
			}
			long start = System.nanoTime();
			if (!acquired) {
				log(new HoldRecord("-", key, owner, waitStart, start, start, this.waitMillis, -1,
						HoldRecord.Outcome.NOT_ACQUIRED, false, HoldRecord.Fenced.NONE));
				return;
			}
			String phase = "-";
			long token = -1;
			boolean plainWritten = false;
			HoldRecord.Fenced fenced = HoldRecord.Fenced.NONE;
			boolean tokenIssued = true;
			try {
				// Without a lock every section shows the same token, which a fenced resource cannot tell apart;
				// Redlock hands out none, and its sections write only the plain counter.
				token = this.sanity ? 0 : this.registry.offersFencingTokens() ? lock.getFencingToken() : -1;
			}
			catch (RuntimeException ex) {
				// Issued on request, a token is one more round trip, which a fault can fail (or find the
				// hold already lost): the section then writes nothing, and its record shows that.
				this.errors.merge("token: " + describe(ex), 1, Integer::sum);
				tokenIssued = false;
			}
			if (tokenIssued) {
				try {
					FencedResource.Snapshot seen = this.resource.read(key, token);
					phase = seen.phase();
					// Longer while a client is frozen past its lease, so that the frozen one is caught
					// holding locks: the stale holder whose writes fencing must reject.
					pause(seen.phase().startsWith("pause-long") ? 50 + random.nextInt(50) : 1 + random.nextInt(5));
					this.resource.writePlain(phase, key, seen.plain() + 1);
					plainWritten = true;
					if (token >= 0) {
						fenced = (seen.admitted() && this.resource.writeFenced(phase, key, token, seen.fenced() + 1))
								? HoldRecord.Fenced.ACCEPTED : HoldRecord.Fenced.REJECTED;
					}
				}
				catch (RuntimeException ex) {
					// The resource is never faulted; a failure here shows in the record's fields and here.
					this.errors.merge("resource: " + describe(ex), 1, Integer::sum);
				}
			}
			long end = System.nanoTime();
			HoldRecord.Outcome outcome = HoldRecord.Outcome.OK;
			if (!this.sanity) {
				try {
					lock.unlock();
				}
				catch (LockLostException ex) {
					outcome = HoldRecord.Outcome.LOST;
				}
				catch (RuntimeException ex) {
					this.errors.merge("unlock: " + describe(ex), 1, Integer::sum);
					outcome = HoldRecord.Outcome.UNLOCK_FAILED;
				}
			}
			log(new HoldRecord(phase, key, owner, waitStart, start, end, this.waitMillis, token, outcome, plainWritten,
					fenced));
		}

		private static String describe(Throwable ex) {
			String message = String.valueOf(ex.getMessage()).replace('\n', ' ');
			// Ports and numbers vary between occurrences of one failure; one line per kind is enough.
			message = message.replaceAll("[0-9]+", "N");
			return ex.getClass().getSimpleName() + ": " + message.substring(0, Math.min(message.length(), 240));
		}

		private void log(HoldRecord record) {
			this.records.add(record.format());
		}

		private static void pause(long millis) {
			try {
				Thread.sleep(millis);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
