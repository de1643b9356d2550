package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.LockLostException;
import io.distlock.LockRegistry;
import io.distlock.LostHold;

/**
 * Real faults on a real 3-server ensemble ({@link TestingCluster}, in this JVM, on free ports):
 * servers killed, the leader killed mid-run, a majority killed, a holder's session expired.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ZooKeeperEnsembleFaultTest {

	private TestingCluster cluster;

	private ZooKeeperTestClients clients;

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@BeforeEach
	void startEnsemble() throws Exception {
		this.cluster = new TestingCluster(distinctPorts());
		this.cluster.start();
		this.clients = new ZooKeeperTestClients(this.cluster.getConnectString(), protocol());
	}

	/** @return how the clients hold exclusive locks */
	ZooKeeperLockRegistry.ExclusiveProtocol protocol() {
		return ZooKeeperLockRegistry.ExclusiveProtocol.LOCK_NODE;
	}

	/**
	 * curator-test draws each server's client, quorum and election ports at random, and two of the
	 * nine can coincide ("Client and election port must be different"): drawn again until they do not.
	 */
	private static List<InstanceSpec> distinctPorts() {
		for (int attempt = 0; attempt < 20; attempt++) {
			List<InstanceSpec> specs = List.of(ZooKeeperTestClients.spec(1), ZooKeeperTestClients.spec(2),
					ZooKeeperTestClients.spec(3));
			java.util.Set<Integer> ports = new java.util.HashSet<>();
			for (InstanceSpec spec : specs) {
				ports.addAll(List.of(spec.getPort(), spec.getElectionPort(), spec.getQuorumPort()));
			}
			if (ports.size() == 9) {
				return specs;
			}
		}
		throw new IllegalStateException("No nine distinct free ports for a 3-server ensemble");
	}

	@AfterEach
	void stopEnsemble() throws Exception {
		this.threads.shutdownNow();
		this.clients.close();
		this.cluster.close();
	}

	@Test
	void locksKeepWorkingWhenOneOfThreeServersDies() throws Exception {
		// A connection timeout as long as the session's: with the test's usual 1 s, a fail-over slower
		// than that on a loaded machine made Curator replace the holder's session (CI saw the hold lost).
		// And a lease longer than the session: with 2 s, a fail-over of 2 s left the hold's lease to run
		// out while no renewal could reach the ensemble (CI saw that too). A fail-over longer than the
		// session loses the hold anyway.
		LockRegistry mine = this.clients.newRegistry(Duration.ofSeconds(6), ZooKeeperTestClients.SESSION_TIMEOUT);
		LockRegistry theirs = this.clients.newRegistry(Duration.ofSeconds(2), ZooKeeperTestClients.SESSION_TIMEOUT);
		DistLock held = mine.getLock("kept");
		held.lock();
		long token = held.getFencingToken();

		// The server the holder talks to: its client must move to another one.
		InstanceSpec connected = this.cluster
			.findConnectionInstance(this.clients.curatorOf(mine).getZookeeperClient().getZooKeeper());
		assertThat(this.cluster.killServer(connected)).isTrue();

		DistLock other = theirs.getLock("kept");
		// Its client may still be moving to another server: a wait that ends in a backend failure is
		// as good an answer here as one that ends in "held by another", as long as it is not acquired.
		assertThat(otherThread(() -> {
			try {
				return other.tryLock(Duration.ofSeconds(2));
			}
			catch (io.distlock.LockBackendException ex) {
				return false;
			}
		})).as("the hold outlives the server").isFalse();
		for (int round = 0; round < 5; round++) {
			DistLock lock = (round % 2 == 0 ? mine : theirs).getLock("after-" + round);
			assertThat(lock.tryLock(Duration.ofSeconds(10))).isTrue();
			lock.unlock();
		}
		// Renewed through the reconnect on the same session: still this hold, with its token.
		await().atMost(Duration.ofSeconds(10)).until(() -> mine.heldLocks().get(0).renewals() > 0);
		assertThat(held.isHeldByCurrentThread()).isTrue();
		assertThat(held.getFencingToken()).isEqualTo(token);
		held.unlock();
		assertThat(otherThread(() -> {
			boolean acquired = other.tryLock(Duration.ofSeconds(5));
			if (acquired) {
				assertThat(other.getFencingToken()).isGreaterThan(token);
				other.unlock();
			}
			return acquired;
		})).isTrue();
	}

	@Test
	void killingTheLeaderMidRunLosesNoUpdateAndTokensKeepGrowing() throws Exception {
		// A connection timeout as long as the session's, as in the test above: with the usual 1 s, an
		// election slower than that made Curator replace a holder's session, and its unlock failed (CI).
		Duration connection = ZooKeeperTestClients.SESSION_TIMEOUT;
		List<LockRegistry> registries = List.of(this.clients.newRegistry(Duration.ofSeconds(3), connection),
				this.clients.newRegistry(Duration.ofSeconds(3), connection),
				this.clients.newRegistry(Duration.ofSeconds(3), connection));
		// In this JVM, read and written in two steps with a pause between: without the lock, updates get lost.
		long[] counter = new long[1];
		AtomicLong increments = new AtomicLong();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger backendFailures = new AtomicInteger();
		List<Long> tokens = new CopyOnWriteArrayList<>();
		CountDownLatch leaderMayDie = new CountDownLatch(1);
		CountDownLatch leaderDead = new CountDownLatch(1);
		List<Future<?>> workers = new ArrayList<>();
		int perWorker = 60;
		for (LockRegistry registry : registries) {
			for (int t = 0; t < 2; t++) {
				workers.add(this.threads.submit(() -> {
					DistLock lock = registry.getLock("counter");
					int done = 0;
					while (done < perWorker) {
						boolean acquired;
						try {
							acquired = lock.tryLock(Duration.ofSeconds(10));
						}
						catch (LockBackendException electing) {
							// The ensemble is choosing a new leader: no lock, no update.
							backendFailures.incrementAndGet();
							continue;
						}
						if (!acquired) {
							continue;
						}
						try {
							if (inside.incrementAndGet() > 1) {
								overlaps.incrementAndGet();
							}
							tokens.add(lock.getFencingToken());
							long value = counter[0];
							Thread.sleep(1);
							counter[0] = value + 1;
							increments.incrementAndGet();
							inside.decrementAndGet();
						}
						finally {
							lock.unlock();
						}
						done++;
						if (increments.get() >= 60) {
							leaderMayDie.countDown();
						}
						if (done == perWorker / 2) {
							// Half of every worker's updates happen after the leader's death.
							leaderDead.await();
						}
					}
					return null;
				}));
			}
		}
		assertThat(leaderMayDie.await(60, TimeUnit.SECONDS)).isTrue();
		InstanceSpec leader = leader();
		assertThat(this.cluster.killServer(leader)).isTrue();
		long killedAt = increments.get();
		leaderDead.countDown();
		for (Future<?> worker : workers) {
			worker.get(80, TimeUnit.SECONDS);
		}
		assertThat(overlaps).hasValue(0);
		assertThat(counter[0]).isEqualTo(6L * perWorker).isEqualTo(increments.get());
		assertThat(increments.get() - killedAt).as("updates after the leader died").isGreaterThanOrEqualTo(3L * perWorker);
		for (int i = 1; i < tokens.size(); i++) {
			assertThat(tokens.get(i)).as("token %d of %s", i, tokens).isGreaterThan(tokens.get(i - 1));
		}
		assertThat(tokens.get(tokens.size() - 1) >>> 32).as("the new leader's epoch").isGreaterThan(tokens.get(0) >>> 32);
	}

	@Test
	void withTwoOfThreeServersDeadAcquisitionsFailClearlyAndNoBodyRuns() throws Exception {
		LockRegistry registry = this.clients.newRegistry(Duration.ofSeconds(3));
		DistLock lock = registry.getLock("no-quorum");
		assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
		lock.unlock();
		List<InstanceSpec> specs = new ArrayList<>(this.cluster.getInstances());
		this.cluster.killServer(specs.get(0));
		this.cluster.killServer(specs.get(1));
		AtomicInteger bodies = new AtomicInteger();

		long start = System.nanoTime();
		assertThatThrownBy(() -> {
			if (lock.tryLock(Duration.ofSeconds(2))) {
				bodies.incrementAndGet();
			}
		}).isInstanceOf(LockBackendException.class).hasMessageContaining("'no-quorum'").hasMessageContaining("ZooKeeper");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(6));

		start = System.nanoTime();
		// The servers in any order: once Curator's ensemble tracker has read the ensemble's own
		// configuration, its connection string lists them in that order (CI saw both).
		String[] servers = this.cluster.getConnectString().split(",");
		assertThatThrownBy(() -> {
			lock.lock();
			bodies.incrementAndGet();
		}).isInstanceOf(LockBackendException.class)
			.hasMessageContaining("ZooKeeper at ")
			.hasMessageContainingAll(servers)
			// Connection loss; or, once disconnected for a whole session timeout (a slow machine), expiry.
			.hasMessageFindingMatch("did not answer within 1 s \\(connection loss|expired this client's session");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(6));
		assertThat(bodies).hasValue(0);
		assertThat(lock.getHoldCount()).isZero();
		assertThat(((io.distlock.LockRegistryStats) registry).backendHealth().up()).isFalse();
	}

	@Test
	void anExpiredSessionLosesItsHoldAndTheNextHolderEntersOnlyAfterTheEnsembleExpiredIt() throws Exception {
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		LockRegistry holder = this.clients.newRegistry(Duration.ofMillis(900), lost::add);
		LockRegistry next = this.clients.newRegistry(Duration.ofSeconds(3));
		DistLock held = holder.getLock("expiring");
		held.lock();
		long token = held.getFencingToken();

		long waitingSince = System.nanoTime();
		AtomicLong acquiredAt = new AtomicLong();
		AtomicLong nextToken = new AtomicLong();
		Future<Boolean> waiter = this.threads.submit(() -> {
			DistLock lock = next.getLock("expiring");
			boolean acquired = lock.tryLock(Duration.ofSeconds(30));
			if (acquired) {
				acquiredAt.set(System.nanoTime());
				nextToken.set(lock.getFencingToken());
				lock.unlock();
			}
			return acquired;
		});
		// The holder's client stops talking to the ensemble (as a long GC pause or a cut would make
		// it); the ensemble expires the session only after its timeout, and only then deletes the node.
		long expiredAt = System.nanoTime();
		this.clients.cutOff(this.clients.curatorOf(holder));

		await().atMost(Duration.ofSeconds(10)).until(() -> !lost.isEmpty());
		assertThat(lost.get(0).lockName()).isEqualTo("expiring");
		assertThat(waiter.get(30, TimeUnit.SECONDS)).isTrue();
		assertThat(Duration.ofNanos(acquiredAt.get() - expiredAt))
			.as("the next holder waited for the ensemble to expire the session")
			.isGreaterThan(ZooKeeperTestClients.SESSION_TIMEOUT.dividedBy(2));
		assertThat(acquiredAt.get() - waitingSince).isPositive();
		assertThat(nextToken.get()).isGreaterThan(token);
		assertThatThrownBy(held::unlock).isInstanceOf(LockLostException.class).hasMessageContaining("expiring");
		assertThat(held.getHoldCount()).isZero();
	}

	@Test
	void anExpiredSessionLosesAnExplicitLeaseAndItsOwnerIsToldAtOnce() throws Exception {
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		LockRegistry holder = this.clients.newRegistry(Duration.ofSeconds(30), lost::add);
		DistLock held = holder.getLock("expiring-explicit");
		// Never renewed: only the session's end can tell its owner before the 60 s are over.
		held.lock(Duration.ofSeconds(60));
		this.clients.cutOff(this.clients.curatorOf(holder));

		await().atMost(Duration.ofSeconds(20)).until(() -> !lost.isEmpty());
		assertThat(lost.get(0).lockName()).isEqualTo("expiring-explicit");
		assertThat(holder.heldLocks()).singleElement().satisfies(hold -> assertThat(hold.lost()).isTrue());
		assertThatThrownBy(held::unlock).isInstanceOf(LockLostException.class)
			.hasMessageContaining("expiring-explicit")
			.hasMessageContaining("session");
		assertThat(held.getHoldCount()).isZero();
	}

	private InstanceSpec leader() {
		return await().atMost(Duration.ofSeconds(10)).until(() -> {
			for (InstanceSpec spec : this.cluster.getInstances()) {
				if ("leader".equals(ZooKeeperTestClients.mode(spec))) {
					return spec;
				}
			}
			return null;
		}, spec -> spec != null);
	}

	private <T> T otherThread(java.util.concurrent.Callable<T> task) throws Exception {
		return this.threads.submit(task).get(30, TimeUnit.SECONDS);
	}

}
