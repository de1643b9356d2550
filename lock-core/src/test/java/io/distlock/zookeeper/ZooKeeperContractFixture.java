package io.distlock.zookeeper;

import java.time.Duration;

import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

import io.distlock.LockListener;
import io.distlock.LockRegistry;
import io.distlock.contract.LockRegistryContract;
import io.distlock.contract.SharedCounter;

/**
 * The contract suite's fixture on one real ZooKeeper server (curator-test's {@link TestingServer}, in this
 * JVM, on a free port). Every client has its own Curator client and session; a crash is a client
 * that stops talking without closing its session, which the server expires after 4 s. Read-write
 * locks and semaphores wait in line as sequential nodes, so waiters of different clients are served
 * in arrival order. Subclasses choose the suites and how exclusive locks are held.
 */
abstract class ZooKeeperContractFixture extends LockRegistryContract {

	private static TestingServer server;

	private ZooKeeperTestClients clients;

	@BeforeAll
	static void startServer() throws Exception {
		server = new TestingServer(ZooKeeperTestClients.standaloneSpec(), true);
	}

	@AfterAll
	static void stopServer() throws Exception {
		server.close();
	}

	@BeforeEach
	void newClients() {
		this.clients = new ZooKeeperTestClients(server.getConnectString(), protocol());
	}

	/** @return how the clients hold exclusive locks */
	abstract ZooKeeperLockRegistry.ExclusiveProtocol protocol();

	@AfterEach
	void closeClientsOfTheTest() {
		this.clients.close();
	}

	@Override
	protected LockRegistry newClient(Duration watchdogTimeout, LockListener... listeners) {
		return this.clients.newRegistry(watchdogTimeout, listeners);
	}

	@Override
	protected void crash(LockRegistry client) {
		this.clients.crash(client);
	}

	@Override
	protected SharedCounter sharedCounter(String name) {
		return this.clients.counter(name + "-" + System.nanoTime());
	}

	@Override
	protected void flushServerSideScripts() {
		// ZooKeeper keeps no scripts or prepared statements.
	}

	@Override
	protected void restartServers() {
		try {
			server.restart();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Override
	protected void stopServers() {
		try {
			server.stop();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * A restart keeps the data (the transaction log and snapshots), and sessions: a client that
	 * reconnects within its session timeout keeps its holds, so its watchdog hold survives.
	 */
	@Override
	protected boolean restartLosesData() {
		return false;
	}

	/** A crashed client's nodes go with its session, whatever their lease. */
	@Override
	public Duration crashedHoldsEndAfter(Duration lease) {
		return ZooKeeperTestClients.SESSION_TIMEOUT;
	}

}
