package io.distlock.redis;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.embedded.ProcessSignals;
import io.distlock.embedded.RedisServerProcess;

/**
 * Drives a {@link LockClientProcess} in a JVM of its own: sends it commands, collects its replies,
 * and freezes, thaws or kills it. Close it in {@code @AfterEach}: that kills the process, frozen or
 * not.
 *
 * <p>The child runs on this JVM's class path. Under Surefire that may be a manifest-only booter jar,
 * whose {@code Class-Path} entry {@code java -cp} honours, so the test classes are found either way.
 */
final class ForkedLockClient implements AutoCloseable {

	private static final Logger log = LoggerFactory.getLogger(ForkedLockClient.class);

	/** The words a reply starts with; every other line of the child's output is logging. */
	private static final Pattern REPLY = Pattern.compile("^(READY|ACQUIRED|NOT_ACQUIRED|UNLOCKED|ERROR)\\b.*");

	private final Process process;

	private final Writer commands;

	private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();

	private ForkedLockClient(Process process) {
		this.process = process;
		this.commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
		Thread reader = new Thread(this::readOutput, "forked-lock-client-" + process.pid());
		reader.setDaemon(true);
		reader.start();
	}

	/**
	 * Starts a client JVM and waits until it is connected and warmed up.
	 * @param server the Redis server to lock on
	 * @param watchdogTimeout the client's watchdog timeout, the lease of its locks
	 * @return the running client
	 */
	static ForkedLockClient start(RedisServerProcess server, Duration watchdogTimeout) {
		List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
				"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
				LockClientProcess.class.getName(), server.host(), String.valueOf(server.port()),
				String.valueOf(watchdogTimeout.toMillis()));
		ForkedLockClient client;
		try {
			client = new ForkedLockClient(new ProcessBuilder(command).redirectErrorStream(true).start());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start the client JVM", ex);
		}
		String ready = client.nextReply(Duration.ofSeconds(60));
		if (ready == null || !ready.startsWith("READY")) {
			client.close();
			throw new IllegalStateException("The client JVM did not start: " + ready);
		}
		return client;
	}

	/** Sends one command line (see {@link LockClientProcess}). */
	void send(String command) {
		try {
			this.commands.write(command + "\n");
			this.commands.flush();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not send '" + command + "' to client " + pid(), ex);
		}
	}

	/**
	 * @param timeout how long to wait at most
	 * @return the next reply, or {@code null} if none came within the timeout
	 */
	String nextReply(Duration timeout) {
		try {
			return this.replies.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for client " + pid(), ex);
		}
	}

	long pid() {
		return this.process.pid();
	}

	/** Freezes the client JVM (SIGSTOP), as a long GC pause or a stalled VM would. */
	void freeze() {
		// Returns once every thread is stopped: a release right after must not reach a running client.
		ProcessSignals.freeze(pid());
	}

	/** Thaws a frozen client JVM (SIGCONT). */
	void resume() {
		ProcessSignals.thaw(pid());
	}

	/** Kills the client JVM (SIGKILL), as a crash would, and waits until it is gone. */
	void kill() {
		this.process.destroyForcibly();
		try {
			if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
				throw new IllegalStateException("Client " + pid() + " did not die");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while killing client " + pid(), ex);
		}
	}

	@Override
	public void close() {
		if (this.process.isAlive()) {
			kill();
		}
	}

	private void readOutput() {
		try (BufferedReader output = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = output.readLine()) != null) {
				log.info("[client {}] {}", this.process.pid(), line);
				if (REPLY.matcher(line).matches()) {
					this.replies.add(line);
				}
			}
		}
		catch (IOException ex) {
			log.debug("Output of client {} ended", this.process.pid(), ex);
		}
	}

}
