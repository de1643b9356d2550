package io.distlock.zookeeper;

/**
 * The ensemble's faults with exclusive locks held by {@link ZooKeeperLockRegistry.ExclusiveProtocol#LINE}.
 */
class ZooKeeperLineProtocolEnsembleFaultTest extends ZooKeeperEnsembleFaultTest {

	@Override
	ZooKeeperLockRegistry.ExclusiveProtocol protocol() {
		return ZooKeeperLockRegistry.ExclusiveProtocol.LINE;
	}

}
