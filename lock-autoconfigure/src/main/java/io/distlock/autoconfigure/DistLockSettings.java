package io.distlock.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.springframework.beans.factory.ObjectProvider;

import io.distlock.InvalidLockSettingException;
import io.distlock.LockListener;
import io.distlock.LockSettings;
import io.distlock.LockWatchdog;
import io.distlock.autoconfigure.DistLockProperties.Backend;
import io.distlock.autoconfigure.DistLockProperties.NamedRegistry;
import io.distlock.core.LockEngineOptions;
import io.distlock.redis.RedisReplicaAcks;
import io.distlock.redlock.RedlockSettings;
import io.distlock.redlock.RedlockUris;

/**
 * {@link DistLockProperties} turned into what the library takes, as Spring Boot's
 * {@code PropertiesDataRedisConnectionDetails} adapts {@code DataRedisProperties}: the engine's
 * options, Redlock's tuning, and one {@link RegistrySpec} per registry with a named registry's
 * fallbacks to the top-level values resolved. Every rule is {@link LockSettings}'; what this adds is
 * the one table that names the {@code distlock.*} property of a broken rule.
 */
final class DistLockSettings {

	/**
	 * Each setting as {@link InvalidLockSettingException#getSetting()} names it: the property that sets
	 * it for the default registry, and the one under {@code distlock.registries.<name>} ({@code null}
	 * where a named registry takes the top-level value).
	 */
	private static final Map<String, Property> PROPERTIES = Map.ofEntries(
			Map.entry("keyPrefix", new Property("distlock.key-prefix", "key-prefix")),
			Map.entry("waitTime", new Property("distlock.wait-time", null)),
			Map.entry("defaultLease", new Property("distlock.lease-time", null)),
			Map.entry("watchdogTimeout", new Property("distlock.watchdog.timeout", "watchdog-timeout")),
			Map.entry("restartGrace", new Property("distlock.restart-grace", null)),
			Map.entry("tableName", new Property("distlock.jdbc.table-name", "table-name")),
			Map.entry("basePath", new Property("distlock.zookeeper.base-path", "base-path")),
			Map.entry("sessionTimeout", new Property("distlock.zookeeper.session-timeout", null)),
			Map.entry("connectionTimeout", new Property("distlock.zookeeper.connection-timeout", null)),
			Map.entry("nodes", new Property("distlock.redlock.nodes", "redlock-nodes")),
			Map.entry("ssl", new Property("distlock.redlock.ssl.bundle", null)),
			Map.entry("nodeTimeout", new Property("distlock.redlock.node-timeout", null)),
			Map.entry("clockDriftFactor", new Property("distlock.redlock.clock-drift-factor", null)),
			Map.entry("retryDelay", new Property("distlock.redlock.retry-delay", null)),
			Map.entry("retryJitter", new Property("distlock.redlock.retry-jitter", null)));

	private static final String REGISTRIES = "distlock.registries";

	/**
	 * Where a setting is set.
	 * @param top its property for the default registry
	 * @param named its property under {@code distlock.registries.<name>}, or {@code null} where a named
	 * registry takes the top-level value
	 */
	private record Property(String top, String named) {

	}

	private final DistLockProperties properties;

	private final Duration restartGrace;

	private final RedisReplicaAcks replicaAcks;

	private final RegistrySpec defaults;

	private final Map<String, RegistrySpec> named = new LinkedHashMap<>();

	private RedlockSettings redlockSettings;

