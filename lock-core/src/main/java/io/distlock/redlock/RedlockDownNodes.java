package io.distlock.redlock;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLongArray;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;

import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;

/**
 * Which Redlock nodes {@link RedlockFanOut} skips for a while after they failed to answer, so that
 * calls to a node that is down do not pile up; once the period is over the next call probes it.
 */
final class RedlockDownNodes {

	/** Per node: until when (System.nanoTime) it is skipped after failing to answer. */
	private final AtomicLongArray downUntil;

	/** How long a node that failed to answer is skipped before it is probed again. */
	private final Duration downPeriod;

	/**
	 * @param count how many nodes there are
	 * @param nodeTimeout how long a lock decision waits for the nodes; a node is skipped for ten of
	 * them, at least a second
	 */
	RedlockDownNodes(int count, Duration nodeTimeout) {
		this.downUntil = new AtomicLongArray(count);
		long now = System.nanoTime();
		for (int i = 0; i < count; i++) {
			this.downUntil.set(i, now);
		}
		Duration tenTimeouts = nodeTimeout.multipliedBy(10);
		this.downPeriod = tenTimeouts.compareTo(Duration.ofSeconds(1)) > 0 ? tenTimeouts : Duration.ofSeconds(1);
	}

	/** @return whether node {@code index} is skipped at {@code now} ({@link System#nanoTime()}) */
	boolean skipped(int index, long now) {
		return now - this.downUntil.get(index) < 0;
	}

	void markDown(int index) {
		this.downUntil.set(index, System.nanoTime() + this.downPeriod.toNanos());
	}

	/** @return whether a call's failure says the node is unreachable (not that it refused the call) */
	static boolean unreachable(Throwable error) {
		return error instanceof TimeoutException || error instanceof DataAccessResourceFailureException
				|| error instanceof QueryTimeoutException || error instanceof RedisConnectionException
				|| error instanceof RedisCommandTimeoutException;
	}

}
