package io.distlock.contract;

import java.time.Duration;

import io.distlock.LockListener;
import io.distlock.LockRegistry;

/**
 * What the contract suites written as interfaces ({@link ReadWriteLockContract},
 * {@link SemaphoreContract}) need from the backend's test: clients, a crash, a counter in the
 * backend's world, clean-up and a few disturbances. {@link LockRegistryContract} answers all of it
 * from its own hooks, so a backend's contract test takes a suite on with {@code implements} alone.
 *
 * <p>The names differ from {@link LockRegistryContract}'s protected hooks on purpose: an interface's
 * methods are public, and a protected method cannot implement one.
 */
public interface ContractFixture {

	/** A watchdog lease short enough that tests can wait out several of them. */
	Duration SHORT_WATCHDOG = Duration.ofMillis(600);

	/**
	 * A new client with its own connections, watchdog and subscriptions, closed after the test.
	 * @param watchdogTimeout the lease of holds taken without one
	 * @param listeners told about lost holds
	 * @return the client's registry
	 */
	LockRegistry contractClient(Duration watchdogTimeout, LockListener... listeners);

	/** @return a client with the default watchdog (30 s), closed after the test */
	default LockRegistry contractClient() {
		return contractClient(Duration.ofSeconds(30));
	}

	/**
	 * Ends a client as a crash would: no more renewals, no releases, connections gone.
	 * @param client a registry from {@link #contractClient}
	 */
	void crashContractClient(LockRegistry client);

	/**
	 * @param name distinguishes counters
	 * @return a counter kept in the backend's world, initially 0
	 */
	SharedCounter contractCounter(String name);

	/**
	 * Closes something after the test, before the clients.
	 * @param closeable what to close
	 * @return {@code closeable}
	 */
	<T extends AutoCloseable> T closeAfterContract(T closeable);

	/** Drops whatever server-side cache of scripts or prepared statements the backend relies on. */
	void flushContractScripts();

	/**
	 * Makes the backend forget every hold, as a restart without persistence does, and waits until it
	 * answers again.
	 * @return whether it did; false (and nothing done) where a restart keeps the holds (a database,
	 * ZooKeeper), so that a test needing lost holds skips
	 */
	boolean loseAllHolds();

	/**
	 * @return whether waiters of different clients are served in the order they arrived at the
	 * backend (a queue in Redis); false where they poll and whoever asks first after a release wins
	 * (the table lock, which only keeps readers behind a waiting writer)
	 */
	default boolean servesClientsInArrivalOrder() {
		return true;
	}

	/**
	 * @param lease the lease of a crashed client's hold
	 * @return how long after the crash that hold lasts at most: its lease where the backend keeps
	 * leases; where holds end with the client's session instead (ZooKeeper), the session timeout
	 */
	default Duration crashedHoldsEndAfter(Duration lease) {
		return lease;
	}

}
