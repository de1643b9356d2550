package io.distlock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;

import io.distlock.core.LockEngineOptions;
import io.distlock.jdbc.JdbcLockRegistry;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.redis.RedisReplicaAcks;
import io.distlock.redlock.RedlockSettings;
import io.distlock.zookeeper.ZooKeeperLockRegistry;

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

	private final Redis redis = new Redis();

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

	public Watchdog getWatchdog() {
		return this.watchdog;
	}

	public Redis getRedis() {
		return this.redis;
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

	/**
	 * Checks the bound values where they are bound, so that a wrong one stops start-up wherever these
	 * properties are enabled; the rules, and the property each failure names, are
	 * {@link DistLockSettings}'.
	 */
	@Override
	public void afterPropertiesSet() {
		new DistLockSettings(this);
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

		/**
		 * How exclusive locks are held, for the default registry and the named ZooKeeper ones:
		 * lock-node (the holder is the lock's own node; every earlier version's way) or line (the
		 * holder is the first node of the lock's line, as with Curator's InterProcessMutex; contended
		 * locks change hands with one write less). Instances of the two exclude each other, so a
		 * switch can roll through a running service.
		 */
		private ZooKeeperLockRegistry.ExclusiveProtocol exclusiveProtocol = ZooKeeperLockRegistry.ExclusiveProtocol.LOCK_NODE;

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

		public ZooKeeperLockRegistry.ExclusiveProtocol getExclusiveProtocol() {
			return this.exclusiveProtocol;
		}

		public void setExclusiveProtocol(ZooKeeperLockRegistry.ExclusiveProtocol exclusiveProtocol) {
			this.exclusiveProtocol = exclusiveProtocol;
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
	 * Locks on the Redis of spring.data.redis (a single master with replicas, or Sentinel).
	 */
	public static class Redis {

		/**
		 * How many replicas must have a hold before its holder goes on (WAIT after each acquisition,
		 * and after taking up a lock handed over). A master that crashes right after a grant then
		 * cannot leave a promoted replica without it. 0: none (replication stays asynchronous). An
		 * acquisition too few replicas acknowledge is given back and fails. Not on Redis Cluster; a
		 * proxy that refuses WAIT needs 0.
		 */
		private int replicaAcks;

		/**
		 * How long an acquisition waits for distlock.redis.replica-acks replicas at most; also bounded
		 * by the caller's own wait time and by half the lease.
		 */
		private Duration replicaAckTimeout = RedisReplicaAcks.NONE.timeout();

		/**
		 * Whether a replica counts only once it has written the hold to its append-only file (WAITAOF,
		 * Redis 7.2+, replicas with appendonly yes) rather than once it has received it (WAIT).
		 */
		private boolean replicaAcksAppendOnly;

		public int getReplicaAcks() {
			return this.replicaAcks;
		}

		public void setReplicaAcks(int replicaAcks) {
			this.replicaAcks = replicaAcks;
		}

		public Duration getReplicaAckTimeout() {
			return this.replicaAckTimeout;
		}

		public void setReplicaAckTimeout(Duration replicaAckTimeout) {
			this.replicaAckTimeout = replicaAckTimeout;
		}

		public boolean isReplicaAcksAppendOnly() {
			return this.replicaAcksAppendOnly;
		}

		public void setReplicaAcksAppendOnly(boolean replicaAcksAppendOnly) {
			this.replicaAcksAppendOnly = replicaAcksAppendOnly;
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
