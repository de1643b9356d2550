package io.distlock.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.distlock.embedded.RedisClusterProcess;

/**
 * The contract suite, unchanged, against a local Redis Cluster of three masters configured the
 * Spring way ({@code RedisClusterConfiguration}).
 */
class RedisClusterLockRegistryContractTest extends RedisLockRegistryContract {

	private static RedisClusterProcess cluster;

	@BeforeAll
	static void startCluster() {
		cluster = RedisClusterProcess.start(3);
	}

	@AfterAll
	static void stopCluster() {
		cluster.close();
	}

	@Override
	protected RedisTestClients freshClients() {
		cluster.flushAll();
		return new RedisTestClients(cluster);
	}

	@Override
	protected void flushServerSideScripts() {
		cluster.onEachMaster("SCRIPT", "FLUSH");
	}

	@Override
	protected void restartServers() {
		cluster.restart();
	}

	@Override
	protected void stopServers() {
		cluster.kill();
	}

}
