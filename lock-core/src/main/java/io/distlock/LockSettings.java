package io.distlock;

import java.time.Duration;
import java.util.regex.Pattern;

/**
 * The one place where distlock checks the settings of its registries: the registries and their
 * builders call these checks, and so does the Spring Boot auto-configuration, which reports a
 * failure under the {@code distlock.*} property the value came from. Each check returns the value
 * it accepted.
 */
public final class LockSettings {

	/** The least watchdog timeout: renewals every third of it must still fit a round trip. */
	public static final Duration MIN_WATCHDOG_TIMEOUT = Duration.ofMillis(30);

	/** The fewest Redlock masters: a majority of two is both of them, which no failure leaves. */
	public static final int MIN_REDLOCK_MASTERS = 3;

	/**
	 * The longest duration distlock takes: the lock engine counts waits and leases in nanoseconds,
	 * which a {@code long} holds for 292 years; past that every acquisition would fail with "long
	 * overflow" long after start-up.
	 */
	public static final Duration LONGEST_DURATION = Duration.ofDays(36_500);

	/** A plain SQL identifier, which needs no quoting on any of the supported databases. */
	private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

	private LockSettings() {
	}

	/**
	 * @param keyPrefix the namespace of a Redis registry's keys and channels
	 * @return the prefix
	 * @throws InvalidLockSettingException if it is blank or has a Redis Cluster hash tag brace
	 */
	public static String keyPrefix(String keyPrefix) {
		if (keyPrefix == null || keyPrefix.isBlank() || keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
			throw new InvalidLockSettingException("keyPrefix", keyPrefix,
					"must be non-blank and contain no '{' or '}' (they are Redis Cluster hash tags)",
					"to a plain name such as 'distlock' or 'orders-locks'");
		}
		return keyPrefix;
	}

	/**
	 * @param watchdogTimeout the lease of locks taken without one, renewed every third of it
	 * @return the timeout
	 * @throws InvalidLockSettingException if it is missing or shorter than {@link #MIN_WATCHDOG_TIMEOUT}
	 */
	public static Duration watchdogTimeout(Duration watchdogTimeout) {
		if (watchdogTimeout == null || watchdogTimeout.compareTo(MIN_WATCHDOG_TIMEOUT) < 0) {
			throw new InvalidLockSettingException("watchdogTimeout", watchdogTimeout, "must be at least 30ms",
					"to a duration such as 30s; locks are renewed every third of it");
		}
		return watchdogTimeout;
	}

	/**
	 * @param waitTime how long a lock call waits by default for a lock another holder has
	 * @return the wait
	 * @throws InvalidLockSettingException if it is missing or negative
	 */
	public static Duration waitTime(Duration waitTime) {
		if (waitTime == null || waitTime.isNegative()) {
			throw new InvalidLockSettingException("waitTime", waitTime, "must be zero or positive",
					"to a duration such as 500ms or 3s (0 means do not wait)");
		}
		return waitTime;
	}

	/**
	 * @param setting the setting's name, as the builders spell it (e.g. {@code waitTime})
	 * @param duration one of the durations of that setting; {@code null} (unset) passes
	 * @return the duration
	 * @throws InvalidLockSettingException if it is longer than {@link #LONGEST_DURATION}
	 */
	public static Duration countable(String setting, Duration duration) {
		if (duration != null && duration.compareTo(LONGEST_DURATION) > 0) {
			throw new InvalidLockSettingException(setting, duration,
					"must be at most 36500d (100 years); the lock engine counts time in nanoseconds",
					"to a duration such as 30s");
		}
		return duration;
	}

	/**
	 * @param restartGrace how long a restarted Redis keeps refusing new holders
	 * @return the grace
	 * @throws InvalidLockSettingException if it is missing or negative
	 */
	public static Duration restartGrace(Duration restartGrace) {
		if (restartGrace == null || restartGrace.isNegative()) {
			throw new InvalidLockSettingException("restartGrace", restartGrace, "must be zero or positive",
					"to a duration such as 30s, to 0 to turn it off, or leave it out to use the watchdog timeout");
		}
		return restartGrace;
	}

	/**
	 * @param lease the lease of locks taken without one when the watchdog is off
	 * @return the lease
	 * @throws InvalidLockSettingException if it is zero or negative
	 */
	public static Duration defaultLease(Duration lease) {
		if (lease == null || lease.isNegative() || lease.isZero()) {
			throw new InvalidLockSettingException("defaultLease", lease, "must be positive",
					"to a duration such as 30s, longer than the slowest critical section");
		}
		return lease;
	}

