package io.distlock.redis;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.testing.RedisClusterExtension;

/**
 * The contract suite, unchanged, against a local Redis Cluster of three masters configured the
 * Spring way ({@code RedisClusterConfiguration}).
 */
class RedisClusterLockRegistryContractTest extends RedisLockRegistryContract {

	@RegisterExtension
	static final RedisClusterExtension redisCluster = new RedisClusterExtension();

	@Override
	protected RedisTestClients freshClients() {
		return new RedisTestClients(redisCluster.cluster());
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
