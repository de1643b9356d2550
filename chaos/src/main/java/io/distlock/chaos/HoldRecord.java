package io.distlock.chaos;

/**
 * One attempt of one client thread to run its critical section, as the client logged it: what it
 * waited for, when it held the lock, the fencing token, and what the resource made of its writes.
 * Times are {@link System#nanoTime()}, one clock for every process on a machine (Linux's
 * monotonic clock), so the holds of different clients can be compared.
 *
 * @param phase the fault phase the resource named when the section read it, or {@code -} for
 * attempts that never reached the resource (the checker places those by time)
 * @param key the lock's name
 * @param owner the client and thread, e.g. {@code c2-t5}
 * @param waitStart when {@code tryLock} was called
 * @param start when {@code tryLock} returned (the hold's start if acquired)
 * @param end when the critical section finished, right before {@code unlock()} ({@code start} if
 * not acquired)
 * @param waitMillis the wait passed to {@code tryLock}
 * @param token the fencing token, {@code -1} where the backend offers none
 * @param outcome what came of the attempt
 * @param plainWritten whether the unfenced counter write reached the resource
 * @param fenced what the fenced write did
 */
public record HoldRecord(String phase, String key, String owner, long waitStart, long start, long end, long waitMillis,
		long token, Outcome outcome, boolean plainWritten, Fenced fenced) {

	/** What came of an attempt. */
	public enum Outcome {
		/** Held, ran, released. */
		OK,
		/** Held and ran, but {@code unlock()} said the hold had been lost meanwhile. */
		LOST,
		/** Held and ran; {@code unlock()} failed otherwise (e.g. the server was unreachable). */
		UNLOCK_FAILED,
		/** {@code tryLock} gave up after its wait. */
		NOT_ACQUIRED,
		/** {@code tryLock} threw (e.g. the server was unreachable). */
		ACQUIRE_FAILED,
		/**
		 * Still under way when the client stopped, long after it was asked to: a stuck caller; its
		 * {@code start} is when the client gave up on it.
		 */
		UNFINISHED;

		/** @return whether the attempt held the lock and ran its critical section */
		public boolean held() {
			return this == OK || this == LOST || this == UNLOCK_FAILED;
		}
	}

	/** What the fenced resource did with the section's write. */
	public enum Fenced {
		/** Written: no higher token had been seen for the key. */
		ACCEPTED,
		/** Refused: a higher token had been seen for the key. */
		REJECTED,
		/** Not attempted: no hold, no token, or the resource call failed. */
		NONE
	}

	/** @return the record as one line of the history file */
	public String format() {
		return String.join(" ", "H", this.phase, this.key, this.owner, Long.toString(this.waitStart),
				Long.toString(this.start), Long.toString(this.end), Long.toString(this.waitMillis),
				Long.toString(this.token), this.outcome.name(), this.plainWritten ? "1" : "0", this.fenced.name());
	}

	/**
	 * @param line a line written by {@link #format()}
	 * @return the record
	 */
	public static HoldRecord parse(String line) {
		String[] words = line.split(" ");
		if (words.length != 12 || !"H".equals(words[0])) {
			throw new IllegalArgumentException("Not a hold record: '" + line + "'");
		}
		return new HoldRecord(words[1], words[2], words[3], Long.parseLong(words[4]), Long.parseLong(words[5]),
				Long.parseLong(words[6]), Long.parseLong(words[7]), Long.parseLong(words[8]), Outcome.valueOf(words[9]),
				"1".equals(words[10]), Fenced.valueOf(words[11]));
	}

	/** @return the client part of the owner, e.g. {@code c2} */
	public String client() {
		int dash = this.owner.indexOf('-');
		return (dash < 0) ? this.owner : this.owner.substring(0, dash);
	}

	/** @return how far {@code tryLock} overran its wait, in nanoseconds (0 if it did not) */
	public long overrunNanos() {
		return Math.max(0, (this.start - this.waitStart) - this.waitMillis * 1_000_000);
	}

}
