package io.distlock.core;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.distlock.DistLock;
import io.distlock.DistReadWriteLock;
import io.distlock.DistSemaphore;
import io.distlock.HoldInfo;
import io.distlock.HoldKind;
import io.distlock.LockUpgradeException;
import io.distlock.LostHold;
import io.distlock.PermitsMismatchException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Unit-level edges of the engine's hold kinds, with a stand-in backend that times each reply: what
 * the engine decides by itself (an upgrade, a re-entry or downgrade passing this client's waiters,
 * the refusals it maps, where grants and loss reports go). What the kinds mean across clients is the
 * contract suites' ({@code ReadWriteLockContract}, {@code SemaphoreContract}) on real servers.
 */
class SharedKindsEngineTest {

	private final KindsBackend backend = new KindsBackend();

	private final List<LostHold> lost = new CopyOnWriteArrayList<>();

	private final BackendLockRegistry registry = new BackendLockRegistry(this.backend, LockEngineOptions.builder()
		.clientId("c1")
		.listener(hold -> this.lost.add(hold))
		.build());

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void close() {
		this.threads.shutdownNow();
		this.registry.close();
	}

	@Test
	void anUpgradeIsRefusedAtOnceWithoutAskingTheBackend() throws Exception {
		DistReadWriteLock lock = this.registry.getReadWriteLock("report");
		assertThat(lock.readLock().tryLock(Duration.ofSeconds(1))).isTrue();
		int calls = this.backend.requests.size();
		long start = System.nanoTime();
		assertThatThrownBy(() -> lock.writeLock().tryLock(Duration.ofSeconds(30)))
			.isInstanceOf(LockUpgradeException.class)
			.hasMessageContaining("holds the read lock of 'report'")
			.hasMessageContaining("Unlock the read lock first");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
		assertThat(this.backend.requests).hasSize(calls);
		assertThat(this.backend.left).isEmpty();
		// The read hold is untouched by the refusal.
		assertThat(lock.readLock().getHoldCount()).isEqualTo(1);
		lock.readLock().unlock();
	}

	@Test
	void aDowngradeKeepsTwoHoldsOfTheirOwnKinds() throws Exception {
		DistReadWriteLock lock = this.registry.getReadWriteLock("report");
		lock.writeLock().lock();
		lock.readLock().lock();
		assertThat(this.registry.heldLocks()).extracting(HoldInfo::kind)
			.containsExactlyInAnyOrder(HoldKind.WRITE, HoldKind.READ);
		lock.writeLock().unlock();
		assertThat(this.registry.heldLocks()).extracting(HoldInfo::kind).containsExactly(HoldKind.READ);
		assertThat(this.backend.releases).extracting(ReleaseRequest::kind).containsExactly(HoldKind.WRITE);
		lock.readLock().unlock();
		assertThat(this.backend.releases).extracting(ReleaseRequest::kind).containsExactly(HoldKind.WRITE, HoldKind.READ);
	}

	@Test
	void aWriterDowngradesPastThisClientsWaitingWriter() throws Exception {
		DistReadWriteLock lock = this.registry.getReadWriteLock("report");
		lock.writeLock().lock();
		String holder = this.registry.heldLocks().get(0).ownerId();
		// Another thread of this client waits for the write lock this thread holds: it is the room's head.
		this.backend.refuseWritesExceptBy(holder);
		Future<Boolean> waiting = this.threads.submit(() -> lock.writeLock().tryLock(Duration.ofSeconds(20)));
		awaitUntil(() -> this.registry.waiters().containsKey("report (read-write)"));
		// Queuing behind it would wait for itself: the downgrade must pass the room.
		long start = System.nanoTime();
		assertThat(lock.readLock().tryLock(Duration.ofSeconds(4))).isTrue();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
		assertThat(waiting.isDone()).isFalse();
		lock.readLock().unlock();
		lock.writeLock().unlock();
		waiting.cancel(true);
	}

