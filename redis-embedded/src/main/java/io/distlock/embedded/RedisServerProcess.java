package io.distlock.embedded;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real {@code redis-server} child process on a local port, with no persistence. Tests use it to
 * run against real Redis servers they own; the sample app uses it when no Redis is configured.
 *
 * <p>The process is bound to 127.0.0.1, keeps nothing on disk, and is destroyed by {@link #stop()},
 * by {@link #close()}, or at the latest when the JVM exits.
 */
public final class RedisServerProcess implements AutoCloseable {

	private static final Logger log = LoggerFactory.getLogger(RedisServerProcess.class);

	private static final Duration START_TIMEOUT = Duration.ofSeconds(20);

	/** How often a server is started on another free port when the one it was given was taken meanwhile. */
	private static final int START_ATTEMPTS = 5;

	/** What redis-server logs when it cannot bind its port or its cluster bus port. */
	private static final String PORT_TAKEN = "Address already in use";

	private static final int CLUSTER_BUS_OFFSET = 10_000;

	private final int port;

	private final List<String> extraArguments = new CopyOnWriteArrayList<>();

	private final List<String> configLines;

	/** The file SAVE writes in the work directory, and a start loads (redis-server's default name). */
	private static final String SNAPSHOT = "dump.rdb";

	private final Path workDir;

	private Process process;

	private RedisServerProcess(int port, List<String> configLines, List<String> extraArguments) {
		this.port = port;
		this.configLines = List.copyOf(configLines);
		this.extraArguments.addAll(extraArguments);
		try {
			this.workDir = Files.createTempDirectory("distlock-redis-" + port + "-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Starts a server on a free port.
	 * @param extraArguments further {@code redis-server} arguments, e.g. {@code "--cluster-enabled", "yes"}
	 * @return the running server
	 */
	public static RedisServerProcess start(String... extraArguments) {
		// A cluster node also binds its bus port, its port + 10,000, which must be free as well.
		boolean clusterNode = List.of(extraArguments).contains("--cluster-enabled");
		return start(clusterNode ? RedisServerProcess::freeClusterPort : RedisServerProcess::freePort, extraArguments);
	}

	/**
	 * Starts a server on a port {@code ports} gives, and on the next one it gives should another process
	 * bind the port (or a cluster node's bus port) between the look that found it free and the server's
	 * own bind: other tests start servers on free ports at the same time.
	 */
	static RedisServerProcess start(IntSupplier ports, String... extraArguments) {
		return onFreePort(ports, port -> new RedisServerProcess(port, List.of(), List.of(extraArguments)));
	}

	private static RedisServerProcess onFreePort(IntSupplier ports, IntFunction<RedisServerProcess> server) {
		for (int attempt = 1;; attempt++) {
			RedisServerProcess starting = server.apply(ports.getAsInt());
			try {
				starting.launch();
				return starting;
			}
			catch (IllegalStateException ex) {
				starting.deleteWorkDir();
				if (attempt == START_ATTEMPTS || ex.getMessage() == null || !ex.getMessage().contains(PORT_TAKEN)) {
					throw ex;
				}
				log.debug("A port was taken before redis-server bound it; starting on another: {}", ex.getMessage());
			}
		}
	}

	/**
	 * Starts a server on the given port.
	 * @param port the port to listen on
	 * @param extraArguments further {@code redis-server} arguments
	 * @return the running server
	 */
	public static RedisServerProcess startOn(int port, String... extraArguments) {
		RedisServerProcess server = new RedisServerProcess(port, List.of(), List.of(extraArguments));
		server.launch();
		return server;
	}

	/**
	 * Starts a server on a free port with a configuration file in its work directory, for what only a
	 * file can configure: Sentinel insists on one, and rewrites it as it learns the topology (which is
	 * why the file is written once and kept across {@link #restart()}).
	 * @param configLines the file's lines, e.g. {@code "sentinel monitor mymaster 127.0.0.1 6379 2"}
	 * @param extraArguments further {@code redis-server} arguments, e.g. {@code "--sentinel"}
	 * @return the running server
	 */
	static RedisServerProcess startWithConfig(List<String> configLines, String... extraArguments) {
		return onFreePort(RedisServerProcess::freePort,
				port -> new RedisServerProcess(port, configLines, List.of(extraArguments)));
	}

	/** @return the port this server listens on */
	public int port() {
		return this.port;
	}

	/** @return the host this server listens on */
	public String host() {
		return "127.0.0.1";
	}

	/** @return a {@code redis://} URI of this server */
	public String uri() {
		return "redis://" + host() + ":" + this.port;
	}

	/** @return whether the process is alive */
	public synchronized boolean isRunning() {
		return this.process != null && this.process.isAlive();
	}

	/**
	 * Kills the process at once (SIGKILL), as a crash would; the data is gone with it.
	 */
	public synchronized void kill() {
		if (this.process != null) {
			this.process.destroyForcibly();
			waitForExit();
		}
	}

	/**
	 * Freezes the process (SIGSTOP), as a long GC pause or a stalled VM would: connections stay
	 * open but nothing answers. {@link #resume()} thaws it.
	 */
	public synchronized void pause() {
		ProcessSignals.freeze(this.process.pid());
	}

	/** Thaws a {@link #pause() paused} process (SIGCONT). */
	public synchronized void resume() {
		ProcessSignals.thaw(this.process.pid());
	}

	/**
	 * Starts the server again on the same port, empty, after {@link #kill()} or {@link #stop()}.
	 */
	public synchronized void restart() {
		if (isRunning()) {
			kill();
		}
		// A snapshot a test saved must not come back: this restart is an empty one.
		deleteQuietly(this.workDir.resolve(SNAPSHOT));
		launch();
	}

	/**
	 * Kills the server (SIGKILL) and starts it again on the same port from the snapshot that
	 * {@code SAVE} wrote last, as a server persisting with RDB snapshots (Redis's default) restarts:
	 * what changed after that save is gone, what it had before comes back.
	 * @throws IllegalStateException if no snapshot was saved
	 */
	public synchronized void restartFromSnapshot() {
		if (Files.notExists(this.workDir.resolve(SNAPSHOT))) {
			throw new IllegalStateException("No snapshot to restart from: run SAVE first");
		}
		if (isRunning()) {
			kill();
		}
		launch();
	}

	private static void deleteQuietly(Path file) {
		try {
			Files.deleteIfExists(file);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not delete " + file, ex);
		}
	}

	/**
	 * Starts the server again on the same port after {@link #kill()}, with further arguments for
	 * this launch only; with {@code "--appendonly", "yes"} it loads what it had written to its
	 * append-only file (enabled at run time with {@code CONFIG SET appendonly yes}) before it was
	 * killed, as a server persisting to disk restarts. A later {@link #restart()} starts empty again.
	 * @param moreArguments further {@code redis-server} arguments; later ones win
	 */
	public synchronized void restartWith(String... moreArguments) {
		if (isRunning()) {
			kill();
		}
		List<String> usual = List.copyOf(this.extraArguments);
		this.extraArguments.addAll(List.of(moreArguments));
		try {
			launch();
		}
		finally {
			this.extraArguments.clear();
			this.extraArguments.addAll(usual);
		}
	}

	/**
	 * Stops the process (SIGTERM, then SIGKILL if it lingers).
	 */
	public synchronized void stop() {
		if (this.process != null && this.process.isAlive()) {
			this.process.destroy();
			waitForExit();
		}
	}

	@Override
	public void close() {
		stop();
		deleteWorkDir();
	}

	/**
	 * Sends one command over a plain socket and returns the raw reply; for fixture set-up (e.g.
	 * {@code DEBUG SLEEP}, {@code SCRIPT FLUSH}) without pulling a client library in.
	 * @param arguments the command and its arguments
	 * @return the raw RESP reply's first line
	 */
	public String command(String... arguments) {
		return send(arguments, RedisServerProcess::readLine);
	}

	/**
	 * Sends one command and returns its whole reply as text: bulk strings as their content, arrays
	 * as their elements one per line, errors as {@code -ERR ...}.
	 * @param arguments the command and its arguments
	 * @return the reply
	 */
	public String query(String... arguments) {
		return send(arguments, in -> readReply(new java.io.BufferedInputStream(in)));
	}

	private String send(String[] arguments, ReplyReader reader) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host(), this.port), 2000);
			socket.setSoTimeout(30_000);
			StringBuilder request = new StringBuilder("*").append(arguments.length).append("\r\n");
			for (String argument : arguments) {
				byte[] bytes = argument.getBytes(StandardCharsets.UTF_8);
				request.append('$').append(bytes.length).append("\r\n").append(argument).append("\r\n");
			}
			OutputStream out = socket.getOutputStream();
			out.write(request.toString().getBytes(StandardCharsets.UTF_8));
			out.flush();
			return reader.read(socket.getInputStream());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Redis on port " + this.port + " did not answer " + arguments[0], ex);
		}
	}

	@FunctionalInterface
	private interface ReplyReader {

		String read(InputStream in) throws IOException;

	}

	private static String readReply(InputStream in) throws IOException {
		String line = readLine(in);
		if (line.isEmpty()) {
			return line;
		}
		switch (line.charAt(0)) {
			case '$' -> {
				int length = Integer.parseInt(line.substring(1));
				if (length < 0) {
					return "";
				}
				byte[] content = in.readNBytes(length + 2);
				return new String(content, 0, length, StandardCharsets.UTF_8);
			}
			case '*' -> {
				int count = Integer.parseInt(line.substring(1));
				StringBuilder elements = new StringBuilder();
				for (int i = 0; i < count; i++) {
					elements.append(readReply(in)).append('\n');
				}
				return elements.toString();
			}
			case '+', ':' -> {
				return line.substring(1);
			}
			default -> {
				return line;
			}
		}
	}

	private static String readLine(InputStream in) throws IOException {
		StringBuilder line = new StringBuilder();
		int c;
		while ((c = in.read()) != -1 && c != '\n') {
			if (c != '\r') {
				line.append((char) c);
			}
		}
		return line.toString();
	}

	private void launch() {
		List<String> command = new ArrayList<>(List.of(RedisServerBinary.find().toString()));
		if (!this.configLines.isEmpty()) {
			// redis-server takes a configuration file only as its first argument.
			command.add(configFile().toString());
		}
		command.addAll(List.of("--port", String.valueOf(this.port), "--bind", host(), "--save", "", "--appendonly", "no",
				"--dir", this.workDir.toString(), "--protected-mode", "no"));
		command.addAll(this.extraArguments);
		try {
			this.process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(this.workDir.resolve("redis.log").toFile())
				.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start " + command, ex);
		}
		Runtime.getRuntime().addShutdownHook(new Thread(this.process::destroyForcibly, "redis-" + this.port + "-reaper"));
		awaitReady();
		log.debug("redis-server started on port {}", this.port);
	}

	private Path configFile() {
		Path file = this.workDir.resolve("redis.conf");
		if (Files.notExists(file)) {
			try {
				Files.write(file, this.configLines);
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not write " + file, ex);
			}
		}
		return file;
	}

	private void awaitReady() {
		long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException("redis-server on port " + this.port + " exited at start: " + logTail());
			}
			try {
				if ("+PONG".equals(command("PING")) && answersItself()) {
					return;
				}
			}
			catch (UncheckedIOException notYet) {
				// Still starting: the port is not accepting yet.
			}
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while waiting for redis-server", ex);
			}
		}
		this.process.destroyForcibly();
		throw new IllegalStateException("redis-server on port " + this.port + " did not answer PING within "
				+ START_TIMEOUT + ": " + logTail());
	}

	/**
	 * Whether this process answered, not another server that holds the port (this one then exits,
	 * unable to bind it): an answer naming another process id is not this server's.
	 */
	private boolean answersItself() {
		String processId = query("INFO", "server").lines()
			.filter(line -> line.startsWith("process_id:"))
			.map(line -> line.substring("process_id:".length()).strip())
			.findFirst()
			.orElse(null);
		return processId == null || processId.equals(String.valueOf(this.process.pid()));
	}

	private String logTail() {
		try {
			List<String> lines = Files.readAllLines(this.workDir.resolve("redis.log"));
			return String.join("\n", lines.subList(Math.max(0, lines.size() - 10), lines.size()));
		}
		catch (IOException ex) {
			return "(no log: " + ex.getMessage() + ")";
		}
	}

	private void waitForExit() {
		try {
			if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
				this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void deleteWorkDir() {
		try (var files = Files.walk(this.workDir)) {
			files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
		}
		catch (IOException ex) {
			log.debug("Could not delete {}", this.workDir, ex);
		}
	}

	/**
	 * Finds a port that is free right now. Another process may still take it before the server
	 * binds; the caller retries on a start failure if that matters.
	 * @return a free local port
	 */
	public static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			socket.setReuseAddress(true);
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * @return a port that is free now and whose cluster bus port (the port + 10,000, which Linux's
	 * free ports of the lower half of its range can meet) is free too
	 */
	static int freeClusterPort() {
		while (true) {
			int port = freePort();
			if (port + CLUSTER_BUS_OFFSET <= 65_535 && isFree(port + CLUSTER_BUS_OFFSET)) {
				return port;
			}
		}
	}

	private static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket()) {
			socket.setReuseAddress(true);
			socket.bind(new InetSocketAddress("127.0.0.1", port));
			return true;
		}
		catch (IOException taken) {
			return false;
		}
	}

}
