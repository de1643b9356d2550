package io.distlock.redis;

import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.LockListener;
import io.distlock.LockRegistry;
import io.distlock.contract.LockRegistryContract;
import io.distlock.contract.SharedCounter;
import io.distlock.testing.RedisSharedCounter;
import io.distlock.testing.RedisServerExtension;

/**
 * The contract suite against one real {@code redis-server} process started for this class.
 */
class RedisLockRegistryContractTest extends LockRegistryContract {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	private RedisTestClients clients;



	@BeforeEach
	void freshData() {
		this.clients = closeAfterTest(new RedisTestClients(redis.server()));
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

	@Override
	protected void flushServerSideScripts() {
		redis.server().command("SCRIPT", "FLUSH");
	}

	@Override
	protected void restartServers() {
		redis.server().restart();
	}

	@Override
	protected void stopServers() {
		redis.server().kill();
	}

}
