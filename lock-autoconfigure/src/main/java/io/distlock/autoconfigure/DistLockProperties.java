package io.distlock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;

import io.distlock.InvalidLockSettingException;
import io.distlock.LockSettings;
import io.distlock.core.LockEngineOptions;
import io.distlock.jdbc.JdbcLockRegistry;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.redlock.RedlockSettings;
import io.distlock.zookeeper.ZooKeeperLockRegistry;
import io.lettuce.core.RedisURI;

/**
 * Settings of distlock, under {@code distlock.*}. Unknown keys under the prefix fail start-up, so a
 * misspelt property is not silently ignored.
 */
@ConfigurationProperties(prefix = "distlock", ignoreUnknownFields = false)
public class DistLockProperties implements InitializingBean {

	/** Just outside {@code @Transactional}, whose advisor has the lowest precedence by default. */
	public static final int DEFAULT_ADVISOR_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

	/**
	 * Whether to create the lock registry and apply @DistributedLock.
	 */
	private boolean enabled = true;

	/**
	 * Where locks are kept: REDIS (the Redis of spring.data.redis, or Redlock when
	 * distlock.redlock.nodes is set), JDBC (a table in the application's DataSource) or ZOOKEEPER (an
	 * ensemble, through the application's CuratorFramework bean or distlock.zookeeper.*).
	 */
	private Backend backend = Backend.REDIS;

	/**
	 * Prefix of every Redis key and channel distlock uses; lets several applications share one Redis.
	 */
	private String keyPrefix = RedisLockRegistry.DEFAULT_KEY_PREFIX;

	/**
	 * How long a @DistributedLock method waits for its lock when the annotation sets no waitTime. 0
	 * means fail at once if the lock is held.
	 */
	private Duration waitTime = Duration.ofSeconds(3);

	/**
	 * How long a @DistributedLock method may hold its lock when the annotation sets no leaseTime.
	 * Unset: the watchdog keeps the lock for as long as the method runs.
	 */
	private Duration leaseTime;

	/**
	 * Order of the @DistributedLock advisor. Must be lower (outer) than @Transactional's, so that the
	 * lock is released only after the transaction has committed.
	 */
	private int advisorOrder = DEFAULT_ADVISOR_ORDER;

	/**
	 * How long a Redis (or Redlock node) found to have lost its data (a restart without persistence,
	 * FLUSHALL, a failover to a replica that missed writes) refuses new holders, so that the holders
	 * it forgot learn of their loss first. Unset: the watchdog timeout, or distlock.lease-time if
	 * longer. 0: off, for servers nobody held a lock on before (tests, a throwaway embedded Redis). A
	 * brand-new server counts as one that lost its data: its first locks wait this long. Not applied
	 * on Redis Cluster.
	 */
	private Duration restartGrace;

	private final Watchdog watchdog = new Watchdog();

	private final Redlock redlock = new Redlock();

	private final Jdbc jdbc = new Jdbc();

	private final Zookeeper zookeeper = new Zookeeper();

	private final Health health = new Health();

	private final Web web = new Web();

	/**
	 * Further registries by name, each chosen per method with @DistributedLock(registry = "<name>")
	 * and never injected as the default LockRegistry: a table lock for the few methods that must
	 * survive a Redis failover, say, beside the default Redis one.
	 */
	private final Map<String, NamedRegistry> registries = new LinkedHashMap<>();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public Duration getWaitTime() {
		return this.waitTime;
	}

	public void setWaitTime(Duration waitTime) {
		this.waitTime = waitTime;
	}

	public Duration getLeaseTime() {
		return this.leaseTime;
	}

	public void setLeaseTime(Duration leaseTime) {
		this.leaseTime = leaseTime;
	}

	public int getAdvisorOrder() {
		return this.advisorOrder;
	}

	public void setAdvisorOrder(int advisorOrder) {
		this.advisorOrder = advisorOrder;
	}

	public Duration getRestartGrace() {
		return this.restartGrace;
	}

	public void setRestartGrace(Duration restartGrace) {
		this.restartGrace = restartGrace;
	}

