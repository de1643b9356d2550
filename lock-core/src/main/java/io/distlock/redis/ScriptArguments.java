package io.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * The arguments of the lock scripts as the bytes Redis is sent. What repeats from call to call (a
 * thread's owner id, the lease, small counts) is encoded once and reused: on the uncontended path
 * the encoding of arguments was, with that of keys, most of what a call allocated.
 */
final class ScriptArguments {

	private static final byte[] EMPTY = new byte[0];

	/** Hold counts, queue times of 0 and the like. */
	private static final byte[][] SMALL_NUMBERS = new byte[64][];

	static {
		for (int i = 0; i < SMALL_NUMBERS.length; i++) {
			SMALL_NUMBERS[i] = text(Integer.toString(i));
		}
	}

	/** The calling thread's last owner id and its bytes: a thread is one owner, call after call. */
	private final ThreadLocal<Owner> lastOwner = new ThreadLocal<>();

	/**
	 * The calling thread's last attempt id and its bytes: the release of a hold mostly follows its
	 * acquisition on the same thread, with the same id. Changed in place (it never leaves its thread),
	 * so an acquisition allocates no more than the bytes it needs anyway.
	 */
	private final ThreadLocal<LastAttempt> lastAttempt = ThreadLocal.withInitial(LastAttempt::new);

	/** The last lease sent, or {@code null}: a client uses one lease for nearly every hold. */
	private volatile Lease lastLease;

	/** @return the owner id's bytes; never to be written to */
	byte[] owner(String owner) {
		Owner last = this.lastOwner.get();
		if (last != null && last.id.equals(owner)) {
			return last.bytes;
		}
		Owner encoded = new Owner(owner, text(owner));
		this.lastOwner.set(encoded);
		return encoded.bytes;
	}

	/** @return the attempt id's bytes ({@code null}: none, sent as empty); never to be written to */
	byte[] attempt(String attemptId) {
		if (attemptId == null || attemptId.isEmpty()) {
			return EMPTY;
		}
		LastAttempt last = this.lastAttempt.get();
		if (last.id != attemptId && !attemptId.equals(last.id)) {
			last.id = attemptId;
			last.bytes = text(attemptId);
		}
		return last.bytes;
	}

	/** @return the lease in milliseconds, as bytes; never to be written to */
	byte[] lease(Duration lease) {
		long millis = lease.toMillis();
		Lease last = this.lastLease;
		if (last != null && last.millis == millis) {
			return last.bytes;
		}
		Lease encoded = new Lease(millis, text(Long.toString(millis)));
		this.lastLease = encoded;
		return encoded.bytes;
	}

	/** @return the number's decimal digits; never to be written to */
	static byte[] number(long value) {
		return (value >= 0 && value < SMALL_NUMBERS.length) ? SMALL_NUMBERS[(int) value] : text(Long.toString(value));
	}

	static byte[] text(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	static byte[][] text(List<String> values) {
		byte[][] bytes = new byte[values.size()][];
		for (int i = 0; i < bytes.length; i++) {
			bytes[i] = text(values.get(i));
		}
		return bytes;
	}

	/** An owner id with its bytes; immutable, so that it can be shared without locks. */
	private record Owner(String id, byte[] bytes) {
	}

	/** One thread's last attempt id with its bytes; only ever used by that thread. */
	private static final class LastAttempt {

		String id;

		byte[] bytes;

	}

	/** A lease in milliseconds with its bytes; immutable, so that it can be read without locks. */
	private record Lease(long millis, byte[] bytes) {
	}

}
