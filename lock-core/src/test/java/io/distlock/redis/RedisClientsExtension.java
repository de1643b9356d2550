package io.distlock.redis;

import java.time.Duration;
import java.util.function.Supplier;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.distlock.LockListener;
import io.distlock.core.LockEngineOptions;
import io.distlock.testing.RedisClusterExtension;
import io.distlock.testing.RedisServerExtension;

/**
 * Fresh {@link RedisTestClients} of the class's Redis server or Cluster for every test, with one
 * template to look at the keys, all closed after the test's own {@code @AfterEach} (which may first
 * thaw a server, stop its threads or close a forked client):
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisServerExtension redisServer = new RedisServerExtension();
 *
 * @RegisterExtension
 * final RedisClientsExtension clients = RedisClientsExtension.of(redisServer);
 * }</pre>
 */
final class RedisClientsExtension implements BeforeEachCallback, AfterEachCallback {

	private final Supplier<RedisTestClients> open;

	private RedisTestClients clients;

	private StringRedisTemplate redis;

	private RedisClientsExtension(Supplier<RedisTestClients> open) {
		this.open = open;
	}

	/** @return clients of the single server with the default command timeout */
	static RedisClientsExtension of(RedisServerExtension server) {
		return new RedisClientsExtension(() -> new RedisTestClients(server.server()));
	}

	/**
	 * @param commandTimeout Lettuce's command timeout for every client
	 * @return clients of the single server
	 */
	static RedisClientsExtension of(RedisServerExtension server, Duration commandTimeout) {
		return new RedisClientsExtension(() -> new RedisTestClients(server.server(), commandTimeout));
	}

	/** @return clients of the Cluster, following its topology */
	static RedisClientsExtension of(RedisClusterExtension cluster) {
		return new RedisClientsExtension(() -> new RedisTestClients(cluster.cluster()));
	}

	/** @see RedisTestClients#registry(Duration, LockListener...) */
	RedisLockRegistry registry(Duration watchdogTimeout, LockListener... listeners) {
		return clients().registry(watchdogTimeout, listeners);
	}

	/** @see RedisTestClients#registry(LockEngineOptions.Builder, LockListener...) */
	RedisLockRegistry registry(LockEngineOptions.Builder options, LockListener... listeners) {
		return clients().registry(options, listeners);
	}

	/** @see RedisTestClients#connectionFactory() */
	LettuceConnectionFactory connectionFactory() {
		return clients().connectionFactory();
	}

	/** @see RedisTestClients#template() */
	StringRedisTemplate template() {
		return clients().template();
	}

	/** @return the test's template, to read and change keys behind the clients' backs */
	StringRedisTemplate redis() {
		clients();
		return this.redis;
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		this.clients = this.open.get();
		// Made here, on the test's thread: an Awaitility condition that reads keys runs on another.
		this.redis = this.clients.template();
	}

	@Override
	public void afterEach(ExtensionContext context) throws Exception {
		RedisTestClients opened = this.clients;
		this.clients = null;
		this.redis = null;
		if (opened != null) {
			opened.close();
		}
	}

	private RedisTestClients clients() {
		if (this.clients == null) {
			throw new IllegalStateException("RedisClientsExtension must be registered on an instance field");
		}
		return this.clients;
	}

}