	@Test
	void grantsReachEachWaitingReaderOfOneRoom() throws Exception {
		DistReadWriteLock lock = this.registry.getReadWriteLock("report");
		this.backend.refuseAll = true;
		Future<Boolean> first = this.threads.submit(() -> readAndRelease(lock));
		Future<Boolean> second = this.threads.submit(() -> readAndRelease(lock));
		// Only the room's head asks the backend; the other reader waits behind it in the room.
		awaitUntil(() -> this.backend.notices != null && this.registry.waiters().getOrDefault("report (read-write)", 0) == 2
				&& !this.backend.requests.isEmpty());
		AcquireRequest head = this.backend.requests.get(0);
		this.backend.notices.accept(new LockNotice.Granted(11, head.owner(), head.ticket()));
		// The next head asks once the first has its hold, and is granted in turn.
		awaitUntil(() -> this.backend.requests.stream().map(AcquireRequest::owner).distinct().count() == 2);
		AcquireRequest next = this.backend.requests.stream().filter(r -> !r.owner().equals(head.owner())).findFirst().get();
		this.backend.notices.accept(new LockNotice.Granted(12, next.owner(), next.ticket()));
		assertThat(first.get(10, TimeUnit.SECONDS)).isTrue();
		assertThat(second.get(10, TimeUnit.SECONDS)).isTrue();
		assertThat(this.backend.requests).extracting(AcquireRequest::kind).containsOnly(HoldKind.READ);
	}

	@Test
	void refusalsOfTheBackendBecomeTheirExceptions() {
		DistSemaphore semaphore = this.registry.getSemaphore("payments", 3);
		this.backend.existingPermits = 5;
		assertThatThrownBy(() -> semaphore.tryAcquire(Duration.ofSeconds(1)))
			.isInstanceOfSatisfying(PermitsMismatchException.class, ex -> {
				assertThat(ex.getPermits()).isEqualTo(3);
				assertThat(ex.getExistingPermits()).isEqualTo(5);
				assertThat(ex.getSemaphoreName()).isEqualTo("payments");
			});
		assertThat(this.backend.requests.get(0).permits()).isEqualTo(3);
		assertThat(this.backend.requests.get(0).kind()).isEqualTo(HoldKind.PERMIT);
		this.backend.existingPermits = 0;
		this.backend.refuseUpgrade = true;
		// The backend knows of a read hold this client's table does not (another handle's owner is the same thread).
		assertThatThrownBy(() -> this.registry.getReadWriteLock("report").writeLock().tryLock(Duration.ofSeconds(1)))
			.isInstanceOf(LockUpgradeException.class);
	}