	/**
	 * @param properties as bound
	 * @throws InvalidDistLockPropertyException naming the first property whose value breaks a rule
	 */
	DistLockSettings(DistLockProperties properties) {
		this.properties = properties;
		check(null, () -> LockSettings.keyPrefix(properties.getKeyPrefix()));
		check(null, () -> LockSettings.waitTime(properties.getWaitTime()));
		Duration leaseTime = properties.getLeaseTime();
		if (leaseTime != null) {
			check(null, () -> LockSettings.defaultLease(leaseTime));
		}
		Duration watchdogTimeout = properties.getWatchdog().getTimeout();
		check(null, () -> LockSettings.watchdogTimeout(watchdogTimeout));
		if (properties.getRestartGrace() != null) {
			check(null, () -> LockSettings.restartGrace(properties.getRestartGrace()));
		}
		check(null, () -> LockSettings.countable("waitTime", properties.getWaitTime()));
		check(null, () -> LockSettings.countable("defaultLease", leaseTime));
		check(null, () -> LockSettings.countable("watchdogTimeout", watchdogTimeout));
		check(null, () -> LockSettings.countable("restartGrace", properties.getRestartGrace()));
		RedlockUris nodes = null;
		if (!properties.getRedlock().getNodes().isEmpty()) {
			nodes = redlockNodes(null, properties.getRedlock().getNodes());
			this.redlockSettings = redlockSettings(properties.getRedlock());
		}
		Backend backend = properties.getBackend();
		if (backend != Backend.REDIS && nodes != null) {
			String lockedIn = (backend == Backend.JDBC) ? "in the database" : "in ZooKeeper";
			throw new InvalidDistLockPropertyException("distlock.backend", backend,
					"is " + backend + ", but distlock.redlock.nodes is set too; a lock lives in one backend",
					"Remove distlock.redlock.nodes to lock " + lockedIn + ", or set distlock.backend=redis for Redlock.");
		}
		DistLockProperties.Zookeeper zookeeper = properties.getZookeeper();
		check(null, () -> LockSettings.sessionTimeout(zookeeper.getSessionTimeout()));
		check(null, () -> LockSettings.connectionTimeout(zookeeper.getConnectionTimeout()));
		check(null, () -> LockSettings.basePath(zookeeper.getBasePath()));
		properties.getRegistries().forEach((name, declared) -> this.named.put(name, named(name, declared)));
		if (this.redlockSettings == null && this.named.values().stream().anyMatch(spec -> spec.redlockNodes() != null)) {
			this.redlockSettings = redlockSettings(properties.getRedlock());
		}
		check(null, () -> LockSettings.tableName(properties.getJdbc().getTableName()));
		if (!properties.getWatchdog().isEnabled() && leaseTime == null) {
			throw new InvalidDistLockPropertyException("distlock.lease-time", null,
					"must be set when distlock.watchdog.enabled=false, or @DistributedLock methods would hold their "
							+ "locks with no expiry",
					"Set distlock.lease-time (e.g. 30s) longer than your slowest locked method, or re-enable the watchdog.");
		}
		this.restartGrace = effectiveRestartGrace(properties);
		this.replicaAcks = replicaAcks(properties, nodes);
		this.defaults = new RegistrySpec(null, backend, properties.getKeyPrefix(), properties.getJdbc().getTableName(),
				properties.getJdbc().isCreateSchema(), zookeeper.getBasePath(), watchdogTimeout, nodes);
	}

	/**
	 * Replica acknowledgement for every registry on spring.data.redis (the default one and named ones);
	 * it has no meaning for Redlock, whose masters are independent.
	 */
	private RedisReplicaAcks replicaAcks(DistLockProperties properties, RedlockUris nodes) {
		DistLockProperties.Redis redis = properties.getRedis();
		if (redis.getReplicaAcks() < 0) {
			throw new InvalidDistLockPropertyException("distlock.redis.replica-acks", redis.getReplicaAcks(),
					"must not be negative", "Set distlock.redis.replica-acks to 0 (no acknowledgement) or to how many "
							+ "replicas must have a hold, e.g. 1.");
		}
		Duration timeout = redis.getReplicaAckTimeout();
		if (timeout == null || timeout.isNegative() || timeout.isZero()) {
			throw new InvalidDistLockPropertyException("distlock.redis.replica-ack-timeout", timeout, "must be positive",
					"Set distlock.redis.replica-ack-timeout to how long an acquisition may wait for its replicas, e.g. 1s.");
		}
		if (redis.getReplicaAcks() > 0) {
			boolean onRedis = (properties.getBackend() == Backend.REDIS && nodes == null) || this.named.values()
				.stream()
				.anyMatch(spec -> spec.backend() == Backend.REDIS && spec.redlockNodes() == null);
			if (!onRedis) {
				throw new InvalidDistLockPropertyException("distlock.redis.replica-acks", redis.getReplicaAcks(),
						"applies to locks on the Redis of spring.data.redis, and no registry keeps them there"
								+ ((nodes != null) ? " (distlock.redlock.nodes makes the default one use Redlock, "
										+ "whose masters are independent and have no replicas to wait for)" : ""),
						"Remove distlock.redis.replica-acks, or keep locks on spring.data.redis.");
			}
		}
		return new RedisReplicaAcks(redis.getReplicaAcks(), timeout, redis.isReplicaAcksAppendOnly());
	}

