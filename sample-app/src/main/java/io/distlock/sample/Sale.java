package io.distlock.sample;

/**
 * The answer to one sale attempt, shaped like the seed's "sold one, remaining N, port P".
 *
 * @param item the stock item
 * @param sold whether one unit was sold
 * @param remaining the stock after the attempt
 * @param instance which instance answered
 * @param port the port of that instance
 * @param fencingToken the token the write carried, or {@code null} for the unprotected endpoint
 * @param message a human-readable summary
 */
public record Sale(String item, boolean sold, long remaining, String instance, int port, Long fencingToken,
		String message) {
}
