package io.distlock.redis;

import java.time.Duration;
import java.util.List;

import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.Release;

/**
 * Reads the lock scripts' replies: the numbers {@code acquire.lua}, {@code release.lua},
 * {@code renew.lua} and their shared-kind twins ({@code acquire-shared.lua}, {@code release-shared.lua}) return, as the outcomes the engine understands. A reply of another shape (a
 * script of another version, a proxy in between) fails naming the lock rather than being guessed at.
 */
final class RedisReplies {

	private RedisReplies() {
	}

	/** @param attempt the attempt's id, which becomes the hold's id; empty for none */
	static Acquisition acquisition(List<?> reply, String name, Duration lease, String attempt) {
		long status = number(reply, 0, name);
		long value = number(reply, 1, name);
		if (status == 1) {
			return Acquisition.acquired(value, lease, attempt.isEmpty() ? null : attempt);
		}
		if (status == 0) {
			long lastToken = (reply.size() > 2) ? number(reply, 2, name) : 0;
			// A fourth element: refused by the restart grace (acquire.lua), value being what is left of it.
			return (reply.size() > 3 && number(reply, 3, name) == 1) ? Acquisition.inRestartGrace(Duration.ofMillis(value), lastToken)
					: Acquisition.heldByOther(Duration.ofMillis(value), lastToken);
		}
		return Acquisition.lost();
	}

	/**
	 * Reads {@code acquire-shared.lua}'s reply: {@link #acquisition}'s, and a refusal that queues
	 * nothing: {@code -2}, the semaphore has other permits (carried).
	 */
	static Acquisition sharedAcquisition(List<?> reply, String name, Duration lease, String attempt) {
		long status = number(reply, 0, name);
		if (status == -2) {
			return Acquisition.permitsDiffer((int) number(reply, 1, name));
		}
		return acquisition(reply, name, lease, attempt);
	}

	static Release release(Long reply, String name) {
		if (reply == null) {
			throw new IllegalStateException("Redis returned no reply to the release of lock '" + name + "'");
		}
		if (reply == 1 || reply == 3) {
			return Release.RELEASED;
		}
		return (reply == 0) ? Release.DECREMENTED : Release.NOT_HELD;
	}

	static long number(List<?> reply, int index, String name) {
		if (reply == null || reply.size() <= index || !(reply.get(index) instanceof Number number)) {
			throw new IllegalStateException("Unexpected Redis reply " + reply + " for lock '" + name + "'");
		}
		return number.longValue();
	}

}
