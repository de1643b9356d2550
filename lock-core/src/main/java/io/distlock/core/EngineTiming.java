package io.distlock.core;

import java.time.Duration;

/**
 * How long the engine's parts wait, sleep and retry: one place for the few fixed times that the
 * blocking and the non-blocking acquisitions and the unlocking share.
 */
final class EngineTiming {

	/** How long a waiter sleeps when the holder's TTL is unknown or already over. */
	static final long RETRY_NANOS = Duration.ofMillis(10).toNanos();

	/** The least time a timed acquisition gets for its backend calls, even with a zero wait. */
	static final long MIN_ATTEMPT_NANOS = Duration.ofSeconds(1).toNanos();

	/** How far past its wait a timed acquisition may block on the backend before it is cut off. */
	static final long DEADLINE_GRACE_NANOS = Duration.ofMillis(100).toNanos();

	/** The first and the longest sleep between attempts while release notifications cannot be received. */
	static final long UNSUBSCRIBED_FIRST_SLEEP_NANOS = Duration.ofMillis(5).toNanos();

	static final long UNSUBSCRIBED_MAX_SLEEP_NANOS = Duration.ofMillis(100).toNanos();

	/** How long unlock() waits for the backend beyond the hold's confirmed lease. */
	static final Duration RELEASE_MIN_WAIT = Duration.ofSeconds(1);

	private EngineTiming() {
	}

}
