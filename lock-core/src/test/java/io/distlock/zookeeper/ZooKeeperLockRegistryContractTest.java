package io.distlock.zookeeper;

import io.distlock.contract.ReadWriteLockContract;
import io.distlock.contract.SemaphoreContract;

/**
 * The contract suite, read-write locks' and semaphores' included, on one real ZooKeeper server,
 * with exclusive locks held by the default {@link ZooKeeperLockRegistry.ExclusiveProtocol#LOCK_NODE}.
 */
class ZooKeeperLockRegistryContractTest extends ZooKeeperContractFixture
		implements ReadWriteLockContract, SemaphoreContract {

	@Override
	ZooKeeperLockRegistry.ExclusiveProtocol protocol() {
		return ZooKeeperLockRegistry.ExclusiveProtocol.LOCK_NODE;
	}

}
