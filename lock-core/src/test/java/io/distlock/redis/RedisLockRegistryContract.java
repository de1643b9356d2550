package io.distlock.redis;

import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;

import io.distlock.LockListener;
import io.distlock.LockRegistry;
import io.distlock.contract.LockRegistryContract;
import io.distlock.contract.SharedCounter;
import io.distlock.testing.RedisSharedCounter;

/**
 * The contract suite on Redis, whatever the topology: clients, a crash and the shared counter are
 * the same for a single server and a Cluster; the subclass says where the servers are and how to
 * flush, restart and stop them.
 */
abstract class RedisLockRegistryContract extends LockRegistryContract {

	private RedisTestClients clients;

	/** @return clients of this topology, with its data flushed; closed after the test */
	protected abstract RedisTestClients freshClients();

	@BeforeEach
	void freshData() {
		this.clients = closeAfterTest(freshClients());
	}

	@Override
	protected LockRegistry newClient(Duration watchdogTimeout, LockListener... listeners) {
		return this.clients.registry(watchdogTimeout, listeners);
	}

	@Override
	protected void crash(LockRegistry client) {
		// Stops the watchdog and subscriptions without releasing anything, as a dead process would.
		((RedisLockRegistry) client).close();
	}

	@Override
	protected SharedCounter sharedCounter(String name) {
		return new RedisSharedCounter(this.clients.template(), name);
	}

}
