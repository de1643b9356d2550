package io.distlock.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.distlock.embedded.ProcessSignals;
import io.distlock.embedded.RedisServerProcess;

/**
 * A ZooKeeper ensemble of real server processes ({@code QuorumPeerMain}, each a JVM of its own on
 * this JVM's class path, on free ports), so that one can be killed, frozen or restarted empty as a
 * crashed, stalled or replaced machine would be. The soak's ZooKeeper run locks on it.
 *
 * <p>The servers tick every {@value #TICK_MILLIS} ms, so that sessions of a few seconds are allowed
 * (ZooKeeper accepts 2 to 20 ticks) and a frozen leader is replaced within {@code syncLimit}
 * ticks. They do not fsync their transaction log: the faults here kill processes, not machines,
 * and what a killed process wrote is still in the operating system's cache; an fsync per write
 * would only slow the soak's clients on a busy machine.
 */
final class ZooKeeperEnsemble implements AutoCloseable {

	static final int TICK_MILLIS = 250;

	private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

	private final List<Server> servers = new ArrayList<>();

	private final Path directory;

	/**
	 * Starts the servers and waits until they have chosen a leader.
	 * @param size how many servers
	 * @param directory where each keeps its data and log
	 */
	ZooKeeperEnsemble(int size, Path directory) {
		this.directory = directory;
		List<String> peers = new ArrayList<>();
		for (int id = 1; id <= size; id++) {
			Server server = new Server(id, RedisServerProcess.freePort(), RedisServerProcess.freePort(),
					RedisServerProcess.freePort());
			this.servers.add(server);
			peers.add("server." + id + "=127.0.0.1:" + server.peerPort + ":" + server.electionPort);
		}
		Runtime.getRuntime().addShutdownHook(new Thread(this::close, "zookeeper-ensemble-reaper"));
		try {
			for (Server server : this.servers) {
				server.configure(peers);
				server.launch();
			}
			awaitLeader();
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
	}

	/** @return the connect string a client uses, every server listed */
	String connectString() {
		return String.join(",", this.servers.stream().map(server -> "127.0.0.1:" + server.clientPort).toList());
	}

	/** @return how many servers there are */
	int size() {
		return this.servers.size();
	}

	/** @return the index of the server that leads now (waiting for an election, if one runs) */
	int leader() {
		return awaitLeader();
	}

	/** @return the index of a server that follows the current leader */
	int follower() {
		int leader = awaitLeader();
		for (int i = 0; i < this.servers.size(); i++) {
			if (i != leader && "follower".equals(this.servers.get(i).mode())) {
				return i;
			}
		}
		throw new IllegalStateException("No server follows the leader: " + modes());
	}

	/** Kills server {@code index} at once (SIGKILL), as a crash would; its data directory stays. */
	void kill(int index) {
		this.servers.get(index).kill();
	}

	/** Starts a killed server again on its ports, from the data it had written. */
	void restart(int index) {
		this.servers.get(index).launch();
	}

	/** Starts a killed server again with an empty data directory, as a replaced machine would join. */
	void restartEmpty(int index) {
		Server server = this.servers.get(index);
		server.wipe();
		server.launch();
	}

	/** Freezes server {@code index} (SIGSTOP): connections stay open but nothing answers. */
	void pause(int index) {
		ProcessSignals.freeze(this.servers.get(index).process.pid());
	}

	/** Thaws a frozen server (SIGCONT). */
	void resume(int index) {
		ProcessSignals.thaw(this.servers.get(index).process.pid());
	}

	/**
	 * Waits until one server leads and every running server serves, for example after a restart.
	 * @return the leader's index
	 */
	int awaitLeader() {
		long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
		while (System.nanoTime() < deadline) {
			int leader = -1;
			boolean allServing = true;
			for (int i = 0; i < this.servers.size(); i++) {
				Server server = this.servers.get(i);
				if (!server.isRunning()) {
					continue;
				}
				String mode = server.mode();
				if ("leader".equals(mode)) {
					leader = i;
				}
				else if (!"follower".equals(mode)) {
					allServing = false;
				}
			}
			if (leader >= 0 && allServing) {
				return leader;
			}
			ChaosSoak.sleep(Duration.ofMillis(100));
		}
		throw new IllegalStateException("The ZooKeeper ensemble chose no leader within " + START_TIMEOUT + ": "
				+ modes() + "; see the servers' logs in " + this.directory);
	}

	private String modes() {
		return String.join(", ", this.servers.stream().map(server -> "server " + server.id + " " + server.mode()).toList());
	}

	@Override
	public void close() {
		for (Server server : this.servers) {
			server.kill();
		}
	}

	/** One server process and what it needs to start again on the same ports. */
	private final class Server {

		final int id;

		final int clientPort;

		final int peerPort;

		final int electionPort;

		final Path home;

		private Process process;

		Server(int id, int clientPort, int peerPort, int electionPort) {
			this.id = id;
			this.clientPort = clientPort;
			this.peerPort = peerPort;
			this.electionPort = electionPort;
			this.home = ZooKeeperEnsemble.this.directory.resolve("zk" + id);
		}

		void configure(List<String> peers) {
			List<String> config = new ArrayList<>(List.of("tickTime=" + TICK_MILLIS, "initLimit=40", "syncLimit=8",
					"dataDir=" + this.home.resolve("data"), "clientPort=" + this.clientPort,
					"clientPortAddress=127.0.0.1", "maxClientCnxns=0", "forceSync=no", "admin.enableServer=false",
					// "srvr" tells the orchestrator which server leads.
					"4lw.commands.whitelist=srvr", "standaloneEnabled=false"));
			config.addAll(peers);
			try {
				Files.createDirectories(this.home);
				Files.write(this.home.resolve("zoo.cfg"), config, StandardCharsets.UTF_8);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		synchronized void launch() {
			try {
				Path data = Files.createDirectories(this.home.resolve("data"));
				Files.writeString(data.resolve("myid"), Integer.toString(this.id), StandardCharsets.UTF_8);
				List<String> command = List.of(ProcessHandle.current().info().command().orElse("java"), "-Xmx192m",
						"-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
						"org.apache.zookeeper.server.quorum.QuorumPeerMain", this.home.resolve("zoo.cfg").toString());
				this.process = new ProcessBuilder(command).redirectErrorStream(true)
					.redirectOutput(ProcessBuilder.Redirect.appendTo(this.home.resolve("server.log").toFile()))
					.start();
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not start ZooKeeper server " + this.id, ex);
			}
		}

		synchronized boolean isRunning() {
			return this.process != null && this.process.isAlive();
		}

		synchronized void kill() {
			if (this.process == null) {
				return;
			}
			this.process.destroyForcibly();
			try {
				this.process.waitFor(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		void wipe() {
			if (isRunning()) {
				throw new IllegalStateException("ZooKeeper server " + this.id + " still runs; kill it first");
			}
			try (Stream<Path> files = Files.walk(this.home.resolve("data"))) {
				files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		/** @return "leader", "follower", or "down" when the server does not serve */
		String mode() {
			try (Socket socket = new Socket()) {
				socket.connect(new InetSocketAddress("127.0.0.1", this.clientPort), 1000);
				socket.setSoTimeout(1000);
				OutputStream out = socket.getOutputStream();
				out.write("srvr".getBytes(StandardCharsets.US_ASCII));
				out.flush();
				InputStream in = socket.getInputStream();
				for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
					if (line.startsWith("Mode: ")) {
						return line.substring("Mode: ".length()).trim();
					}
				}
				return "down";
			}
			catch (IOException ex) {
				return "down";
			}
		}

	}

}
