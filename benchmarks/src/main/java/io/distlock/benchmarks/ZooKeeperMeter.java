package io.distlock.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.Set;

import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * What a window cost one ZooKeeper server of this JVM, from its own JMX counters: the requests it
 * received and the transactions (writes) it applied. Unlike a throughput on a shared 2-core
 * machine, both counts per pair do not depend on the load: they say how much a library asks of
 * the server.
 */
final class ZooKeeperMeter implements LockBenchmarks.Window {

	private long requestsAtStart;

	private long zxidAtStart;

	private long requests;

	private long writes;

	@Override
	public void start() {
		this.requestsAtStart = packetsReceived();
		this.zxidAtStart = lastZxid();
	}

	@Override
	public void stop() {
		this.requests = packetsReceived() - this.requestsAtStart;
		// A zxid's low 32 bits count the leader epoch's transactions; one server keeps one epoch.
		this.writes = (lastZxid() & 0xffffffffL) - (this.zxidAtStart & 0xffffffffL);
	}

	/** @return the ZKCOST line of one library's window, {@code per} naming what {@code result} counted */
	String line(String scenario, String library, String per, LockBenchmarks.Result result, java.time.Duration window) {
		long operations = Math.round(result.opsPerSecond() * window.toNanos() / 1e9);
		return String.format(java.util.Locale.ROOT, "ZKCOST scenario=%s lib=%s requestsPer%s=%.2f writesPer%s=%.2f", scenario,
				library, capitalized(per), requestsPer(operations), capitalized(per), writesPer(operations));
	}

	private static String capitalized(String word) {
		return Character.toUpperCase(word.charAt(0)) + word.substring(1);
	}

	/** @return requests (reads, writes and the sessions' pings) per operation */
	double requestsPer(long operations) {
		return this.requests / (double) Math.max(1, operations);
	}

	/** @return transactions per operation (a {@code multi} is one) */
	double writesPer(long operations) {
		return this.writes / (double) Math.max(1, operations);
	}

	private static long packetsReceived() {
		return ((Number) attribute("org.apache.ZooKeeperService:name0=StandaloneServer_port*", "PacketsReceived"))
			.longValue();
	}

	private static long lastZxid() {
		String zxid = (String) attribute("org.apache.ZooKeeperService:name0=StandaloneServer_port*,name1=InMemoryDataTree",
				"LastZxid");
		return Long.decode(zxid);
	}

	private static Object attribute(String pattern, String attribute) {
		MBeanServer server = ManagementFactory.getPlatformMBeanServer();
		try {
			Set<ObjectName> names = server.queryNames(new ObjectName(pattern), null);
			if (names.size() != 1) {
				throw new IllegalStateException("Expected one ZooKeeper server's MBean for " + pattern + ", found " + names);
			}
			return server.getAttribute(names.iterator().next(), attribute);
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not read " + attribute + " of the ZooKeeper server", ex);
		}
	}

}