	@Test
	void aPermitReleasedWithoutAHoldNamesTheSemaphore() {
		DistSemaphore semaphore = this.registry.getSemaphore("payments", 2);
		assertThatThrownBy(semaphore::release).isInstanceOf(IllegalMonitorStateException.class)
			.hasMessageContaining("Cannot release a permit of semaphore 'payments'");
		assertThatThrownBy(() -> this.registry.getSemaphore("payments", 0)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("at least 1 permit");
	}

	@Test
	void aLostReadHoldIsReportedWithItsKind() throws Exception {
		DistLock read = this.registry.getReadWriteLock("report").readLock();
		read.lock();
		DistLock exclusive = this.registry.getLock("report");
		exclusive.lock();
		HoldInfo readHold = this.registry.heldLocks().stream().filter(h -> h.kind() == HoldKind.READ).findFirst().get();
		this.backend.lostCallback.accept(List.of(new LockBackend.HoldRef("report", readHold.ownerId(), null, HoldKind.READ)),
				"the server lost it");
		awaitUntil(() -> !this.lost.isEmpty());
		assertThat(this.lost).singleElement().satisfies(hold -> {
			assertThat(hold.kind()).isEqualTo(HoldKind.READ);
			assertThat(hold.lockName()).isEqualTo("report");
		});
		// The exclusive lock of the same name is another hold, untouched.
		assertThat(this.registry.heldLocks()).filteredOn(h -> h.kind() == HoldKind.EXCLUSIVE).singleElement()
			.satisfies(hold -> assertThat(hold.lost()).isFalse());
		exclusive.unlock();
	}

	@Test
	void aBackendWithExclusiveLocksOnlyRefusesTheOtherKindsByName() {
		BackendLockRegistry exclusiveOnly = new BackendLockRegistry(new StubBackend(),
				LockEngineOptions.builder().clientId("c2").build());
		try {
			assertThat(exclusiveOnly.offersReadWriteLocks()).isFalse();
			assertThat(exclusiveOnly.offersSemaphores()).isFalse();
			assertThatThrownBy(() -> exclusiveOnly.getReadWriteLock("x")).isInstanceOf(UnsupportedOperationException.class)
				.hasMessageContaining("the table lock");
			assertThatThrownBy(() -> exclusiveOnly.getSemaphore("x", 3)).isInstanceOf(UnsupportedOperationException.class)
				.hasMessageContaining("the table lock");
		}
		finally {
			exclusiveOnly.close();
		}
	}

	private static boolean readAndRelease(DistReadWriteLock lock) throws InterruptedException {
		if (!lock.readLock().tryLock(Duration.ofSeconds(20))) {
			return false;
		}
		lock.readLock().unlock();
		return true;
	}

	private static void awaitUntil(java.util.function.BooleanSupplier condition) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime() - deadline).as("condition met in time").isNegative();
			Thread.sleep(5);
		}
	}

	/** Keeps every kind; answers as each test sets it. */
	static final class KindsBackend extends StubBackend {

		final List<AcquireRequest> requests = new CopyOnWriteArrayList<>();

		final List<ReleaseRequest> releases = new CopyOnWriteArrayList<>();

		final List<String> left = new CopyOnWriteArrayList<>();

		volatile String writer;

		volatile boolean refuseAll;

		volatile boolean refuseUpgrade;

		volatile int existingPermits;

		volatile Consumer<LockNotice> notices;

		volatile BiConsumer<List<HoldRef>, String> lostCallback;

		void refuseWritesExceptBy(String owner) {
			this.writer = owner;
		}

		@Override
		public Set<io.distlock.HoldKind> supportedKinds() {
			return EnumSet.allOf(HoldKind.class);
		}

		@Override
		public boolean queuesWaiters(HoldKind kind) {
			return true;
		}

		@Override
		public Acquisition acquire(AcquireRequest request) {
			this.requests.add(request);
			if (request.kind() == HoldKind.PERMIT && this.existingPermits != 0 && this.existingPermits != request.permits()) {
				return Acquisition.permitsDiffer(this.existingPermits);
			}
			if (this.refuseUpgrade && request.kind() == HoldKind.WRITE) {
				return Acquisition.upgradeRefused();
			}
			boolean refuse = this.refuseAll
					|| (this.writer != null && request.kind() == HoldKind.WRITE && !request.owner().equals(this.writer));
			if (refuse) {
				return Acquisition.heldByOther(Duration.ofSeconds(30), 1);
			}
			return Acquisition.acquired(Acquisition.TOKEN_ON_REQUEST, request.lease(), "a" + this.requests.size());
		}

		@Override
		public Release release(ReleaseRequest request) {
			this.releases.add(request);
			return (request.heldCount() > 1) ? Release.DECREMENTED : Release.RELEASED;
		}

		@Override
		public void leaveQueue(String name, HoldKind kind, String owner, String ticket, boolean passOnHandOff) {
			this.left.add(kind + " " + owner);
		}

		@Override
		public AutoCloseable subscribe(String name, HoldKind.Family family, String clientId, Consumer<LockNotice> onNotice) {
			this.notices = onNotice;
			return () -> {
			};
		}

		@Override
		public void onHoldsLost(BiConsumer<List<HoldRef>, String> lost) {
			this.lostCallback = lost;
		}

	}

}
