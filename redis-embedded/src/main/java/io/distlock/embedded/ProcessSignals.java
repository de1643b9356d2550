package io.distlock.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Freezes and thaws test processes (SIGSTOP, SIGCONT) and returns only once the kernel has done it.
 * {@code kill} returns when the signal is sent, not when every thread of the process has stopped:
 * a test that releases a lock right after it could see the "frozen" process take it first (seen on
 * a loaded CI machine). Where {@code /proc} shows the process, these wait until every one of its
 * threads is stopped (state {@code T}), or none is.
 */
public final class ProcessSignals {

	private static final Duration SETTLE_WITHIN = Duration.ofSeconds(30);

	private ProcessSignals() {
	}

	/**
	 * Sends SIGSTOP and waits until every thread of the process is stopped.
	 * @param pid the process
	 * @throws IllegalStateException if it is not stopped within 30 s
	 */
	public static void freeze(long pid) {
		signal(pid, "-STOP");
		awaitThreads(pid, true);
	}

	/**
	 * Sends SIGCONT and waits until no thread of the process is stopped.
	 * @param pid the process
	 * @throws IllegalStateException if it is still stopped after 30 s
	 */
	public static void thaw(long pid) {
		signal(pid, "-CONT");
		awaitThreads(pid, false);
	}

	private static void signal(long pid, String signal) {
		try {
			Process kill = new ProcessBuilder("kill", signal, Long.toString(pid)).redirectErrorStream(true).start();
			if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
				throw new IllegalStateException("kill " + signal + " " + pid + " failed");
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while signalling process " + pid, ex);
		}
	}

	private static void awaitThreads(long pid, boolean stopped) {
		Path tasks = Path.of("/proc", Long.toString(pid), "task");
		if (!Files.isDirectory(tasks)) {
			// No /proc (not Linux), or the process is gone: nothing to wait for.
			return;
		}
		long until = System.nanoTime() + SETTLE_WITHIN.toNanos();
		while (!allThreads(tasks, stopped)) {
			if (System.nanoTime() - until > 0) {
				throw new IllegalStateException("Process " + pid + " is " + (stopped ? "not stopped" : "still stopped")
						+ " " + SETTLE_WITHIN.toSeconds() + " s after the signal");
			}
			try {
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while waiting for process " + pid, ex);
			}
		}
	}

	/** @return whether every thread's state (in /proc/PID/task/TID/stat) is stopped, or none is */
	private static boolean allThreads(Path tasks, boolean stopped) {
		List<Path> threads;
		try (Stream<Path> listing = Files.list(tasks)) {
			threads = listing.toList();
		}
		catch (NoSuchFileException gone) {
			return true;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		for (Path thread : threads) {
			Character state = state(thread.resolve("stat"));
			if (state != null && isStopped(state) != stopped) {
				return false;
			}
		}
		return true;
	}

	/** @return the state letter of one thread, or null if it has ended meanwhile */
	private static Character state(Path stat) {
		String line;
		try {
			line = Files.readString(stat);
		}
		catch (NoSuchFileException ended) {
			return null;
		}
		catch (IOException ex) {
			// A thread that ended while it was read.
			return null;
		}
		// "pid (comm) S ...": comm may hold spaces and parentheses, so the state follows the last ')'.
		int end = line.lastIndexOf(')');
		return (end >= 0 && end + 2 < line.length()) ? line.charAt(end + 2) : null;
	}

	private static boolean isStopped(char state) {
		// T: stopped by a signal; t: stopped by a tracer.
		return state == 'T' || state == 't';
	}

}
