package io.distlock.redis;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.contract.ReadWriteLockContract;
import io.distlock.contract.SemaphoreContract;
import io.distlock.testing.RedisServerExtension;

/**
 * The contract suite against one real {@code redis-server} process started for this class, with the
 * read-write lock and semaphore suites: single Redis is where they come first (issue #29).
 */
class RedisLockRegistryContractTest extends RedisLockRegistryContract
		implements ReadWriteLockContract, SemaphoreContract {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	@Override
	protected RedisTestClients freshClients() {
		return new RedisTestClients(redis.server());
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
