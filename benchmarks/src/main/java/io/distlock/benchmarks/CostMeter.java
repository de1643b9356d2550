package io.distlock.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.distlock.embedded.RedisServerProcess;

/**
 * What a measured window cost on each side, divided by the pairs (or acquisitions) done in it: Redis
 * CPU ({@code INFO cpu}), commands Redis ran (every command of {@code INFO commandstats}, the
 * script calls and the commands inside them alike), request and reply bytes ({@code INFO stats}),
 * the client JVM's CPU and the bytes its threads allocated, all of them and the calling threads
 * alone (the library's own threads, Lettuce's event loops and the harness are the difference). On a
 * machine where client and server share the cores, throughput follows the sum of the two CPU figures.
 */
final class CostMeter implements LockBenchmarks.Window {

	private final RedisServerProcess redis;

	/** The threads that call the library, registered before the window starts. */
	private final Queue<Thread> callers = new ConcurrentLinkedQueue<>();

	private Snapshot start;

	private Snapshot end;

	CostMeter(RedisServerProcess redis) {
		this.redis = redis;
	}

	/** Counts {@code thread}'s allocations as a caller's; call it from the thread before {@link #start()}. */
	@Override
	public void caller(Thread thread) {
		this.callers.add(thread);
	}

	/** The window starts. */
	@Override
	public void start() {
		this.start = snapshot();
	}

	/** The window ends. */
	@Override
	public void stop() {
		this.end = snapshot();
	}

	/**
	 * @param operations what was done in the window
	 * @return the window's costs per operation
	 */
	Costs per(long operations) {
		double n = Math.max(1, operations);
		return new Costs((this.end.redisCpuSeconds - this.start.redisCpuSeconds) * 1e6 / n,
				(this.end.commands - this.start.commands) / n, (this.end.inputBytes - this.start.inputBytes) / n,
				(this.end.outputBytes - this.start.outputBytes) / n, (this.end.clientCpuNanos - this.start.clientCpuNanos) / 1e3 / n,
				(this.end.allocatedBytes - this.start.allocatedBytes) / n,
				(this.end.callerAllocatedBytes - this.start.callerAllocatedBytes) / n);
	}

	private Snapshot snapshot() {
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
		long allocated = threads.getTotalThreadAllocatedBytes();
		long byCallers = 0;
		for (Thread caller : this.callers) {
			// -1 for a thread the JVM does not count (a virtual one): left out.
			byCallers += Math.max(0, threads.getThreadAllocatedBytes(caller.getId()));
		}
		long cpu = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
		Map<String, String> info = info(this.redis, "everything");
		double redisCpu = number(info, "used_cpu_sys") + number(info, "used_cpu_user");
		long commands = 0;
		for (Map.Entry<String, String> field : info.entrySet()) {
			String value = field.getValue();
			int calls = value.indexOf("calls=");
			if (field.getKey().startsWith("cmdstat_") && calls >= 0) {
				commands += Long.parseLong(value.substring(calls + 6, value.indexOf(',', calls)));
			}
		}
		return new Snapshot(redisCpu, commands, (long) number(info, "total_net_input_bytes"),
				(long) number(info, "total_net_output_bytes"), cpu, allocated, byCallers);
	}

	/**
	 * @param redis the server
	 * @param section an {@code INFO} section, e.g. {@code clients}
	 * @return its fields by name, read in one call
	 */
	static Map<String, String> info(RedisServerProcess redis, String section) {
		Map<String, String> fields = new HashMap<>();
		for (String line : redis.query("INFO", section).split("\r?\n")) {
			int colon = line.indexOf(':');
			if (colon > 0 && !line.startsWith("#")) {
				fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
			}
		}
		return fields;
	}

	/** @return a numeric {@code INFO} field */
	static double number(Map<String, String> info, String name) {
		String value = info.get(name);
		if (value == null) {
			throw new IllegalStateException("INFO has no " + name);
		}
		return Double.parseDouble(value);
	}

	private record Snapshot(double redisCpuSeconds, long commands, long inputBytes, long outputBytes, long clientCpuNanos,
			long allocatedBytes, long callerAllocatedBytes) {
	}

	/**
	 * Costs per operation.
	 * @param redisCpuMicros Redis CPU
	 * @param commands commands Redis ran, script calls and the commands inside them
	 * @param requestBytes bytes Redis received
	 * @param replyBytes bytes Redis sent (replies and pub/sub messages)
	 * @param clientCpuMicros the client JVM's CPU, every thread (the harness's own loop included)
	 * @param allocatedBytes bytes the client JVM's threads allocated
	 * @param callerAllocatedBytes bytes the calling threads allocated (0 where none were registered)
	 */
	record Costs(double redisCpuMicros, double commands, double requestBytes, double replyBytes, double clientCpuMicros,
			double allocatedBytes, double callerAllocatedBytes) {

		String row(String name) {
			return String.format(Locale.ROOT, "%-14s %10.1f %10.1f %10.0f %10.0f %10.1f %10.0f %10.0f", name, this.redisCpuMicros,
					this.commands, this.requestBytes, this.replyBytes, this.clientCpuMicros, this.allocatedBytes,
					this.callerAllocatedBytes);
		}

		static String header() {
			return String.format(Locale.ROOT, "%-14s %10s %10s %10s %10s %10s %10s %10s", "library", "redis us", "commands",
					"req bytes", "reply B", "client us", "alloc B", "caller B");
		}

	}

}