	/**
	 * @return the restart grace in force: the one set, else the longer of the watchdog timeout and
	 * {@code distlock.lease-time} (a holder with an explicit lease is not renewed, so it is not told
	 * of a loss before its lease ends: nobody may enter before then)
	 */
	public Duration effectiveRestartGrace() {
		if (this.restartGrace != null) {
			return this.restartGrace;
		}
		Duration timeout = this.watchdog.getTimeout();
		return (this.leaseTime != null && this.leaseTime.compareTo(timeout) > 0) ? this.leaseTime : timeout;
	}

	public Watchdog getWatchdog() {
		return this.watchdog;
	}

	public Redlock getRedlock() {
		return this.redlock;
	}

	public Jdbc getJdbc() {
		return this.jdbc;
	}

	public Map<String, NamedRegistry> getRegistries() {
		return this.registries;
	}

	public Zookeeper getZookeeper() {
		return this.zookeeper;
	}

	public Health getHealth() {
		return this.health;
	}

	public Web getWeb() {
		return this.web;
	}

	public Backend getBackend() {
		return this.backend;
	}

	public void setBackend(Backend backend) {
		this.backend = backend;
	}

	@Override
	public void afterPropertiesSet() {
		check("distlock.key-prefix", () -> LockSettings.keyPrefix(this.keyPrefix));
		if (this.waitTime == null || this.waitTime.isNegative()) {
			throw new InvalidDistLockPropertyException("distlock.wait-time", this.waitTime, "must be zero or positive",
					"Set distlock.wait-time to a duration such as 500ms or 3s (0 means do not wait).");
		}
		if (this.leaseTime != null) {
			check("distlock.lease-time", () -> LockSettings.defaultLease(this.leaseTime));
		}
		Duration timeout = this.watchdog.getTimeout();
		check("distlock.watchdog.timeout", () -> LockSettings.watchdogTimeout(timeout));
		if (this.restartGrace != null) {
			check("distlock.restart-grace", () -> LockSettings.restartGrace(this.restartGrace));
		}
		requireCountable("distlock.wait-time", this.waitTime);
		requireCountable("distlock.lease-time", this.leaseTime);
		requireCountable("distlock.watchdog.timeout", timeout);
		requireCountable("distlock.restart-grace", this.restartGrace);
		this.redlock.validate();
		if (this.backend == Backend.JDBC && this.redlock.isConfigured()) {
			throw new InvalidDistLockPropertyException("distlock.backend", this.backend,
					"is JDBC, but distlock.redlock.nodes is set too; a lock lives in one backend",
					"Remove distlock.redlock.nodes to lock in the database, or set distlock.backend=redis for Redlock.");
		}
		if (this.backend == Backend.ZOOKEEPER && this.redlock.isConfigured()) {
			throw new InvalidDistLockPropertyException("distlock.backend", this.backend,
					"is ZOOKEEPER, but distlock.redlock.nodes is set too; a lock lives in one backend",
					"Remove distlock.redlock.nodes to lock in ZooKeeper, or set distlock.backend=redis for Redlock.");
		}
		this.zookeeper.validate();
		this.registries.forEach((name, registry) -> registry.validate("distlock.registries." + name, name,
				this.redlock.getSsl().getBundle()));
		if (this.registries.values().stream().anyMatch(registry -> !registry.getRedlockNodes().isEmpty())) {
			this.redlock.validateSettings();
		}
		check("distlock.jdbc.table-name", () -> LockSettings.tableName(this.jdbc.getTableName()));
		if (!this.watchdog.isEnabled() && this.leaseTime == null) {
			throw new InvalidDistLockPropertyException("distlock.lease-time", null,
					"must be set when distlock.watchdog.enabled=false, or @DistributedLock methods would hold their "
							+ "locks with no expiry",
					"Set distlock.lease-time (e.g. 30s) longer than your slowest locked method, or re-enable the watchdog.");
		}
	}

	/**
	 * The lock engine counts waits and leases in nanoseconds, which a {@code long} holds for 292
	 * years; past that every acquisition failed with "long overflow" long after start-up.
	 */
	private static final Duration LONGEST = Duration.ofDays(36_500);

	private static void requireCountable(String property, Duration value) {
		if (value != null && value.compareTo(LONGEST) > 0) {
			throw new InvalidDistLockPropertyException(property, value,
					"must be at most 36500d (100 years); the lock engine counts time in nanoseconds",
					"Set " + property + " to a duration such as 30s.");
		}
	}

