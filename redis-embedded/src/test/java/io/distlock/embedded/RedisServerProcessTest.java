package io.distlock.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Iterator;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * A port found free can be taken by another process before redis-server binds it (tests start
 * servers on free ports at the same time); a cluster node also binds its port + 10,000. The server
 * then starts on another port instead of failing the test that wanted it.
 */
class RedisServerProcessTest {

	/** Another test's server took the port: its PONG must not pass for this server's. */
	@Test
	void aPortAnotherServerTookBeforeThisOneBoundItIsSwappedForAnother() {
		try (RedisServerProcess other = RedisServerProcess.start();
				RedisServerProcess server = RedisServerProcess.start(ports(other.port(), RedisServerProcess.freePort()))) {
			assertThat(server.port()).isNotEqualTo(other.port());
			server.command("SET", "whose", "this one's");
			assertThat(other.query("GET", "whose")).as("nothing written to the other server").isEmpty();
			assertThat(server.query("GET", "whose")).isEqualTo("this one's");
		}
	}

	/** Defect: CI's cluster test failed when another test's server held a node's bus port. */
	@Test
	void aClusterNodeWhoseBusPortIsTakenStartsOnAnotherPort() throws Exception {
		int port = RedisServerProcess.freeClusterPort();
		try (ServerSocket taken = bound(port + 10_000)) {
			try (RedisServerProcess node = RedisServerProcess.start(ports(port, RedisServerProcess.freeClusterPort()),
					"--cluster-enabled", "yes")) {
				assertThat(node.port()).isNotEqualTo(port);
				assertThat(node.command("PING")).isEqualTo("+PONG");
			}
		}
	}

	@Test
	void freeClusterPortsLeaveRoomForTheBusPort() {
		for (int i = 0; i < 100; i++) {
			assertThat(RedisServerProcess.freeClusterPort()).isLessThanOrEqualTo(55_535);
		}
	}

	private static ServerSocket bound(int port) throws Exception {
		ServerSocket socket = new ServerSocket();
		socket.bind(new InetSocketAddress("127.0.0.1", port));
		return socket;
	}

	private static java.util.function.IntSupplier ports(Integer... ports) {
		Iterator<Integer> next = List.of(ports).iterator();
		return next::next;
	}

}
