package io.distlock.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.distlock.embedded.RedisServerBinary;
import io.distlock.embedded.RedisServerProcess;

/**
 * Scenario 15, named to run ({@code -Dbench.scenarios=instructions}): the instructions one
 * uncontended lock-and-unlock costs the Redis server, counted by Valgrind's callgrind on a
 * {@code redis-server} of its own, one library after the other, one thread, the same number of pairs.
 * Unlike CPU time, the count does not move with the machine's load, so two runs agree to within a
 * fraction of a percent: it settles what the timed scenarios' ratios cannot on a busy machine. It
 * counts the server's own work (parsing, scripts, commands, replies), not the kernel's socket work,
 * which grows with round trips and is the same per round trip for every library; that is why these
 * ratios are wider than scenario 1's Redis CPU ratios. Skipped, with a note, where Valgrind is not
 * installed.
 */
final class InstructionsScenario {

	/** Pairs counted per library; callgrind runs the server some 50 times slower. */
	private static final int PAIRS = 2000;

	private InstructionsScenario() {
	}

	/**
	 * @param only which libraries to run, by name
	 * @param report receives the scenario's lines
	 */
	static void run(java.util.function.Predicate<String> only, List<String> report) throws Exception {
		report.add("");
		report.add("Scenario 15, Redis instructions per uncontended lock()+unlock() pair (callgrind; one thread, "
				+ PAIRS + " pairs after 300)");
		if (RedisServerBinary.onPath("valgrind").isEmpty() || RedisServerBinary.onPath("callgrind_control").isEmpty()) {
			report.add("skipped: valgrind (with callgrind_control) is not installed");
			return;
		}
		Path dir = Files.createTempDirectory("distlock-callgrind");
		int port = RedisServerProcess.freePort();
		Process server = new ProcessBuilder("valgrind", "--tool=callgrind", "--instr-atstart=no",
				"--callgrind-out-file=" + dir.resolve("cg.%p"), RedisServerBinary.find().toString(), "--port",
				String.valueOf(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString())
			.redirectErrorStream(true)
			.redirectOutput(dir.resolve("server.log").toFile())
			.start();
		Map<String, Long> perPair = new LinkedHashMap<>();
		try {
			awaitPong(port, server);
			List<Contender> contenders = new ArrayList<>(Contenders.all("127.0.0.1", port));
			// The starter's default: a restart grace as long as the watchdog timeout.
			contenders.add(1, Contenders.distlock("distlock-grace", () -> Contenders.connectionFactory("127.0.0.1", port),
					Duration.ofSeconds(30)));
			if (contenders.stream().noneMatch(contender -> contender.name().equals("floor-script"))) {
				contenders.add(Contenders.scriptFloor("127.0.0.1", port));
			}
			for (Contender contender : contenders) {
				if (only.test(contender.name())) {
					perPair.put(contender.name(), count(contender, server.pid(), dir));
					command(port, "FLUSHALL");
				}
			}
		}
		finally {
			server.destroy();
			if (!server.waitFor(30, TimeUnit.SECONDS)) {
				server.destroyForcibly().waitFor();
			}
			try (Stream<Path> files = Files.list(dir)) {
				for (Path file : files.toList()) {
					Files.deleteIfExists(file);
				}
			}
			Files.deleteIfExists(dir);
		}
		report.add(String.format(Locale.ROOT, "%-16s %12s %10s %14s", "library", "instr/pair", "/ naive", "/ floor-script"));
		Long naive = perPair.get("naive");
		Long floor = perPair.get("floor-script");
		perPair.forEach((name, instructions) -> report.add(String.format(Locale.ROOT, "%-16s %12d %10s %14s", name,
				instructions, ratio(instructions, naive), ratio(instructions, floor))));
		perPair.forEach((name, instructions) -> report
			.add("RESULT scenario=instructions lib=" + name + " instructionsPerPair=" + instructions));
		for (String name : List.of("distlock", "distlock-grace")) {
			if (perPair.containsKey(name)) {
				report.add("RATIO scenario=instructions " + name + "/naive instructions=" + ratio(perPair.get(name), naive)
						+ " " + name + "/floor-script instructions=" + ratio(perPair.get(name), floor));
			}
		}
	}

	/** Counts the server's instructions over {@link #PAIRS} pairs of one client of {@code contender}. */
	private static long count(Contender contender, long pid, Path dir) throws Exception {
		try (Contender.Client client = contender.newClient()) {
			Lock lock = client.lock("instructions");
			for (int i = 0; i < 300; i++) {
				lock.lock();
				lock.unlock();
			}
			callgrind("-z", pid);
			callgrind("-i", "on", pid);
			for (int i = 0; i < PAIRS; i++) {
				lock.lock();
				lock.unlock();
			}
			callgrind("-i", "off", pid);
			Set<Path> before = dumps(dir, pid);
			callgrind("-d", pid);
			Path dump = awaitNewDump(dir, pid, before);
			return totals(dump) / PAIRS;
		}
	}

	private static void callgrind(Object... arguments) throws Exception {
		List<String> command = new ArrayList<>(List.of("callgrind_control"));
		for (Object argument : arguments) {
			command.add(String.valueOf(argument));
		}
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
		if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
			throw new IllegalStateException("callgrind_control " + command.subList(1, command.size()) + " failed");
		}
	}

