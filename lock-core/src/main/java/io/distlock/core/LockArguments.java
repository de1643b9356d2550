package io.distlock.core;

import java.time.Duration;

/** The checks on what callers pass (names, leases) and the arithmetic on the times they give. */
final class LockArguments {

	private LockArguments() {
	}

	/**
	 * The checks every backend shares on a lock name, before its own ({@link LockBackend#checkName}).
	 * @throws IllegalArgumentException if the name is null, blank or has an unpaired surrogate
	 */
	static String requireWholeText(String name) {
		if (name == null || name.isBlank()) {
			throw new IllegalArgumentException("Lock name must not be null or blank");
		}
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
				i++;
			}
			else if (Character.isSurrogate(c)) {
				// UTF-8, in which Redis, ZooKeeper and the databases keep names, has no form for it: encoders
				// write '?' instead, so the name would be the same lock as one with a '?' in its place.
				throw new IllegalArgumentException("Lock name '" + name + "' has an unpaired surrogate (\\u"
						+ String.format("%04X", (int) c) + ") at index " + i
						+ ", which has no UTF-8 form: it would be the same lock as other names. Build the name from "
						+ "whole characters (a String cut between the two halves of a code point has one).");
			}
		}
		return name;
	}

	/** @throws IllegalArgumentException naming the lock, if the lease is null, zero or negative */
	static Duration requirePositiveLease(String name, Duration leaseTime) {
		if (leaseTime == null || leaseTime.isNegative() || leaseTime.isZero()) {
			throw new IllegalArgumentException("Lease of lock '" + name + "' must be positive but was " + leaseTime);
		}
		return leaseTime;
	}

	/** {@code Duration.isPositive()}, which Java 17 lacks. */
	static boolean isPositive(Duration duration) {
		return !duration.isNegative() && !duration.isZero();
	}

	/**
	 * A duration in nanoseconds, at most {@code Long.MAX_VALUE / 2} (146 years): deadlines are built by
	 * adding it to {@code System.nanoTime()} and to grace periods, which must not overflow into the past.
	 */
	static long saturatedNanos(Duration duration) {
		try {
			return Math.min(duration.toNanos(), Long.MAX_VALUE / 2);
		}
		catch (ArithmeticException tooLong) {
			return Long.MAX_VALUE / 2;
		}
	}

}
