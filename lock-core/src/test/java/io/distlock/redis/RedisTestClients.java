package io.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.function.Supplier;

import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.distlock.LockListener;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisClusterProcess;
import io.distlock.embedded.RedisSentinelGroup;
import io.distlock.embedded.RedisServerProcess;

/**
 * Builds independent clients (own Lettuce connections, own registry) against a test server, and
 * closes them all at the end.
 */
final class RedisTestClients implements AutoCloseable {

	private final Supplier<RedisConfiguration> configuration;

	private final LettuceClientConfiguration clientConfiguration;

	private final List<AutoCloseable> opened = new ArrayList<>();

	RedisTestClients(RedisServerProcess server) {
		this(server, Duration.ofSeconds(5));
	}

	/**
	 * @param server the server
	 * @param commandTimeout Lettuce's command timeout for every client (Spring Boot's default: 60 s)
	 */
	RedisTestClients(RedisServerProcess server, Duration commandTimeout) {
		this.configuration = () -> new RedisStandaloneConfiguration(server.host(), server.port());
		this.clientConfiguration = LettuceClientConfiguration.builder().commandTimeout(commandTimeout).build();
	}

	/**
	 * Clients of a Sentinel-managed master, configured as {@code spring.data.redis.sentinel.*} would
	 * configure them.
	 * @param group the sentinels and their data nodes
	 * @param commandTimeout Lettuce's command timeout for every client
	 */
	RedisTestClients(RedisSentinelGroup group, Duration commandTimeout) {
		this.configuration = () -> new RedisSentinelConfiguration(group.masterName(), new HashSet<>(group.sentinelNodes()));
		this.clientConfiguration = LettuceClientConfiguration.builder().commandTimeout(commandTimeout).build();
	}

	RedisTestClients(RedisClusterProcess cluster) {
		this.configuration = () -> new RedisClusterConfiguration(cluster.nodes());
		// Adaptive refresh lets the client follow nodes that restart.
		ClusterClientOptions options = ClusterClientOptions.builder()
			.topologyRefreshOptions(ClusterTopologyRefreshOptions.builder().enableAllAdaptiveRefreshTriggers().build())
			.build();
		this.clientConfiguration = LettuceClientConfiguration.builder()
			.commandTimeout(Duration.ofSeconds(5))
			.clientOptions(options)
			.build();
	}

	LettuceConnectionFactory connectionFactory() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(this.configuration.get(), this.clientConfiguration);
		factory.afterPropertiesSet();
		factory.start();
		this.opened.add(factory::destroy);
		return factory;
	}

	RedisLockRegistry registry(Duration watchdogTimeout, LockListener... listeners) {
		return registry(LockEngineOptions.builder().watchdogTimeout(watchdogTimeout), listeners);
	}

	RedisLockRegistry registry(LockEngineOptions.Builder options, LockListener... listeners) {
		for (LockListener listener : listeners) {
			options.listener(listener);
		}
		RedisLockRegistry registry = new RedisLockRegistry(connectionFactory(), "distlock", options.build());
		this.opened.add(registry);
		return registry;
	}

	StringRedisTemplate template() {
		return new StringRedisTemplate(connectionFactory());
	}

	@Override
	public void close() throws Exception {
		for (int i = this.opened.size() - 1; i >= 0; i--) {
			this.opened.get(i).close();
		}
		this.opened.clear();
	}

}
