package io.distlock;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What a lock registry tells about itself, for metrics, health checks and the Actuator endpoint:
 * the numbers an operator watches, without the registry's implementation. Every registry distlock
 * creates implements it.
 */
public interface LockRegistryStats {

	/** @return the holds this client's threads have now */
	List<HoldInfo> heldLocks();

	/** @return how many holds this client's threads have now (cheaper than {@link #heldLocks()}) */
	int activeHolds();

	/** @return how many of this client's threads wait for a lock now */
	int waitingThreads();

	/**
	 * @return per lock, how many of this client's threads wait for it now: keyed by the lock's name, or
	 * for a read-write lock or a semaphore by {@link HoldKind.Family#displayName(String)}
	 * ({@code x (read-write)}, {@code x (semaphore)})
	 */
	Map<String, Integer> waiters();

	/** @return how many holds the watchdog has renewed since start */
	long watchdogRenewals();

	/** @return how many hold renewals failed because the backend could not be reached */
	long watchdogRenewalFailures();

	/** @return how many holds have been lost since start */
	long lostHolds();

	/**
	 * @param name a lock's name
	 * @return how long the backend keeps the lock without renewal; zero if free
	 */
	Duration remainingLease(String name);

	/**
	 * @param name a lock's name
	 * @param kind which lock of that name: the exclusive one, a read-write lock's read or write side,
	 * or a semaphore's permits
	 * @return how long the backend keeps the longest hold of that kind without renewal; zero if none
	 */
	default Duration remainingLease(String name, HoldKind kind) {
		return (kind == HoldKind.EXCLUSIVE) ? remainingLease(name) : Duration.ZERO;
	}

	/** @return whether the backend answers, with details per server (addresses, never credentials) */
	BackendHealth backendHealth();

	/**
	 * Asks the backend's servers whether they are set up in a way that can lose holds while they run
	 * (a Redis {@code maxmemory-policy} that may evict lock keys). Costs a round trip per server:
	 * meant for start-up, not for every request.
	 * @return one sentence per problem, naming the server and the setting; empty if none
	 * @throws RuntimeException if a server cannot be asked
	 */
	default List<String> serverWarnings() {
		return List.of();
	}

	/**
	 * Whether the backend answers.
	 * @param up whether locks can be taken
	 * @param details per server, for the health endpoint
	 */
	record BackendHealth(boolean up, Map<String, Object> details) {
	}

}