	/**
	 * @param tableName a table lock's table
	 * @return the name
	 * @throws InvalidLockSettingException if it is not a plain SQL identifier
	 */
	public static String tableName(String tableName) {
		if (tableName == null || !TABLE_NAME.matcher(tableName).matches()) {
			throw new InvalidLockSettingException("tableName", tableName,
					"must be a plain SQL identifier (letters, digits, _)", "to a name such as distributed_locks");
		}
		return tableName;
	}

	/**
	 * @param basePath the parent znode of a ZooKeeper registry's lock nodes
	 * @return the path
	 * @throws InvalidLockSettingException if it is not an absolute path without a trailing '/'
	 */
	public static String basePath(String basePath) {
		if (basePath == null || !basePath.matches("(/[^/\\s]+)+")) {
			throw new InvalidLockSettingException("basePath", basePath,
					"must be an absolute znode path without a trailing '/'", "to a path such as /distlock or /apps/orders/locks");
		}
		return basePath;
	}

	/**
	 * @param sessionTimeout how long a ZooKeeper ensemble keeps a client's session, and so its locks
	 * @return the timeout
	 * @throws InvalidLockSettingException if it is not a positive number of milliseconds that fits an
	 * {@code int}, as Curator takes it
	 */
	public static Duration sessionTimeout(Duration sessionTimeout) {
		return zooKeeperMillis("sessionTimeout", sessionTimeout, "30s");
	}

	/**
	 * @param connectionTimeout how long a ZooKeeper call waits for a connection to the ensemble
	 * @return the timeout
	 * @throws InvalidLockSettingException if it is not a positive number of milliseconds that fits an
	 * {@code int}, as Curator takes it
	 */
	public static Duration connectionTimeout(Duration connectionTimeout) {
		return zooKeeperMillis("connectionTimeout", connectionTimeout, "5s");
	}

	private static Duration zooKeeperMillis(String setting, Duration timeout, String example) {
		if (timeout == null || timeout.toMillis() < 1 || timeout.toMillis() > Integer.MAX_VALUE) {
			throw new InvalidLockSettingException(setting, timeout, "must be a positive duration", "to e.g. " + example);
		}
		return timeout;
	}

	/**
	 * @param masters how many independent Redis masters a Redlock registry has
	 * @return the number
	 * @throws InvalidLockSettingException if there are fewer than {@link #MIN_REDLOCK_MASTERS}
	 */
	public static int redlockMasters(int masters) {
		if (masters < MIN_REDLOCK_MASTERS) {
			throw new InvalidLockSettingException("nodes", masters + " masters",
					"must be at least 3 independent masters for Redlock",
					"to 3, 5 or 7 independent Redis masters (not replicas of one another)");
		}
		return masters;
	}

	/**
	 * @param nodeTimeout how long one Redlock master may take to answer
	 * @return the timeout
	 * @throws InvalidLockSettingException if it is missing, zero or negative
	 */
	public static Duration nodeTimeout(Duration nodeTimeout) {
		if (nodeTimeout == null || nodeTimeout.isNegative() || nodeTimeout.isZero()) {
			throw new InvalidLockSettingException("nodeTimeout", nodeTimeout, "must be positive",
					"to a duration such as 100ms");
		}
		return nodeTimeout;
	}

	/**
	 * @param setting {@code retryDelay} or {@code retryJitter}
	 * @param pause a part of the pause between two Redlock attempts
	 * @return the pause
	 * @throws InvalidLockSettingException if it is missing or negative
	 */
	public static Duration retryPause(String setting, Duration pause) {
		if (pause == null || pause.isNegative()) {
			throw new InvalidLockSettingException(setting, pause, "must not be negative", "to a duration such as 5ms, or 0");
		}
		return pause;
	}

	/**
	 * @param clockDriftFactor the share of a Redlock lease allowed for clock drift between masters
	 * @return the factor
	 * @throws InvalidLockSettingException if it is outside [0, 0.5)
	 */
	public static double clockDriftFactor(double clockDriftFactor) {
		if (!(clockDriftFactor >= 0 && clockDriftFactor < 0.5)) {
			throw new InvalidLockSettingException("clockDriftFactor", clockDriftFactor,
					"must be in [0, 0.5) (the clock drift factor, a share of the lease)", "to a share such as 0.01");
		}
		return clockDriftFactor;
	}

}
