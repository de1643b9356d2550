package io.distlock.contract;

/**
 * A counter kept outside the JVM, read and written in two separate steps: a read-modify-write on it
 * loses updates unless a lock makes it exclusive.
 */
public interface SharedCounter {

	/** @return the current value */
	long get();

	/** @param value the new value */
	void set(long value);

}
