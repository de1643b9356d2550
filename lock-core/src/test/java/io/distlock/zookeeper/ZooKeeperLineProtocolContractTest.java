package io.distlock.zookeeper;

/**
 * The contract suite for exclusive locks held by {@link ZooKeeperLockRegistry.ExclusiveProtocol#LINE},
 * whose holder is the first node of the lock's line (read-write locks and semaphores are the same
 * under both protocols, and {@link ZooKeeperLockRegistryContractTest} runs their suites).
 */
class ZooKeeperLineProtocolContractTest extends ZooKeeperContractFixture {

	@Override
	ZooKeeperLockRegistry.ExclusiveProtocol protocol() {
		return ZooKeeperLockRegistry.ExclusiveProtocol.LINE;
	}

}
