package io.distlock.redlock;

import java.time.Duration;

/**
 * The arithmetic of Redlock, as its description gives it.
 */
final class RedlockMath {

	private static final Duration DRIFT_CONSTANT = Duration.ofMillis(2);

	private RedlockMath() {
	}

	/** @return how many of {@code nodes} make a majority: N/2 + 1 */
	static int quorum(int nodes) {
		return nodes / 2 + 1;
	}

	/** @return the clock drift to allow for a lease: {@code lease * factor + 2 ms} */
	static Duration drift(Duration lease, double factor) {
		return Duration.ofNanos((long) (lease.toNanos() * factor)).plus(DRIFT_CONSTANT);
	}

	/**
	 * @return how long a lock taken with {@code lease}, after {@code elapsed} spent acquiring it, can
	 * be relied on: {@code lease - elapsed - drift}; zero or negative means not at all
	 */
	static Duration validity(Duration lease, Duration elapsed, double factor) {
		return lease.minus(elapsed).minus(drift(lease, factor));
	}

}
