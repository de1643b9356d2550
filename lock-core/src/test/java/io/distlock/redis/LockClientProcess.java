package io.distlock.redis;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistLock;
import io.distlock.core.LockEngineOptions;

/**
 * A lock client in a JVM of its own, which a test can freeze (SIGSTOP) or kill (SIGKILL) as a GC
 * pause, a stalled VM or a crash would, something threads of the test's own JVM cannot be made to
 * suffer. Started and driven by {@link ForkedLockClient}.
 *
 * <p>Arguments: {@code <host> <port> <watchdog timeout ms>}. Commands, one per line on stdin, all run
 * on one locking thread in order (a hold belongs to the thread that took it):
 * <ul>
 * <li>{@code trylock <name> <wait ms>}: answers {@code ACQUIRED <fencing token> <System.nanoTime()>},
 * {@code NOT_ACQUIRED <System.nanoTime()>} or {@code ERROR <exception>}</li>
 * <li>{@code unlock}: answers {@code UNLOCKED} or {@code ERROR <exception>}</li>
 * <li>{@code exit}, or the end of stdin (the test is gone): halts at once</li>
 * </ul>
 * It answers {@code READY <pid>} once connected and warmed up. Replies go to stdout, which is the
 * protocol here, not logging; log lines (also on stdout) never start with a reply word.
 */
public final class LockClientProcess {

	private static final ExecutorService locker = Executors.newSingleThreadExecutor(runnable -> {
		Thread thread = new Thread(runnable, "lock-client");
		thread.setDaemon(true);
		return thread;
	});

	/** The lock the locking thread holds; only that thread touches it. */
	private static DistLock held;

	private LockClientProcess() {
	}

	/**
	 * Longer than any freeze a test imposes: a command outstanding when the client is frozen must meet
	 * Redis's late reply when it is thawed, which is what those tests are about. With 5 s, a freeze of
	 * a 3 s lease plus a loaded machine's seconds had the thawed client's own timeout fire first, and
	 * its tryLock failed ("Redis did not answer within 5000 ms") instead of acquiring after C.
	 */
	private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);

	public static void main(String[] args) throws Exception {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(args[0], Integer.parseInt(args[1])),
				LettuceClientConfiguration.builder().commandTimeout(COMMAND_TIMEOUT).build());
		factory.afterPropertiesSet();
		factory.start();
		RedisLockRegistry registry = new RedisLockRegistry(factory, "distlock",
				LockEngineOptions.builder().watchdogTimeout(Duration.ofMillis(Long.parseLong(args[2]))).build());
		// Connects and loads the scripts now, so that the test's first command is not slowed by either.
		locker.submit(() -> {
			DistLock warmUp = registry.getLock("warm-up:" + ProcessHandle.current().pid());
			if (warmUp.tryLock(Duration.ofSeconds(10))) {
				warmUp.unlock();
			}
			return null;
		}).get();
		reply("READY " + ProcessHandle.current().pid());
		BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		String line;
		while ((line = commands.readLine()) != null) {
			String[] words = line.trim().split(" ");
			switch (words[0]) {
				case "trylock" -> locker.execute(() -> tryLock(registry.getLock(words[1]), Duration.ofMillis(Long.parseLong(words[2]))));
				case "unlock" -> locker.execute(LockClientProcess::unlock);
				case "exit" -> Runtime.getRuntime().halt(0);
				default -> reply("ERROR unknown command '" + line + "'");
			}
		}
		Runtime.getRuntime().halt(0);
	}

	private static void tryLock(DistLock lock, Duration wait) {
		try {
			if (lock.tryLock(wait)) {
				long at = System.nanoTime();
				held = lock;
				reply("ACQUIRED " + lock.getFencingToken() + " " + at);
			}
			else {
				reply("NOT_ACQUIRED " + System.nanoTime());
			}
		}
		catch (Exception ex) {
			reply("ERROR " + ex);
		}
	}

	private static void unlock() {
		try {
			held.unlock();
			held = null;
			reply("UNLOCKED");
		}
		catch (RuntimeException ex) {
			reply("ERROR " + ex);
		}
	}

	private static synchronized void reply(String line) {
		System.out.println(line);
		System.out.flush();
	}

}