	/**
	 * Runs one of the library's checks on a value, reporting a failure under the property it came
	 * from: the rules live in {@link LockSettings}, once, for the registries' builders and for these
	 * properties alike.
	 */
	static void check(String property, Runnable libraryCheck) {
		check(property, null, "", libraryCheck);
	}

	/**
	 * {@link #check(String, Runnable)}, showing {@code shown} as the value instead of what the library
	 * checked (a list, not its size; a value with its secrets masked) and adding {@code alternative}
	 * to the advice.
	 * @param shown the value as the message shows it; {@code null} for the one the library checked
	 * @param alternative more advice after the library's, such as {@code ", or remove it"}; may be empty
	 */
	static void check(String property, Object shown, String alternative, Runnable libraryCheck) {
		try {
			libraryCheck.run();
		}
		catch (InvalidLockSettingException ex) {
			throw new InvalidDistLockPropertyException(property, (shown != null) ? shown : ex.getValue(), ex.getProblem(),
					"Set " + property + " " + ex.getAdvice() + alternative + ".", ex);
		}
	}

	/**
	 * A registry named in distlock.registries: its backend and what differs from the default's
	 * settings. Redis and ZooKeeper registries use the application's own connection factory or
	 * CuratorFramework bean, a table lock its DataSource.
	 */
	public static class NamedRegistry {

		/**
		 * Where this registry keeps its locks: REDIS, JDBC or ZOOKEEPER. Required.
		 */
		private Backend backend;

		/**
		 * Prefix of this registry's Redis keys and channels. Unset: distlock.key-prefix.
		 */
		private String keyPrefix;

		/**
		 * This registry's lock table. Unset: distlock.jdbc.table-name.
		 */
		private String tableName;

		/**
		 * Whether to create this registry's lock table if missing. Unset: distlock.jdbc.create-schema.
		 */
		private Boolean createSchema;

		/**
		 * The parent of this registry's lock nodes. Unset: distlock.zookeeper.base-path.
		 */
		private String basePath;

		/**
		 * The watchdog lease of this registry's locks. Unset: distlock.watchdog.timeout.
		 */
		private Duration watchdogTimeout;

		/**
		 * Independent Redis masters (at least 3) that make this REDIS registry a Redlock, written as
		 * distlock.redlock.nodes; its timeouts and TLS come from distlock.redlock.*. Unset: the
		 * application's own Redis (spring.data.redis).
		 */
		private List<String> redlockNodes = new ArrayList<>();

		public Backend getBackend() {
			return this.backend;
		}

		public void setBackend(Backend backend) {
			this.backend = backend;
		}

		public String getKeyPrefix() {
			return this.keyPrefix;
		}

		public void setKeyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
		}

		public String getTableName() {
			return this.tableName;
		}

		public void setTableName(String tableName) {
			this.tableName = tableName;
		}

		public Boolean getCreateSchema() {
			return this.createSchema;
		}

		public void setCreateSchema(Boolean createSchema) {
			this.createSchema = createSchema;
		}

		public String getBasePath() {
			return this.basePath;
		}

		public void setBasePath(String basePath) {
			this.basePath = basePath;
		}

		public Duration getWatchdogTimeout() {
			return this.watchdogTimeout;
		}

		public void setWatchdogTimeout(Duration watchdogTimeout) {
			this.watchdogTimeout = watchdogTimeout;
		}

		public List<String> getRedlockNodes() {
			return this.redlockNodes;
		}

		public void setRedlockNodes(List<String> redlockNodes) {
			this.redlockNodes = redlockNodes;
		}

