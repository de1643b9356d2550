package io.distlock.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.LockListener;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.redis.RedisNode;

/**
 * Five independent {@code redis-server} masters and the Redlock clients the tests build on them.
 */
final class RedlockNodes implements AutoCloseable {

	/**
	 * 1 s per node: a node that misses the window is marked down, and on a loaded machine a short
	 * timeout would fail lock calls that tests expect to succeed.
	 */
	static final RedlockSettings SETTINGS = new RedlockSettings(Duration.ofSeconds(1), 0.01, Duration.ofMillis(2),
			Duration.ofMillis(10));

	private final List<RedisServerProcess> servers = new ArrayList<>();

	private final List<AutoCloseable> clients = new ArrayList<>();

	RedlockNodes(int count) {
		for (int i = 0; i < count; i++) {
			this.servers.add(RedisServerProcess.start());
		}
	}

	List<RedisServerProcess> servers() {
		return this.servers;
	}

	RedlockLockRegistry client(Duration watchdogTimeout, LockListener... listeners) {
		return client(watchdogTimeout, SETTINGS, listeners);
	}

	RedlockLockRegistry client(Duration watchdogTimeout, RedlockSettings settings, LockListener... listeners) {
		List<LettuceConnectionFactory> factories = factories();
		LockEngineOptions.Builder options = LockEngineOptions.builder().watchdogTimeout(watchdogTimeout);
		for (LockListener listener : listeners) {
			options.listener(listener);
		}
		RedlockLockRegistry registry = RedlockLockRegistry.owning(factories, "distlock", settings, options.build());
		this.clients.add(registry);
		return registry;
	}

	/**
	 * A Redlock backend on these nodes without an engine, for tests that call it directly; closed,
	 * with its connections, with the clients.
	 */
	RedlockBackend backend() {
		List<LettuceConnectionFactory> factories = factories();
		RedlockBackend backend = new RedlockBackend(
				factories.stream().map(factory -> new RedisNode(factory, "distlock", Duration.ZERO)).toList(), SETTINGS);
		this.clients.add(backend);
		factories.forEach(factory -> this.clients.add(factory::destroy));
		return backend;
	}

	private List<LettuceConnectionFactory> factories() {
		List<LettuceConnectionFactory> factories = new ArrayList<>();
		for (RedisServerProcess server : this.servers) {
			// Well above the node timeout, yet short enough that calls to a dead or paused node do not
			// pile up.
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration(server.host(), server.port()),
					LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build());
			factory.afterPropertiesSet();
			factory.start();
			factories.add(factory);
		}
		return factories;
	}

	void flushAll() {
		for (RedisServerProcess server : this.servers) {
			if (!server.isRunning()) {
				server.restart();
			}
			server.command("FLUSHALL");
		}
	}

	void closeClients() throws Exception {
		for (AutoCloseable client : this.clients) {
			client.close();
		}
		this.clients.clear();
	}

	@Override
	public void close() throws Exception {
		closeClients();
		this.servers.forEach(RedisServerProcess::close);
	}

}
