package io.distlock.aop;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.core.WarningWindow;

/**
 * Says when a method that may be skipped ({@code onFailure = SKIP}, {@code @ClusterSingleton}) was
 * skipped for a reason other than another holder: the backend failed, or served its restart grace.
 * (A failure handler is told the cause itself, in its {@code LockFailure}.) Its caller only sees the fallback value, so without this a wrong
 * password or a dead Redis would skip every call in silence. At most one WARN per method and
 * interval, counting the ones left unsaid, so a dead backend under load does not flood the log.
 */
final class SkipWarnings {

	private static final Logger log = LoggerFactory.getLogger(SkipWarnings.class);

	/** What a method's skips look like when they are logged. */
	private static final Duration DEFAULT_INTERVAL = Duration.ofMinutes(1);

	private final Duration interval;

	private final LongSupplier clock;

	/**
	 * Per method (its description: two methods sharing a lock name are warned about each), so its size
	 * is bounded by the code, never by the keys.
	 */
	private final ConcurrentHashMap<String, WarningWindow> windows = new ConcurrentHashMap<>();

	SkipWarnings() {
		this(DEFAULT_INTERVAL, System::nanoTime);
	}

	SkipWarnings(Duration interval, LongSupplier clock) {
		this.interval = interval;
		this.clock = clock;
	}

	/**
	 * @param attribute the skipped method
	 * @param why what stopped it: the backend's error, or the grace's refusal
	 * @return whether it was logged (not within the interval of the last one)
	 */
	boolean skipped(LockAttribute attribute, Throwable why) {
		WarningWindow window = this.windows.computeIfAbsent(attribute.description(),
				name -> new WarningWindow(this.interval));
		long unsaid = window.enter(this.clock.getAsLong());
		if (unsaid < 0) {
			return false;
		}
		String more = (unsaid > 0) ? " (" + unsaid + " more such skip(s) since the last warning)" : "";
		log.warn("@DistributedLock {} was skipped (onFailure = SKIP) for a reason other than another holder: {}{}",
				attribute.description(), why.getMessage(), more);
		return true;
	}

}
