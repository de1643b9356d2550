package io.distlock.zookeeper;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import javax.management.ObjectName;

import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One in-process ZooKeeper server per test class, on a port it binds itself, with the tests' short
 * tick (see {@link ZooKeeperTestClients#standaloneSpec}), stopped after the class:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final ZooKeeperServerExtension zooKeeper = new ZooKeeperServerExtension();
 * }</pre>
 *
 * Nothing is emptied between tests: each test uses lock names of its own.
 */
final class ZooKeeperServerExtension implements BeforeAllCallback, AfterAllCallback {

	private TestingServer server;

	private boolean stopped;

	/** @return the running server's connect string */
	String connectString() {
		return server().getConnectString();
	}

	/** @return how many sessions the server has a watch on {@code path} for ("wchp") */
	int watchesOn(String path) throws IOException {
		try (Socket socket = new Socket("127.0.0.1", server().getPort())) {
			socket.setSoTimeout(5000);
			socket.getOutputStream().write("wchp".getBytes(StandardCharsets.US_ASCII));
			socket.getOutputStream().flush();
			String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
			int sessions = 0;
			boolean inPath = false;
			for (String line : answer.split("\n")) {
				if (!line.isEmpty() && !Character.isWhitespace(line.charAt(0))) {
					inPath = line.trim().equals(path);
				}
				else if (inPath && line.trim().startsWith("0x")) {
					sessions++;
				}
			}
			return sessions;
		}
	}

	/** @return the requests the server has received from every session (reads, writes, pings), from its JMX bean */
	long requestsReceived() throws Exception {
		return ((Number) attribute("", "PacketsReceived")).longValue();
	}

	/**
	 * @return the transactions the server has applied (each write, and each {@code multi}, is one):
	 * the counter part of its last zxid, from its JMX bean
	 */
	long transactions() throws Exception {
		return Long.decode((String) attribute(",name1=InMemoryDataTree", "LastZxid")) & 0xffffffffL;
	}

	private Object attribute(String bean, String attribute) throws Exception {
		ObjectName name = new ObjectName(
				"org.apache.ZooKeeperService:name0=StandaloneServer_port" + server().getPort() + bean);
		return ManagementFactory.getPlatformMBeanServer().getAttribute(name, attribute);
	}

	/** Stops the server, keeping its data for {@link #restart()}. */
	void stop() throws IOException {
		server().stop();
		this.stopped = true;
	}

	/** Starts the stopped server again on its port, with its data (and its sessions, within their timeout). */
	void restart() throws Exception {
		server().restart();
		this.stopped = false;
	}

	/** Starts the server again if a test stopped it and did not get to restart it. */
	void restartIfStopped() throws Exception {
		if (this.stopped) {
			restart();
		}
	}

	private TestingServer server() {
		if (this.server == null) {
			throw new IllegalStateException("ZooKeeperServerExtension must be registered on a static field");
		}
		return this.server;
	}

	@Override
	public void beforeAll(ExtensionContext context) throws Exception {
		this.server = new TestingServer(ZooKeeperTestClients.standaloneSpec(), true);
	}

	@Override
	public void afterAll(ExtensionContext context) throws Exception {
		TestingServer started = this.server;
		this.server = null;
		if (started != null) {
			started.close();
		}
	}

}
