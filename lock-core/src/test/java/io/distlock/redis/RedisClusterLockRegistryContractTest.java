package io.distlock.redis;

import java.time.Duration;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.contract.ReadWriteLockContract;
import io.distlock.contract.SemaphoreContract;
import io.distlock.testing.RedisClusterExtension;

/**
 * The contract suite, unchanged, against a local Redis Cluster of three masters configured the
 * Spring way ({@code RedisClusterConfiguration}), with the read-write lock and semaphore suites. A
 * restart of the cluster loses its data, so the suites' lost-hold tests run here too.
 */
class RedisClusterLockRegistryContractTest extends RedisLockRegistryContract
		implements ReadWriteLockContract, SemaphoreContract {

	@RegisterExtension
	static final RedisClusterExtension redisCluster = new RedisClusterExtension();

	@Override
	protected RedisTestClients freshClients() {
		return new RedisTestClients(redisCluster.cluster());
	}

	/**
	 * A Cluster renews with one script per slot, and 600 names fill about 600 slots: a round of 600
	 * sequential round trips took 0.2 s on an idle 2-core machine and 0.9 s on a loaded one, where
	 * the 3 s lease left holds with 166 ms of it at their renewal, and lost them at times. 9 s lets a
	 * round take 3 s and still proves that no hold falls behind.
	 */
	@Override
	protected Duration manyHoldsLease() {
		return Duration.ofSeconds(9);
	}

	@Override
	protected void flushServerSideScripts() {
		redisCluster.cluster().onEachMaster("SCRIPT", "FLUSH");
	}

	@Override
	protected void restartServers() {
		redisCluster.cluster().restart();
	}

	@Override
	protected void stopServers() {
		redisCluster.cluster().kill();
	}

}
