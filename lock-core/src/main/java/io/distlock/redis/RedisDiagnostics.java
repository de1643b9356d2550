package io.distlock.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.distlock.LockBackendException;
import io.distlock.core.LockBackend;
import io.distlock.core.LockBackend.Health;

/**
 * What one Redis deployment is and how it is doing, for messages and the health endpoint: where it
 * is (never with credentials), whether it answers, which server it is, and what a failure of a
 * call to it means.
 */
final class RedisDiagnostics {

	/** How many PINGs may try to name the cause of a connection closed without one. */
	private static final int DIAGNOSIS_TRIES = 3;

	private final StringRedisTemplate redis;

	private final String description;

	/**
	 * @param redis the template the backend's calls go through
	 * @param description what {@link #describe(RedisConnectionFactory)} said of its factory
	 */
	RedisDiagnostics(StringRedisTemplate redis, String description) {
		this.redis = redis;
		this.description = description;
	}

	/** @return where the factory's connections go, without credentials */
	static String describe(RedisConnectionFactory connectionFactory) {
		if (connectionFactory instanceof LettuceConnectionFactory lettuce) {
			if (lettuce.isClusterAware()) {
				return "cluster";
			}
			if (lettuce.isRedisSentinelAware() && lettuce.getSentinelConfiguration() != null) {
				RedisSentinelConfiguration sentinel = lettuce.getSentinelConfiguration();
				String master = (sentinel.getMaster() != null) ? sentinel.getMaster().getName() : "?";
				return "Sentinel master '" + master + "' via " + sentinel.getSentinels().stream()
					.map(node -> node.getHost() + ":" + node.getPort())
					.collect(Collectors.joining(","));
			}
			return lettuce.getHostName() + ":" + lettuce.getPort() + ((lettuce.getDatabase() != 0) ? "/" + lettuce.getDatabase() : "");
		}
		return "redis";
	}

	/** @return where the locks are kept, e.g. {@code 10.0.0.1:6379} */
	String description() {
		return this.description;
	}

	/** @see LockBackend#explain(RuntimeException) */
	String explain(RuntimeException failure) {
		if (failure instanceof LockBackendException) {
			return failure.getMessage();
		}
		if (RedisFailures.isConnectionClosedWithoutCause(failure)) {
			// When Redis refuses the credentials, Lettuce can report the connection it then closes
			// ("Connection closed prematurely") instead of the WRONGPASS that closed it. A PING on a new
			// connection names the real cause, but may lose the same race: a few tries, each a refused
			// handshake at most. Only a failure that names a cause replaces the first.
			for (int i = 0; i < DIAGNOSIS_TRIES; i++) {
				RuntimeException diagnosis = ping();
				if (diagnosis == null || !RedisFailures.isConnectionClosedWithoutCause(diagnosis)) {
					if (diagnosis != null && RedisFailures.causeOf(diagnosis) != RedisFailures.Cause.OTHER) {
						return RedisFailures.explain(diagnosis, this.description);
					}
					break;
				}
			}
		}
		return RedisFailures.explain(failure, this.description);
	}

	/** @return what a PING threw, or {@code null} if it was answered */
	private RuntimeException ping() {
		try {
			this.redis.execute((RedisCallback<String>) connection -> connection.ping());
			return null;
		}
		catch (RuntimeException ex) {
			return ex;
		}
	}

	/**
	 * Which server this is, by its {@code run_id}: two addresses (or two database numbers) that reach
	 * one server answer the same. A restarted server answers a new one.
	 * @return the server's run id
	 */
	String serverId() {
		Properties info = this.redis
			.execute((RedisCallback<Properties>) connection -> connection.serverCommands().info("server"));
		String runId = (info != null) ? info.getProperty("run_id") : null;
		if (runId == null) {
			throw new IllegalStateException("Redis at " + this.description + " did not report its run_id (INFO server)");
		}
		return runId;
	}

	/**
	 * What the server is set to do that can lose holds without a restart: an eviction policy that may
	 * pick a lock's key when the memory is full. Every lock key carries a TTL, so the {@code volatile-*}
	 * policies may evict it as well as the {@code allkeys-*} ones; only {@code noeviction} (writes
	 * then fail, and so do acquisitions, loudly) keeps every hold. A Cluster answers for each master.
	 * @return one sentence per server that may evict lock keys; empty if none may
	 * @see LockBackend#serverWarnings()
	 */
	List<String> serverWarnings() {
		Properties info = this.redis
			.execute((RedisCallback<Properties>) connection -> connection.serverCommands().info("memory"));
		return (info != null) ? evictionWarnings(info, this.description) : List.of();
	}

	/**
	 * @param info {@code INFO memory}: one server's fields, or a Cluster's, each prefixed with its node's
	 * {@code host:port.}
	 * @param description where the locks are kept, named when the fields name no node
	 */
	static List<String> evictionWarnings(Properties info, String description) {
		List<String> warnings = new ArrayList<>();
		for (String field : info.stringPropertyNames().stream().sorted().toList()) {
			if (!field.endsWith("maxmemory_policy")) {
				continue;
			}
			String node = field.substring(0, field.length() - "maxmemory_policy".length());
			String policy = info.getProperty(field).trim();
			String limit = info.getProperty(node + "maxmemory", "0").trim();
			// maxmemory 0: no limit, nothing is evicted whatever the policy says.
			if (!"noeviction".equals(policy) && !"0".equals(limit)) {
				String server = node.isEmpty() ? description : node.substring(0, node.length() - 1);
				String human = info.getProperty(node + "maxmemory_human", limit + " bytes").trim();
				warnings.add("Redis at " + server + " may evict lock keys when its memory is full (maxmemory-policy "
						+ policy + ", maxmemory " + human + "): an evicted hold is lost without a restart, and another "
						+ "holder can enter before its holder is told. Set maxmemory-policy noeviction on the server "
						+ "that keeps locks (CONFIG SET maxmemory-policy noeviction, redis.conf, or the provider's "
						+ "parameter group); see docs/failure-semantics.md");
			}
		}
		return warnings;
	}

	/** @see LockBackend#health() */
	Health health() {
		try {
			String pong = this.redis.execute((RedisCallback<String>) connection -> connection.ping());
			return new Health("PONG".equalsIgnoreCase(pong), Map.of("server", this.description, "ping", String.valueOf(pong)));
		}
		catch (RuntimeException ex) {
			return new Health(false, Map.of("server", this.description, "error", explain(ex)));
		}
	}

}
