package io.distlock.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Lets one warning through per interval and counts the ones held back meanwhile: a failure that
 * repeats on every call (a dead backend, a method skipped on every request) is logged once in a
 * while, saying how often it happened, instead of flooding the log. The first warning always goes
 * through. Thread-safe; for distlock's own warnings.
 */
public final class WarningWindow {

	/** The last warning's time until the first: none yet. */
	private static final long NEVER = Long.MIN_VALUE;

	private final long intervalNanos;

	private final AtomicLong lastNanos = new AtomicLong(NEVER);

	private final AtomicLong heldBack = new AtomicLong();

	/** @param interval the least time between two warnings let through */
	public WarningWindow(Duration interval) {
		this.intervalNanos = interval.toNanos();
	}

	/**
	 * @param nowNanos the time now, as {@link System#nanoTime()} counts it
	 * @return how many warnings were held back since the last one let through, if this one goes
	 * through; {@code -1} if it is held back
	 */
	public long enter(long nowNanos) {
		long last = this.lastNanos.get();
		if ((last == NEVER || nowNanos - last >= this.intervalNanos) && this.lastNanos.compareAndSet(last, nowNanos)) {
			return this.heldBack.getAndSet(0);
		}
		this.heldBack.incrementAndGet();
		return -1;
	}

}