	private static Set<Path> dumps(Path dir, long pid) throws IOException {
		try (Stream<Path> files = Files.list(dir)) {
			return files.filter(file -> file.getFileName().toString().startsWith("cg." + pid + "."))
				.collect(Collectors.toSet());
		}
	}

	/** callgrind_control returns once the dump is asked for; the file is complete when its totals line is written. */
	private static Path awaitNewDump(Path dir, long pid, Set<Path> before) throws Exception {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
		while (System.nanoTime() < deadline) {
			for (Path dump : dumps(dir, pid)) {
				if (!before.contains(dump) && totals(dump) >= 0) {
					return dump;
				}
			}
			Thread.sleep(50);
		}
		throw new IllegalStateException("callgrind wrote no dump in " + dir + " within 60 s");
	}

	/** The dump's {@code totals:} figure, or -1 while the dump is not complete. */
	private static long totals(Path dump) throws IOException {
		for (String line : Files.readAllLines(dump)) {
			if (line.startsWith("totals:")) {
				return Long.parseLong(line.substring("totals:".length()).trim().split("\\s+")[0]);
			}
		}
		return -1;
	}

	private static String ratio(long value, Long base) {
		return (base == null || base == 0) ? "-" : String.format(Locale.ROOT, "%.2f", value / (double) base);
	}

	/** Under callgrind the server takes seconds to start: waits until it answers, or fails if it exits. */
	private static void awaitPong(int port, Process server) throws Exception {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
		while (System.nanoTime() < deadline) {
			if (!server.isAlive()) {
				throw new IllegalStateException("redis-server under callgrind exited with " + server.exitValue());
			}
			try {
				if (command(port, "PING").startsWith("+PONG")) {
					return;
				}
			}
			catch (IOException ex) {
				// Not listening yet.
			}
			Thread.sleep(100);
		}
		throw new IllegalStateException("redis-server under callgrind did not answer PING within 120 s");
	}

	private static String command(int port, String... arguments) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
			socket.setSoTimeout(30_000);
			StringBuilder request = new StringBuilder("*").append(arguments.length).append("\r\n");
			for (String argument : arguments) {
				request.append('$').append(argument.length()).append("\r\n").append(argument).append("\r\n");
			}
			OutputStream out = socket.getOutputStream();
			out.write(request.toString().getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			StringBuilder line = new StringBuilder();
			for (int b = in.read(); b != -1 && b != '\n'; b = in.read()) {
				line.append((char) b);
			}
			return line.toString();
		}
	}

}