		void validate(String prefix, String name, String redlockSslBundle) {
			if (LockRegistries.DEFAULT.equals(name)) {
				throw new InvalidDistLockPropertyException(prefix, name,
						"is the name of the default registry, which distlock.backend configures",
						"Give the registry another name, such as 'tables', and name it in @DistributedLock(registry = ...).");
			}
			if (this.backend == null) {
				throw new InvalidDistLockPropertyException(prefix + ".backend", null, "must be set",
						"Set " + prefix + ".backend to redis, jdbc or zookeeper.");
			}
			if (this.tableName != null) {
				check(prefix + ".table-name", () -> LockSettings.tableName(this.tableName));
			}
			if (this.watchdogTimeout != null) {
				check(prefix + ".watchdog-timeout", () -> LockSettings.watchdogTimeout(this.watchdogTimeout));
			}
			requireCountable(prefix + ".watchdog-timeout", this.watchdogTimeout);
			String misplaced = (this.backend != Backend.REDIS && this.keyPrefix != null) ? "key-prefix"
					: (this.backend != Backend.REDIS && !this.redlockNodes.isEmpty()) ? "redlock-nodes"
					: (this.backend != Backend.JDBC && (this.tableName != null || this.createSchema != null)) ? "table-name"
					: (this.backend != Backend.ZOOKEEPER && this.basePath != null) ? "base-path" : null;
			if (misplaced != null) {
				throw new InvalidDistLockPropertyException(prefix + "." + misplaced, this.backend,
						"does not apply to a " + this.backend + " registry",
						"Remove it, or set " + prefix + ".backend to the backend it belongs to.");
			}
			if (this.keyPrefix != null) {
				check(prefix + ".key-prefix", () -> LockSettings.keyPrefix(this.keyPrefix));
			}
			if (this.basePath != null) {
				check(prefix + ".base-path", () -> LockSettings.basePath(this.basePath));
			}
			if (!this.redlockNodes.isEmpty()) {
				Redlock.validateNodes(prefix + ".redlock-nodes", this.redlockNodes, redlockSslBundle);
			}
		}

	}

	/** Where locks are kept. */
	public enum Backend {

		/** Redis: single server, Sentinel or Cluster via spring.data.redis, or Redlock. */
		REDIS,

		/** A table in the application's DataSource (MySQL, MariaDB, PostgreSQL, H2). */
		JDBC,

		/** A ZooKeeper ensemble, through Apache Curator. */
		ZOOKEEPER

	}

	/**
	 * The table lock, with distlock.backend=jdbc.
	 */
	public static class Jdbc {

		/**
		 * The lock table; its fencing counter is the table <name>_fencing.
		 */
		private String tableName = JdbcLockRegistry.DEFAULT_TABLE_NAME;

		/**
		 * Whether to create the tables at start-up if they do not exist (from the DDL shipped for the
		 * database). Off by default: most teams manage schema with Flyway or Liquibase.
		 */
		private boolean createSchema;

		public String getTableName() {
			return this.tableName;
		}

		public void setTableName(String tableName) {
			this.tableName = tableName;
		}

		public boolean isCreateSchema() {
			return this.createSchema;
		}

		public void setCreateSchema(boolean createSchema) {
			this.createSchema = createSchema;
		}

	}

	/**
	 * The distlock health indicator.
	 */
	public static class Health {

		/**
		 * How long the health indicator waits for the backend to answer. Past it the health is DOWN
		 * ("did not answer within ..."), so a frozen server cannot hold a liveness or readiness probe
		 * past its own timeout.
		 */
		private Duration timeout = Duration.ofSeconds(1);

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

	}

	/**
	 * How Spring MVC and WebFlux answer a request whose @DistributedLock method did not get its lock.
	 */
	public static class Web {

		/**
		 * Whether a LockAcquisitionException becomes an RFC 9457 problem response: 409 Conflict when
		 * another holder kept the lock, 503 Service Unavailable when the backend failed or served its
		 * restart grace, each with a Retry-After header. An @ExceptionHandler of the application's
		 * for it takes precedence either way.
		 */
		private boolean problemDetails = true;

		/**
		 * The Retry-After of those responses, unless the restart grace says when it ends.
		 */
		private Duration retryAfter = Duration.ofSeconds(1);

		public boolean isProblemDetails() {
			return this.problemDetails;
		}

		public void setProblemDetails(boolean problemDetails) {
			this.problemDetails = problemDetails;
		}

		public Duration getRetryAfter() {
			return this.retryAfter;
		}

		public void setRetryAfter(Duration retryAfter) {
			this.retryAfter = retryAfter;
		}

	}

	/**
	 * The ZooKeeper lock, with distlock.backend=zookeeper.
	 */
	public static class Zookeeper {

		/**
		 * The ensemble, as host:port pairs separated by commas, optionally followed by a chroot path
		 * (zk1:2181,zk2:2181,zk3:2181/apps). Required unless the application defines a
		 * CuratorFramework bean, which is then used instead of these settings.
		 */
		private String connectString;

		/**
		 * How long the ensemble keeps this client's session, and so its locks, once it stops hearing
		 * from it: a crashed or cut-off instance's locks are freed this long after it went silent. The
		 * ensemble bounds it to 2 to 20 of its ticks.
		 */
		private Duration sessionTimeout = Duration.ofSeconds(30);

		/**
		 * How long a call waits for a connection to the ensemble before it fails; also bounds how
		 * long an acquisition blocks when the ensemble is unreachable.
		 */
		private Duration connectionTimeout = Duration.ofSeconds(5);

		/**
		 * The znode under which every lock is a child node.
		 */
		private String basePath = ZooKeeperLockRegistry.DEFAULT_BASE_PATH;

		public String getConnectString() {
			return this.connectString;
		}

		public void setConnectString(String connectString) {
			this.connectString = connectString;
		}

		public Duration getSessionTimeout() {
			return this.sessionTimeout;
		}

		public void setSessionTimeout(Duration sessionTimeout) {
			this.sessionTimeout = sessionTimeout;
		}

		public Duration getConnectionTimeout() {
			return this.connectionTimeout;
		}

		public void setConnectionTimeout(Duration connectionTimeout) {
			this.connectionTimeout = connectionTimeout;
		}

		public String getBasePath() {
			return this.basePath;
		}

		public void setBasePath(String basePath) {
			this.basePath = basePath;
		}

		void validate() {
			if (this.sessionTimeout == null || this.sessionTimeout.toMillis() < 1 || this.sessionTimeout.toMillis() > Integer.MAX_VALUE) {
				throw new InvalidDistLockPropertyException("distlock.zookeeper.session-timeout", this.sessionTimeout,
						"must be a positive duration", "Set distlock.zookeeper.session-timeout to e.g. 30s.");
			}
			if (this.connectionTimeout == null || this.connectionTimeout.toMillis() < 1
					|| this.connectionTimeout.toMillis() > Integer.MAX_VALUE) {
				throw new InvalidDistLockPropertyException("distlock.zookeeper.connection-timeout", this.connectionTimeout,
						"must be a positive duration", "Set distlock.zookeeper.connection-timeout to e.g. 5s.");
			}
			check("distlock.zookeeper.base-path", () -> LockSettings.basePath(this.basePath));
		}

	}

	/**
	 * Redlock: the same locks over several independent Redis masters, held by a majority of them.
	 */
	public static class Redlock {

		/**
		 * Redis URIs of the independent masters (redis://host:port), at least 3 and preferably an
		 * odd number. When set, locks use Redlock instead of spring.data.redis.
		 */
		private List<String> nodes = new ArrayList<>();

		/**
		 * How long one node may take to answer before it counts as failed. Keep it small against the
		 * lease.
		 */
		private Duration nodeTimeout = RedlockSettings.DEFAULTS.nodeTimeout();

		/**
		 * Share of the lease allowed for clock drift; the allowance is lease * factor + 2ms.
		 */
		private double clockDriftFactor = RedlockSettings.DEFAULTS.clockDriftFactor();

		/**
		 * The least pause before retrying after a failed attempt.
		 */
		private Duration retryDelay = RedlockSettings.DEFAULTS.retryDelay();

		/**
		 * The most random time added to the retry pause, so that competing clients do not retry in
		 * lockstep.
		 */
		private Duration retryJitter = RedlockSettings.DEFAULTS.retryJitter();

		/**
		 * TLS for rediss:// nodes.
		 */
		private final Ssl ssl = new Ssl();

		public List<String> getNodes() {
			return this.nodes;
		}

		public void setNodes(List<String> nodes) {
			this.nodes = nodes;
		}

		public Duration getNodeTimeout() {
			return this.nodeTimeout;
		}

		public void setNodeTimeout(Duration nodeTimeout) {
			this.nodeTimeout = nodeTimeout;
		}

		public double getClockDriftFactor() {
			return this.clockDriftFactor;
		}

		public void setClockDriftFactor(double clockDriftFactor) {
			this.clockDriftFactor = clockDriftFactor;
		}

		public Duration getRetryDelay() {
			return this.retryDelay;
		}

		public void setRetryDelay(Duration retryDelay) {
			this.retryDelay = retryDelay;
		}

		public Duration getRetryJitter() {
			return this.retryJitter;
		}

		public void setRetryJitter(Duration retryJitter) {
			this.retryJitter = retryJitter;
		}

		public Ssl getSsl() {
			return this.ssl;
		}

		/** @return whether Redlock is configured */
		public boolean isConfigured() {
			return !this.nodes.isEmpty();
		}

		/** @return the algorithm's tuning */
		public RedlockSettings toSettings() {
			return new RedlockSettings(this.nodeTimeout, this.clockDriftFactor, this.retryDelay, this.retryJitter);
		}

		/**
		 * Checks a list of Redlock masters: at least 3, each a Redis URI, none twice, TLS where a bundle
		 * is set; a failure names {@code property} and never prints a password.
		 */
		static void validateNodes(String property, List<String> nodes, String sslBundle) {
			// The list, not the count, and never a password: RedisUriText masks them.
			check(property, RedisUriText.redact(nodes), ", or remove it to use the single Redis of spring.data.redis",
					() -> LockSettings.redlockMasters(nodes.size()));
			Set<String> seen = new HashSet<>();
			for (int i = 0; i < nodes.size(); i++) {
				String node = nodes.get(i);
				String shown = RedisUriText.redact(node, i + 1);
				RedisURI uri;
				try {
					uri = RedisURI.create(node);
				}
				catch (RuntimeException ex) {
					// The parser's message quotes the raw entry, password and all: name the entry instead.
					throw new InvalidDistLockPropertyException(property, RedisUriText.redact(nodes),
							"entry " + (i + 1) + " is not a Redis URI (" + ex.getClass().getSimpleName() + ")",
							"Write each node as redis://host:port, or rediss://user:password@host:port for TLS; "
									+ "percent-encode special characters in the password.");
				}
				String address = uri.getHost().toLowerCase(Locale.ROOT) + ":" + uri.getPort() + "/" + uri.getDatabase();
				if (!seen.add(address)) {
					throw new InvalidDistLockPropertyException(property, RedisUriText.redact(nodes),
							"lists " + shown + " twice; a duplicate would count twice towards the majority",
							"List every independent master once.");
				}
				if (sslBundle != null && !uri.isSsl()) {
					throw new InvalidDistLockPropertyException("distlock.redlock.ssl.bundle", sslBundle,
							"is set, but node " + shown + " of " + property + " is not a TLS URI",
							"Write every Redlock node as rediss://host:port (the server's tls-port), or remove "
									+ "distlock.redlock.ssl.bundle.");
				}
			}
		}

		void validate() {
			if (!isConfigured()) {
				return;
			}
			validateNodes("distlock.redlock.nodes", this.nodes, this.ssl.getBundle());
			validateSettings();
		}

		/** Checks the algorithm's tuning, which named Redlock registries use too. */
		void validateSettings() {
			check("distlock.redlock.node-timeout", () -> LockSettings.nodeTimeout(this.nodeTimeout));
			check("distlock.redlock.clock-drift-factor", () -> LockSettings.clockDriftFactor(this.clockDriftFactor));
			check("distlock.redlock.retry-delay", () -> LockSettings.retryPause("retryDelay", this.retryDelay));
			check("distlock.redlock.retry-jitter", () -> LockSettings.retryPause("retryJitter", this.retryJitter));
		}

	}

	/**
	 * TLS for Redlock nodes.
	 */
	public static class Ssl {

		/**
		 * Name of the SSL bundle (spring.ssl.bundle.*) with the trust material, and the client
		 * certificate if the servers ask for one, for the rediss:// nodes. Unset: the JVM's default
		 * trust store.
		 */
		private String bundle;

		public String getBundle() {
			return this.bundle;
		}

		public void setBundle(String bundle) {
			this.bundle = bundle;
		}

	}

	/**
	 * The watchdog that renews locks taken without a lease.
	 */
	public static class Watchdog {

		/**
		 * Whether locks taken without a lease (@DistributedLock methods without a leaseTime, and the
		 * registry's lock() and tryLock(wait)) are kept by the watchdog. When false, they get
		 * distlock.lease-time, which is then required, and are never renewed.
		 */
		private boolean enabled = true;

		/**
		 * The lease of watchdog-kept locks; renewed every third of it while held. A crashed holder's lock
		 * is freed at most this long after the crash.
		 */
		private Duration timeout = LockEngineOptions.DEFAULT_WATCHDOG_TIMEOUT;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

	}

}