	/**
	 * The restart grace in force: the one set, else the longer of the watchdog timeout and
	 * {@code distlock.lease-time} (a holder with an explicit lease is not renewed, so it is not told of a
	 * loss before its lease ends: nobody may enter before then).
	 */
	private static Duration effectiveRestartGrace(DistLockProperties properties) {
		if (properties.getRestartGrace() != null) {
			return properties.getRestartGrace();
		}
		Duration timeout = properties.getWatchdog().getTimeout();
		Duration leaseTime = properties.getLeaseTime();
		return (leaseTime != null && leaseTime.compareTo(timeout) > 0) ? leaseTime : timeout;
	}

	private RegistrySpec named(String name, NamedRegistry declared) {
		String prefix = REGISTRIES + "." + name;
		if (LockRegistries.DEFAULT.equals(name)) {
			throw new InvalidDistLockPropertyException(prefix, name,
					"is the name of the default registry, which distlock.backend configures",
					"Give the registry another name, such as 'tables', and name it in @DistributedLock(registry = ...).");
		}
		Backend backend = declared.getBackend();
		if (backend == null) {
			throw new InvalidDistLockPropertyException(prefix + ".backend", null, "must be set",
					"Set " + prefix + ".backend to redis, jdbc or zookeeper.");
		}
		if (declared.getTableName() != null) {
			check(prefix, () -> LockSettings.tableName(declared.getTableName()));
		}
		if (declared.getWatchdogTimeout() != null) {
			check(prefix, () -> LockSettings.watchdogTimeout(declared.getWatchdogTimeout()));
		}
		check(prefix, () -> LockSettings.countable("watchdogTimeout", declared.getWatchdogTimeout()));
		String misplaced = (backend != Backend.REDIS && declared.getKeyPrefix() != null) ? "key-prefix"
				: (backend != Backend.REDIS && !declared.getRedlockNodes().isEmpty()) ? "redlock-nodes"
				: (backend != Backend.JDBC && (declared.getTableName() != null || declared.getCreateSchema() != null))
						? "table-name"
				: (backend != Backend.ZOOKEEPER && declared.getBasePath() != null) ? "base-path" : null;
		if (misplaced != null) {
			throw new InvalidDistLockPropertyException(prefix + "." + misplaced, backend,
					"does not apply to a " + backend + " registry",
					"Remove it, or set " + prefix + ".backend to the backend it belongs to.");
		}
		if (declared.getKeyPrefix() != null) {
			check(prefix, () -> LockSettings.keyPrefix(declared.getKeyPrefix()));
		}
		if (declared.getBasePath() != null) {
			check(prefix, () -> LockSettings.basePath(declared.getBasePath()));
		}
		RedlockUris nodes = declared.getRedlockNodes().isEmpty() ? null : redlockNodes(prefix, declared.getRedlockNodes());
		return new RegistrySpec(prefix, backend, orElse(declared.getKeyPrefix(), this.properties.getKeyPrefix()),
				orElse(declared.getTableName(), this.properties.getJdbc().getTableName()),
				orElse(declared.getCreateSchema(), this.properties.getJdbc().isCreateSchema()),
				orElse(declared.getBasePath(), this.properties.getZookeeper().getBasePath()),
				orElse(declared.getWatchdogTimeout(), this.properties.getWatchdog().getTimeout()), nodes);
	}

	private static <T> T orElse(T value, T fallback) {
		return (value != null) ? value : fallback;
	}

	/** Redlock's masters, TLS where an SSL bundle is set, every failure shown with passwords masked. */
	private RedlockUris redlockNodes(String prefix, List<String> listed) {
		String bundle = this.properties.getRedlock().getSsl().getBundle();
		try {
			return RedlockUris.parse(listed, bundle != null);
		}
		catch (InvalidLockSettingException ex) {
			boolean tls = "ssl".equals(ex.getSetting());
			throw invalid(prefix, ex, tls ? bundle : null,
					tls ? "" : ", or remove it to use the single Redis of spring.data.redis");
		}
	}

	private static RedlockSettings redlockSettings(DistLockProperties.Redlock redlock) {
		return check(null, () -> new RedlockSettings(redlock.getNodeTimeout(), redlock.getClockDriftFactor(),
				redlock.getRetryDelay(), redlock.getRetryJitter()));
	}

