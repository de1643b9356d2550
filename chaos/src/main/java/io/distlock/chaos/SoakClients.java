package io.distlock.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.distlock.embedded.ProcessSignals;

/**
 * The soak's client processes, as the orchestrator sees them: started with this JVM's class path,
 * frozen and thawed with signals, stopped by a line on their input, and read back from the history
 * files they write when they stop.
 */
final class SoakClients implements AutoCloseable {

	private final List<Client> clients = new CopyOnWriteArrayList<>();

	/**
	 * Starts {@code count} clients and waits until each is ready.
	 * @param count how many processes
	 * @param arguments the {@link SoakClient} arguments they share ({@code client} and
	 * {@code history} are added per client)
	 * @param directory where histories and logs go
	 */
	SoakClients(int count, List<String> arguments, Path directory) {
		// Also on the orchestrator's own end (Ctrl-C, a CI timeout): SIGKILL ends a frozen client too.
		Runtime.getRuntime().addShutdownHook(new Thread(this::close, "soak-clients-reaper"));
		try {
			for (int i = 1; i <= count; i++) {
				this.clients.add(new Client("c" + i, arguments, directory));
			}
			for (Client client : this.clients) {
				client.awaitReady();
			}
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
	}

	/** @return the process ids, in client order */
	List<Long> pids() {
		return this.clients.stream().map(client -> client.process.pid()).toList();
	}

	/** Freezes client {@code index} (SIGSTOP), as a long GC pause or a stalled VM would. */
	void pause(int index) {
		ProcessSignals.freeze(this.clients.get(index).process.pid());
	}

	/** Thaws a frozen client (SIGCONT). */
	void resume(int index) {
		ProcessSignals.thaw(this.clients.get(index).process.pid());
	}

	/**
	 * Stops every client and reads their histories.
	 * @return every record, and the lost-hold notices per client
	 */
	History stop() {
		for (Client client : this.clients) {
			client.send("stop");
		}
		History history = new History();
		for (Client client : this.clients) {
			client.awaitDone();
			history.read(client.history);
		}
		return history;
	}

	@Override
	public void close() {
		for (Client client : this.clients) {
			// SIGKILL ends a frozen process too; the history of one that did not stop is lost anyway.
			client.process.destroyForcibly();
		}
	}

	/** The records of every client of one run. */
	static final class History {

		final List<HoldRecord> records = new ArrayList<>();

		int lostNotices;

		/** What failed in the clients, by kind, with how often. */
		final Map<String, Integer> errors = new TreeMap<>();

		void read(Path file) {
			try {
				for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
					if (line.startsWith("H ")) {
						this.records.add(HoldRecord.parse(line));
					}
					else if (line.startsWith("L ")) {
						this.lostNotices += Integer.parseInt(line.substring(line.lastIndexOf(' ') + 1));
					}
					else if (line.startsWith("E ")) {
						String[] countAndKind = line.substring(2).split(" ", 2);
						this.errors.merge(countAndKind[1], Integer.parseInt(countAndKind[0]), Integer::sum);
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not read the history " + file, ex);
			}
		}

	}

	private static final class Client {

		private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

		private final String name;

		private final Process process;

		private final Path history;

		private final CountDownLatch ready = new CountDownLatch(1);

		private final CountDownLatch done = new CountDownLatch(1);

		Client(String name, List<String> arguments, Path directory) {
			this.name = name;
			this.history = directory.resolve(name + ".history");
			List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
					"-Xmx384m", "-cp", System.getProperty("java.class.path"), SoakClient.class.getName()));
			command.addAll(arguments);
			command.add("client=" + name);
			command.add("history=" + this.history);
			try {
				this.process = new ProcessBuilder(command).redirectError(directory.resolve(name + ".log").toFile()).start();
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not start soak client " + name, ex);
			}
			Thread reader = new Thread(this::readReplies, "soak-" + name + "-replies");
			reader.setDaemon(true);
			reader.start();
		}

		private void readReplies() {
			try (BufferedReader replies = new BufferedReader(
					new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
				String line;
				while ((line = replies.readLine()) != null) {
					if (line.startsWith("READY")) {
						this.ready.countDown();
					}
					else if (line.startsWith("DONE")) {
						this.done.countDown();
					}
				}
			}
			catch (IOException ex) {
				// The process ended.
			}
		}

		void awaitReady() {
			await(this.ready, START_TIMEOUT, "start");
		}

		void awaitDone() {
			await(this.done, Duration.ofSeconds(90), "stop");
		}

		private void await(CountDownLatch latch, Duration timeout, String what) {
			try {
				if (!latch.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
					throw new IllegalStateException("Soak client " + this.name + " did not " + what + " within " + timeout
							+ " (alive: " + this.process.isAlive() + "); see its log");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted", ex);
			}
		}

		void send(String line) {
			try {
				OutputStream in = this.process.getOutputStream();
				in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
				in.flush();
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not reach soak client " + this.name, ex);
			}
		}

	}

}
