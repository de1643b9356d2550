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

	/** Hold counts, queue times of 0 and the like. */
	private static final byte[][] SMALL_NUMBERS = new byte[64][];

	static {
		for (int i = 0; i < SMALL_NUMBERS.length; i++) {
			SMALL_NUMBERS[i] = text(Integer.toString(i));
		}
	}

	/** The calling thread's last owner id and its bytes: a thread is one owner, call after call. */
	private final ThreadLocal<Encoded> lastOwner = new ThreadLocal<>();

	/** The last lease sent: a client uses one lease for nearly every hold. */
	private volatile Encoded lastLease = new Encoded("", new byte[0], Long.MIN_VALUE);

	/** @return the owner id's bytes; never to be written to */
	byte[] owner(String owner) {
		Encoded last = this.lastOwner.get();
		if (last != null && last.value.equals(owner)) {
			return last.bytes;
		}
		Encoded encoded = new Encoded(owner, text(owner));
		this.lastOwner.set(encoded);
		return encoded.bytes;
	}

	/** @return the lease in milliseconds, as bytes; never to be written to */
	byte[] lease(Duration lease) {
		long millis = lease.toMillis();
		Encoded last = this.lastLease;
		if (last.number == millis) {
			return last.bytes;
		}
		Encoded encoded = new Encoded(Long.toString(millis), null, millis);
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

	/** A value with its bytes, immutable, so that it can be read without locks. */
	private static final class Encoded {

		final String value;

		final byte[] bytes;

		final long number;

		Encoded(String value, byte[] bytes) {
			this(value, bytes, Long.MIN_VALUE);
		}

		Encoded(String value, byte[] bytes, long number) {
			this.value = value;
			this.bytes = (bytes != null) ? bytes : text(value);
			this.number = number;
		}

	}

}