	/**
	 * Runs one of the library's rules, reporting a failure under the property the value came from.
	 * @param prefix {@code distlock.registries.<name>} for a named registry's value, {@code null} for a
	 * top-level one
	 */
	private static <T> T check(String prefix, Supplier<T> rule) {
		try {
			return rule.get();
		}
		catch (InvalidLockSettingException ex) {
			throw invalid(prefix, ex, null, "");
		}
	}

	/**
	 * @param shown the value as the message shows it; {@code null} for the one the library checked
	 * @param alternative more advice after the library's, such as {@code ", or remove it"}; may be empty
	 */
	private static InvalidDistLockPropertyException invalid(String prefix, InvalidLockSettingException ex, Object shown,
			String alternative) {
		String property = property(prefix, ex.getSetting());
		return new InvalidDistLockPropertyException(property, (shown != null) ? shown : ex.getValue(), ex.getProblem(),
				"Set " + property + " " + ex.getAdvice() + alternative + ".", ex);
	}

	/**
	 * @param prefix {@code distlock.registries.<name>}, or {@code null} for the top level
	 * @param setting a setting as the library names it
	 * @return the {@code distlock.*} property that sets it there
	 */
	static String property(String prefix, String setting) {
		Property row = PROPERTIES.get(setting);
		if (row == null) {
			throw new IllegalStateException("No distlock.* property sets the library's '" + setting + "'");
		}
		return (prefix != null && row.named() != null) ? prefix + "." + row.named() : row.top();
	}

	/** @return the default registry's settings */
	RegistrySpec defaults() {
		return this.defaults;
	}

	/** @return whether registries are named under {@code distlock.registries} */
	boolean hasNamedRegistries() {
		return !this.named.isEmpty();
	}

	/**
	 * @param name a registry named under {@code distlock.registries}
	 * @return its settings, with the top-level values where it sets none
	 */
	RegistrySpec registry(String name) {
		RegistrySpec spec = this.named.get(name);
		if (spec == null) {
			throw new IllegalArgumentException("No registry '" + name + "' under " + REGISTRIES);
		}
		return spec;
	}

	/** @return Redlock's tuning, checked; only where a registry uses Redlock */
	RedlockSettings redlockSettings() {
		return (this.redlockSettings != null) ? this.redlockSettings : redlockSettings(this.properties.getRedlock());
	}

	/** @return how many replicas must have a hold, for every registry on spring.data.redis */
	RedisReplicaAcks replicaAcks() {
		return this.replicaAcks;
	}

	/** @return the properties this was built from */
	DistLockProperties properties() {
		return this.properties;
	}

	/**
	 * @param spec the registry
	 * @param listeners the application's lock listeners, in order
	 * @param watchdog the watchdog that renews its leases
	 * @return the engine's options for that registry
	 */
	LockEngineOptions engineOptions(RegistrySpec spec, ObjectProvider<LockListener> listeners, LockWatchdog watchdog) {
		LockEngineOptions.Builder options = LockEngineOptions.builder()
			.watchdogTimeout(spec.watchdogTimeout())
			.watchdog(watchdog)
			.restartGrace(this.restartGrace);
		if (!this.properties.getWatchdog().isEnabled()) {
			// Checked above: distlock.lease-time is set when the watchdog is off.
			options.withoutWatchdog(this.properties.getLeaseTime());
		}
		listeners.orderedStream().forEach(options::listener);
		return options.build();
	}

	/**
	 * One registry's settings, for the per-backend factories that build the default registry and the
	 * named ones alike.
	 *
	 * @param prefix {@code distlock.registries.<name>}, or {@code null} for the default registry
	 * @param backend where its locks are kept
	 * @param keyPrefix a Redis registry's key prefix
	 * @param tableName a table lock's table
	 * @param createSchema whether to create that table if missing
	 * @param basePath a ZooKeeper registry's parent znode
	 * @param watchdogTimeout the lease of watchdog-kept locks
	 * @param redlockNodes a Redis registry's own Redlock masters, or {@code null} for none
	 */
	record RegistrySpec(String prefix, Backend backend, String keyPrefix, String tableName, boolean createSchema,
			String basePath, Duration watchdogTimeout, RedlockUris redlockNodes) {

		/** @return where {@code table-name} and {@code create-schema} are set, for a failure */
		String jdbcPrefix() {
			return (this.prefix != null) ? this.prefix : "distlock.jdbc";
		}

		/** @return where the Redlock masters are listed, for warnings and failures */
		String nodesProperty() {
			return property(this.prefix, "nodes");
		}

	}

}
