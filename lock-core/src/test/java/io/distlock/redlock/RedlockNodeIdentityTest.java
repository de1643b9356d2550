package io.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.embedded.TcpRelay;
import io.distlock.testing.ClosedAfterEach;

/**
 * A Redlock majority must be a majority of servers, not of entries: two entries that reach one
 * server (two names for one host, two database numbers) are refused at start, and an entry that
 * reconnects to a server another entry already reaches stops counting.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RedlockNodeIdentityTest {

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	@Test
	void twoNamesForOneServerStopTheStart() {
		RedisServerProcess shared = server();
		RedisServerProcess other = server();
		List<LettuceConnectionFactory> nodes = List.of(node("127.0.0.1", shared.port(), 0),
				node("localhost", shared.port(), 0), node("127.0.0.1", other.port(), 0));
		assertThatThrownBy(() -> registry(nodes)).isInstanceOf(RedlockNodesException.class)
			.hasMessageContaining("Redlock nodes 1 (127.0.0.1:" + shared.port() + ") and 2 (localhost:" + shared.port()
					+ ") reach the same Redis server")
			.hasMessageContaining("List every independent master once");
	}

	@Test
	void twoDatabasesOfOneServerStopTheStart() {
		RedisServerProcess shared = server();
		RedisServerProcess other = server();
		List<LettuceConnectionFactory> nodes = List.of(node("127.0.0.1", other.port(), 0),
				node("127.0.0.1", shared.port(), 0), node("127.0.0.1", shared.port(), 1));
		assertThatThrownBy(() -> registry(nodes)).isInstanceOf(RedlockNodesException.class)
			.hasMessageContaining("Redlock nodes 2 (127.0.0.1:" + shared.port() + ") and 3 (127.0.0.1:" + shared.port()
					+ "/1) reach the same Redis server");
	}

	@Test
	void aNodeThatReconnectsToAServerAlreadyListedStopsCounting() throws Exception {
		RedisServerProcess first = server();
		RedisServerProcess second = server();
		RedisServerProcess third = server();
		TcpRelay relay = new TcpRelay(third.port());
		this.opened.add(relay);
		RedlockLockRegistry registry = registry(List.of(node("127.0.0.1", first.port(), 0),
				node("127.0.0.1", second.port(), 0), node("127.0.0.1", relay.port(), 0)));
		DistLock lock = registry.getLock("identity");
		assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
		lock.unlock();

		// The third entry's name now leads to the first server, as after a DNS or proxy change.
		relay.retarget(first.port());
		relay.cutAll();
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(nodeStates(registry)).containsEntry("127.0.0.1:" + relay.port(),
					"SAME SERVER AS NODE 1"));
		assertThat(registry.backendHealth().details()).containsEntry("reachable", 2);

		// One server left of three: no majority, although two entries still answer.
		second.kill();
		boolean acquired;
		try {
			acquired = lock.tryLock(Duration.ofMillis(1500));
		}
		catch (LockBackendException ex) {
			assertThat(ex).hasMessageContaining("same server as Redlock node 1");
			acquired = false;
		}
		assertThat(acquired).as("a lock granted by one server reached under two names").isFalse();
	}

	@Test
	void aNodeLeftOutForAnotherEntrysSakeCountsAgainWhenThatEntryMovesOn() throws Exception {
		RedisServerProcess first = server();
		RedisServerProcess second = server();
		RedisServerProcess third = server();
		TcpRelay relay = new TcpRelay(first.port());
		this.opened.add(relay);
		RedlockLockRegistry registry = registry(List.of(node("127.0.0.1", relay.port(), 0),
				node("127.0.0.1", second.port(), 0), node("127.0.0.1", third.port(), 0)));
		String secondNode = "127.0.0.1:" + second.port();

		// The first entry now reaches the second server: the later-listed second entry stops counting.
		relay.retarget(second.port());
		relay.cutAll();
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(nodeStates(registry)).containsEntry(secondNode, "SAME SERVER AS NODE 1"));

		// Back to its own server: both count again, without the second entry reconnecting.
		relay.retarget(first.port());
		relay.cutAll();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			assertThat(nodeStates(registry)).containsEntry(secondNode, "UP").containsEntry("127.0.0.1:" + relay.port(), "UP");
			assertThat(registry.backendHealth().details()).containsEntry("reachable", 3);
		});
		DistLock lock = registry.getLock("identity-back");
		assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
		lock.unlock();
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> nodeStates(RedlockLockRegistry registry) {
		return (Map<String, Object>) registry.backendHealth().details().get("nodes");
	}

	private RedisServerProcess server() {
		RedisServerProcess server = RedisServerProcess.start();
		this.opened.add(server);
		return server;
	}

	private LettuceConnectionFactory node(String host, int port, int database) {
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(host, port);
		configuration.setDatabase(database);
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build());
		factory.afterPropertiesSet();
		factory.start();
		this.opened.add(factory::destroy);
		return factory;
	}

	private RedlockLockRegistry registry(List<LettuceConnectionFactory> nodes) {
		RedlockLockRegistry registry = new RedlockLockRegistry(nodes, "distlock", RedlockNodes.SETTINGS,
				LockEngineOptions.builder().watchdogTimeout(Duration.ofSeconds(3)).build());
		this.opened.add(registry);
		return registry;
	}

}
