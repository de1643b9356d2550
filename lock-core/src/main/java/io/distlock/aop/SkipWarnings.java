package io.distlock.aop;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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

	private final long intervalNanos;

	private final LongSupplier clock;

	/**
	 * Per method (its description: two methods sharing a lock name are warned about each), so its size
	 * is bounded by the code, never by the keys.
	 */
	private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();

	SkipWarnings() {
		this(DEFAULT_INTERVAL, System::nanoTime);
	}

	SkipWarnings(Duration interval, LongSupplier clock) {
		this.intervalNanos = interval.toNanos();
		this.clock = clock;
	}

	/**
	 * @param attribute the skipped method
	 * @param why what stopped it: the backend's error, or the grace's refusal
	 * @return whether it was logged (not within the interval of the last one)
	 */
	boolean skipped(LockAttribute attribute, Throwable why) {
		Window window = this.windows.computeIfAbsent(attribute.description(), name -> new Window());
		long now = this.clock.getAsLong();
		long unsaid = window.enter(now, this.intervalNanos);
		if (unsaid < 0) {
			return false;
		}
		String more = (unsaid > 0) ? " (" + unsaid + " more such skip(s) since the last warning)" : "";
		log.warn("@DistributedLock {} was skipped (onFailure = SKIP) for a reason other than another holder: {}{}",
				attribute.description(), why.getMessage(), more);
		return true;
	}

	/** One method's last warning and the skips since. */
	private static final class Window {

		/** The last warning's time; {@code NEVER} until the first, which is always logged. */
		private static final long NEVER = Long.MIN_VALUE;

		private final AtomicLong lastNanos = new AtomicLong(NEVER);

		private final AtomicLong unsaid = new AtomicLong();

		/** @return the skips left unsaid since the last warning if this one is to be logged, else -1 */
		long enter(long now, long intervalNanos) {
			long last = this.lastNanos.get();
			if ((last == NEVER || now - last >= intervalNanos) && this.lastNanos.compareAndSet(last, now)) {
				return this.unsaid.getAndSet(0);
			}
			this.unsaid.incrementAndGet();
			return -1;
		}

	}

}
