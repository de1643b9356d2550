package io.distlock.redis;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

import io.distlock.LockListener;
import io.distlock.LockRegistry;
import io.distlock.contract.LockRegistryContract;
import io.distlock.contract.SharedCounter;
import io.distlock.testing.RedisSharedCounter;
import io.distlock.embedded.RedisClusterProcess;

/**
 * The contract suite, unchanged, against a local Redis Cluster of three masters configured the
 * Spring way ({@code RedisClusterConfiguration}).
 */
class RedisClusterLockRegistryContractTest extends LockRegistryContract {

	private static RedisClusterProcess cluster;

	private RedisTestClients clients;

	@BeforeAll
	static void startCluster() {
		cluster = RedisClusterProcess.start(3);
	}

	@AfterAll
	static void stopCluster() {
		cluster.close();
	}

	@BeforeEach
	void freshData() {
		cluster.flushAll();
		this.clients = closeAfterTest(new RedisTestClients(cluster));
	}

	@Override
	protected LockRegistry newClient(Duration watchdogTimeout, LockListener... listeners) {
		return this.clients.registry(watchdogTimeout, listeners);
	}

	@Override
	protected void crash(LockRegistry client) {
		((RedisLockRegistry) client).close();
	}

	@Override
	protected SharedCounter sharedCounter(String name) {
		return new RedisSharedCounter(this.clients.template(), name);
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
