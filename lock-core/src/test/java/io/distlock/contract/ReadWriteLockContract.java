package io.distlock.contract;

import static io.distlock.contract.HoldingThread.PATIENCE;
import static io.distlock.contract.HoldingThread.tryLockElsewhere;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import io.distlock.DistLock;
import io.distlock.DistReadWriteLock;
import io.distlock.HoldInfo;
import io.distlock.HoldKind;
import io.distlock.LockLostException;
import io.distlock.LockRegistry;
import io.distlock.LockRegistryStats;
import io.distlock.LockUpgradeException;
import io.distlock.LostHold;

/**
 * What every backend that offers read-write locks ({@link LockRegistry#getReadWriteLock}) must do,
 * run against real servers: mixed into a backend's {@link LockRegistryContract} test, whose clients
 * ({@link ContractFixture}) it uses. Several clients stand for several application instances.
 *
 * <p>Orders between clients are made known without sleeping: a waiter is started only once the one
 * before it is parked in the engine's release wait ({@link HoldingThread#awaitQueued()}), and every
 * wait has a deadline, so a broken lock fails a test instead of hanging it.
 */
public interface ReadWriteLockContract extends ContractFixture {

	@Test
	default void readersOfSeveralClientsAreInsideAtOnce() throws Exception {
		String name = "rw-readers";
		List<LockRegistry> clients = List.of(contractClient(), contractClient(), contractClient());
		int readers = 6;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		// Opens only once every reader is in and none has left (they hold until released): a lock that
		// let one reader in at a time would keep it shut.
		CountDownLatch allInside = new CountDownLatch(readers);
		List<HoldingThread> holders = new ArrayList<>();
		for (int i = 0; i < readers; i++) {
			DistLock read = clients.get(i % clients.size()).getReadWriteLock(name).readLock();
			holders.add(closeAfterContract(HoldingThread.start("reader-" + i, () -> {
				if (!read.tryLock(PATIENCE)) {
					return false;
				}
				most.accumulateAndGet(inside.incrementAndGet(), Math::max);
				allInside.countDown();
				return true;
			}, () -> {
				inside.decrementAndGet();
				read.unlock();
			})));
		}
		assertThat(allInside.await(20, TimeUnit.SECONDS)).as("all %d readers inside at once", readers).isTrue();
		assertThat(most).hasValue(readers);
		DistLock write = contractClient().getReadWriteLock(name).writeLock();
		assertThat(tryLockElsewhere(write, Duration.ZERO)).as("a writer while readers hold").isFalse();
		for (HoldingThread holder : holders) {
			holder.release();
		}
		assertThat(tryLockElsewhere(write, Duration.ofSeconds(5))).as("a writer once the readers left").isTrue();
	}

	@Test
	default void writersKeepEveryUpdateAndReadersNeverSeeAHalfWrittenValue() throws Exception {
		String name = "rw-counter";
		List<LockRegistry> clients = List.of(contractClient(), contractClient());
		SharedCounter counter = contractCounter("rw-counter");
		// One value written in two halves, one after the other: a reader let in between them sees the
		// halves differ, and a writer let in beside another overwrites its increment (without a lock the
		// same read, yield, write loses updates: LockRegistryContract's control test).
		SharedCounter firstHalf = contractCounter("rw-first-half");
		SharedCounter secondHalf = contractCounter("rw-second-half");
		AtomicInteger writersInside = new AtomicInteger();
		AtomicInteger readersInside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger torn = new AtomicInteger();
		AtomicInteger reads = new AtomicInteger();
		AtomicBoolean writing = new AtomicBoolean(true);
		int threadsPerClient = 2;
		int writes = 25;
		ExecutorService pool = Executors.newFixedThreadPool(4 * threadsPerClient);
		closeAfterContract(pool::shutdownNow);
		CountDownLatch start = new CountDownLatch(1);
		List<Future<?>> writers = new ArrayList<>();
		List<Future<?>> readers = new ArrayList<>();
		for (LockRegistry client : clients) {
			for (int t = 0; t < threadsPerClient; t++) {
				writers.add(pool.submit(() -> {
					start.await();
					DistLock write = client.getReadWriteLock(name).writeLock();
					for (int i = 0; i < writes; i++) {
						assertThat(write.tryLock(PATIENCE)).as("write lock within %s", PATIENCE).isTrue();
						try {
							if (writersInside.incrementAndGet() > 1 || readersInside.get() > 0) {
								overlaps.incrementAndGet();
							}
							long value = counter.get();
							Thread.yield();
							counter.set(value + 1);
							firstHalf.set(value + 1);
							Thread.yield();
							secondHalf.set(value + 1);
							writersInside.decrementAndGet();
						}
						finally {
							write.unlock();
						}
					}
					return null;
				}));
				readers.add(pool.submit(() -> {
					start.await();
					DistLock read = client.getReadWriteLock(name).readLock();
					while (writing.get()) {
						assertThat(read.tryLock(PATIENCE)).as("read lock within %s", PATIENCE).isTrue();
						try {
							readersInside.incrementAndGet();
							if (writersInside.get() > 0) {
								overlaps.incrementAndGet();
							}
							long first = firstHalf.get();
							Thread.yield();
							if (secondHalf.get() != first) {
								torn.incrementAndGet();
							}
							reads.incrementAndGet();
							readersInside.decrementAndGet();
						}
						finally {
							read.unlock();
						}
					}
					return null;
				}));
			}
		}
		start.countDown();
		try {
			for (Future<?> writer : writers) {
				writer.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			writing.set(false);
		}
		for (Future<?> reader : readers) {
			reader.get(60, TimeUnit.SECONDS);
		}
		assertThat(overlaps).as("a writer beside another holder").hasValue(0);
		assertThat(torn).as("reads of a half-written value").hasValue(0);
		assertThat(counter.get()).isEqualTo((long) clients.size() * threadsPerClient * writes);
		assertThat(reads).as("reads made while the writers ran").hasPositiveValue();
	}

	@Test
	default void aWaitingWriterKeepsLaterReadersOut() throws Exception {
		String name = "rw-writer-first";
		HoldingThread first = holding("reader-1", contractClient().getReadWriteLock(name).readLock(), PATIENCE);
		HoldingThread second = holding("reader-2", contractClient().getReadWriteLock(name).readLock(), PATIENCE);
		assertThat(first.awaitAcquired()).isTrue();
		assertThat(second.awaitAcquired()).isTrue();
		HoldingThread writer = holding("writer", contractClient().getReadWriteLock(name).writeLock(), PATIENCE);
		writer.awaitQueued();

		DistLock late = contractClient().getReadWriteLock(name).readLock();
		assertThat(tryLockElsewhere(late, Duration.ofMillis(300))).as("a reader that came after the waiting writer")
			.isFalse();
		first.release();
		await().during(Duration.ofMillis(300))
			.atMost(Duration.ofSeconds(3))
			.until(() -> !writer.acquired().isDone());
		second.release();
		assertThat(writer.awaitAcquired(Duration.ofSeconds(5))).as("the writer, once the earlier readers left").isTrue();

		HoldingThread lateAgain = holding("late-reader", late, PATIENCE);
		lateAgain.awaitQueued();
		writer.release();
		assertThat(lateAgain.awaitAcquired(Duration.ofSeconds(5))).as("the later reader, after the writer's turn")
			.isTrue();
		lateAgain.release();
	}

	@Test
	default void aWriterGetsInThroughAContinuousStreamOfReaders() throws Exception {
		String name = "rw-stream";
		List<DistLock> reads = List.of(contractClient().getReadWriteLock(name).readLock(),
				contractClient().getReadWriteLock(name).readLock());
		// A relay: each reader leaves only once the other is in again, so some reader always holds and
		// a lock that let new readers pass a waiting writer would keep it out for good. A reader whose
		// partner does not come back (queued behind the writer) leaves after 300 ms, which is what
		// lets the writer in.
		Object relay = new Object();
		AtomicLong entries = new AtomicLong();
		AtomicInteger readersInside = new AtomicInteger();
		AtomicBoolean running = new AtomicBoolean(true);
		ExecutorService pool = Executors.newFixedThreadPool(reads.size());
		closeAfterContract(pool::shutdownNow);
		List<Future<?>> readers = new ArrayList<>();
		for (DistLock read : reads) {
			readers.add(pool.submit(() -> {
				while (running.get()) {
					assertThat(read.tryLock(PATIENCE)).as("read lock within %s", PATIENCE).isTrue();
					try {
						readersInside.incrementAndGet();
						long leaveBy = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
						synchronized (relay) {
							long mine = entries.incrementAndGet();
							relay.notifyAll();
							long left;
							while (entries.get() == mine && running.get() && (left = leaveBy - System.nanoTime()) > 0) {
								TimeUnit.NANOSECONDS.timedWait(relay, left);
							}
						}
						readersInside.decrementAndGet();
					}
					finally {
						read.unlock();
					}
				}
				return null;
			}));
		}
		try {
			await().atMost(Duration.ofSeconds(10)).until(() -> entries.get() >= 6);
			AtomicInteger readersBesideWriter = new AtomicInteger(-1);
			DistLock write = contractClient().getReadWriteLock(name).writeLock();
			HoldingThread writer = holding("writer", () -> {
				if (!write.tryLock(Duration.ofSeconds(4))) {
					return false;
				}
				readersBesideWriter.set(readersInside.get());
				return true;
			}, write::unlock);
			assertThat(writer.awaitAcquired()).as("the writer within its 4 s, through the stream of readers").isTrue();
			assertThat(readersBesideWriter).as("readers inside beside the writer").hasValue(0);
			long entriesWhileWriting = entries.get();
			writer.release();
			await().atMost(Duration.ofSeconds(10)).until(() -> entries.get() > entriesWhileWriting);
		}
		finally {
			running.set(false);
			synchronized (relay) {
				relay.notifyAll();
			}
		}
		for (Future<?> reader : readers) {
			reader.get(60, TimeUnit.SECONDS);
		}
	}

	@Test
	default void aReaderReentersPastWaitingWriters() throws Exception {
		// A reader that waited behind a writer which waits for that reader would wait forever.
		String name = "rw-reentry";
		LockRegistry client = contractClient();
		DistLock read = client.getReadWriteLock(name).readLock();
		read.lock();
		HoldingThread localWriter = holding("writer-of-the-same-client", client.getReadWriteLock(name).writeLock(),
				PATIENCE);
		localWriter.awaitQueued();
		HoldingThread remoteWriter = holding("writer-of-another-client",
				contractClient().getReadWriteLock(name).writeLock(), PATIENCE);
		remoteWriter.awaitQueued();

		long start = System.nanoTime();
		assertThat(read.tryLock(Duration.ofSeconds(5))).as("the reader's re-entry").isTrue();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("re-entry does not wait")
			.isLessThan(Duration.ofSeconds(2));
		assertThat(read.getHoldCount()).isEqualTo(2);
		read.unlock();
		assertThat(localWriter.acquired()).as("one read level still held").isNotDone();
		read.unlock();

		if (!servesClientsInArrivalOrder()) {
			// Writers poll: one gets in, then the other.
			HoldingThread first = awaitEither(localWriter, remoteWriter);
			HoldingThread second = (first == localWriter) ? remoteWriter : localWriter;
			assertThat(second.acquired()).isNotDone();
			first.release();
			assertThat(second.awaitAcquired(Duration.ofSeconds(5))).isTrue();
			second.release();
			return;
		}
		assertThat(localWriter.awaitAcquired(Duration.ofSeconds(5))).as("the writer queued first").isTrue();
		assertThat(remoteWriter.acquired()).isNotDone();
		localWriter.release();
		assertThat(remoteWriter.awaitAcquired(Duration.ofSeconds(5))).isTrue();
		remoteWriter.release();
	}

	@Test
	default void aReadHoldKeptAfterUnlockIsWaitedForByTheSameThreadsWriter() throws Exception {
		LockRegistry client = contractClient();
		Assumptions.assumeTrue(client.canKeepAfterUnlock(), "holds of this backend cannot be kept after unlock");
		DistReadWriteLock lock = client.getReadWriteLock("rw-kept-read");
		lock.readLock().lock();
		lock.readLock().unlockKeepingFor(Duration.ofMillis(1500));
		assertThat(lock.readLock().getHoldCount()).isZero();
		long start = System.nanoTime();
		// The thread holds nothing: this is no upgrade, and the kept read hold is waited for like another's.
		assertThat(lock.writeLock().tryLock(Duration.ofSeconds(10))).as("once the kept read hold ended").isTrue();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("waited for the kept read hold")
			.isGreaterThanOrEqualTo(Duration.ofSeconds(1));
		lock.writeLock().unlock();
	}

	@Test
	default void aDowngradedWriterKeepsAQueuedWriterOutUntilItsReadHoldEnds() throws Exception {
		String name = "rw-downgrade";
		DistReadWriteLock lock = contractClient().getReadWriteLock(name);
		lock.writeLock().lock();
		HoldingThread queued = holding("queued-writer", contractClient().getReadWriteLock(name).writeLock(), PATIENCE);
		queued.awaitQueued();

		assertThat(lock.readLock().tryLock()).as("the write holder takes the read lock at once, past the queued writer")
			.isTrue();
		lock.writeLock().unlock();
		assertThat(lock.readLock().isHeldByCurrentThread()).as("still reading").isTrue();
		assertThat(lock.writeLock().isHeldByCurrentThread()).isFalse();
		assertThat(lock.readLock().isLocked()).isTrue();
		// Curator let the queued writer in here (CURATOR-276, CURATOR-621).
		await().during(Duration.ofMillis(500))
			.atMost(Duration.ofSeconds(3))
			.until(() -> !queued.acquired().isDone());

		lock.readLock().unlock();
		assertThat(queued.awaitAcquired(Duration.ofSeconds(5))).as("the queued writer once the read hold ended")
			.isTrue();
		queued.release();
	}

	@Test
	default void aReaderAskingForTheWriteLockFailsAtOnce() throws Exception {
		String name = "rw-upgrade";
		DistReadWriteLock lock = contractClient().getReadWriteLock(name);
		lock.readLock().lock();
		long start = System.nanoTime();
		// Two readers upgrading would each wait for the other's read hold: Curator and Redisson hang here.
		assertThatThrownBy(() -> lock.writeLock().tryLock(Duration.ofSeconds(10)))
			.isInstanceOfSatisfying(LockUpgradeException.class, ex -> assertThat(ex.getLockName()).isEqualTo(name))
			.hasMessageContaining(Thread.currentThread().getName());
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("refused, not waited for")
			.isLessThan(Duration.ofSeconds(2));
		assertThatThrownBy(() -> lock.writeLock().tryLock()).isInstanceOf(LockUpgradeException.class);
		assertThat(lock.writeLock().getHoldCount()).isZero();
		assertThat(lock.readLock().getHoldCount()).isEqualTo(1);
		// Nothing was queued: a writer left in the queue would keep this new reader out.
		assertThat(tryLockElsewhere(contractClient().getReadWriteLock(name).readLock(), Duration.ZERO))
			.as("another client's reader after the refusal")
			.isTrue();
		lock.readLock().unlock();

		// The other order is a downgrade, and holding both, the write lock re-enters.
		lock.writeLock().lock();
		lock.readLock().lock();
		assertThat(lock.writeLock().tryLock()).isTrue();
		assertThat(lock.writeLock().getHoldCount()).isEqualTo(2);
		lock.writeLock().unlock();
		lock.writeLock().unlock();
		lock.readLock().unlock();
		assertThat(lock.readLock().isLocked()).isFalse();
		assertThat(lock.writeLock().isLocked()).isFalse();
	}

	@Test
	default void aCrashedReadersShareEndsWithItsLeaseWhileAnotherReaderHoldsOn() throws Exception {
		String name = "rw-crash";
		// 2 s: the lease must outlive the crash itself.
		Duration crashedLease = Duration.ofSeconds(2);
		LockRegistry crashing = contractClient(crashedLease);
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		// A short watchdog, so that the survivor renews many times while the crashed share should end:
		// Redisson's watchdog renewed every reader's share, so a crashed one never ended (redisson#1458).
		DistLock survivor = contractClient(SHORT_WATCHDOG, lost::add).getReadWriteLock(name).readLock();
		DistLock writer = contractClient().getReadWriteLock(name).writeLock();
		crashing.getReadWriteLock(name).readLock().lock();
		survivor.lock();
		crashContractClient(crashing);

		Duration crashedHoldEnds = crashedHoldsEndAfter(crashedLease);
		await().during(crashedHoldEnds.plusMillis(500))
			.atMost(crashedHoldEnds.multipliedBy(3))
			.until(() -> !tryLockElsewhere(writer, Duration.ZERO));
		assertThat(survivor.isHeldByCurrentThread()).isTrue();
		survivor.unlock();
		assertThat(tryLockElsewhere(writer, Duration.ZERO)).as("a writer right after the survivor left").isTrue();
		assertThat(lost).as("the survivor's share, kept by its watchdog").isEmpty();
	}

	@Test
	default void theWatchdogKeepsEachReaderPastThreeLeases() throws Exception {
		String name = "rw-renewed";
		// Longer than SHORT_WATCHDOG: a renewal delayed by a loaded machine must not let the writer in.
		Duration lease = Duration.ofMillis(1200);
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		DistLock first = contractClient(lease, lost::add).getReadWriteLock(name).readLock();
		DistLock second = contractClient(lease, lost::add).getReadWriteLock(name).readLock();
		DistLock writer = contractClient().getReadWriteLock(name).writeLock();
		first.lock();
		second.lock();

		await().during(lease.multipliedBy(3))
			.atMost(lease.multipliedBy(5))
			.until(() -> !tryLockElsewhere(writer, Duration.ZERO));
		first.unlock();
		// Each share kept by its own renewals: without them the second would have ended two leases ago.
		assertThat(tryLockElsewhere(writer, Duration.ZERO)).as("a writer while the second reader holds").isFalse();
		second.unlock();
		assertThat(tryLockElsewhere(writer, Duration.ZERO)).as("a writer once both left").isTrue();
		assertThat(lost).isEmpty();
	}

	@Test
	default void readAndWriteTokensFollowTheOrderOfTheHolds() throws Exception {
		String name = "rw-fenced";
		List<DistReadWriteLock> locks = List.of(contractClient().getReadWriteLock(name),
				contractClient().getReadWriteLock(name), contractClient().getReadWriteLock(name));
		long lastWrite = 0;
		long lastRead = 0;
		for (int i = 0; i < 4; i++) {
			DistLock write = locks.get(i % 3).writeLock();
			write.lock();
			long writeToken = write.getFencingToken();
			assertThat(writeToken).as("write %d after write %d", writeToken, lastWrite).isGreaterThan(lastWrite);
			assertThat(writeToken).as("write %d after read %d", writeToken, lastRead).isGreaterThan(lastRead);
			write.unlock();

			// Two readers of other clients at once, between this write and the next.
			DistLock one = locks.get((i + 1) % 3).readLock();
			DistLock other = locks.get((i + 2) % 3).readLock();
			one.lock();
			other.lock();
			long oneToken = one.getFencingToken();
			long otherToken = other.getFencingToken();
			assertThat(oneToken).isGreaterThan(writeToken);
			assertThat(otherToken).isGreaterThan(writeToken);
			one.lock();
			assertThat(one.getFencingToken()).as("a reentrant read hold keeps its token").isEqualTo(oneToken);
			one.unlock();
			one.unlock();
			other.unlock();
			lastWrite = writeToken;
			lastRead = Math.max(oneToken, otherToken);
		}
		assertThatThrownBy(locks.get(0).readLock()::getFencingToken).isInstanceOf(IllegalMonitorStateException.class);
		assertThatThrownBy(locks.get(0).writeLock()::getFencingToken).isInstanceOf(IllegalMonitorStateException.class);
	}

	@Test
	default void aWriterThatGivesUpLetsTheReadersBehindItIn() throws Exception {
		// .NET's ReaderWriterLockSlim kept them waiting for the next release (corefx#3364).
		String name = "rw-writer-gives-up";
		DistLock holder = contractClient().getReadWriteLock(name).readLock();
		holder.lock();
		HoldingThread writer = holding("impatient-writer", contractClient().getReadWriteLock(name).writeLock(),
				Duration.ofSeconds(3));
		writer.awaitQueued();
		HoldingThread reader = holding("reader-behind", contractClient().getReadWriteLock(name).readLock(), PATIENCE);
		reader.awaitQueued();
		assertThat(writer.acquired()).as("the writer still waits, so the reader queued behind it").isNotDone();

		assertThat(writer.awaitAcquired()).as("the writer's wait ran out").isFalse();
		// Under 1 s: a queued waiter calls again every 2 s (half a queue place) to keep its place, and
		// that call alone would find the way free; the writer's leaving must let it in.
		assertThat(reader.awaitAcquired(Duration.ofSeconds(1))).as("the reader behind it, promptly").isTrue();
		assertThat(holder.isHeldByCurrentThread()).as("beside the first reader, still holding").isTrue();
		reader.release();
		holder.unlock();
	}

	@Test
	default void aLockAndAReadWriteLockOfOneNameDoNotExcludeEachOther() throws Exception {
		String name = "rw-mixed";
		LockRegistry mine = contractClient();
		LockRegistry theirs = contractClient();
		DistLock lock = mine.getLock(name);
		lock.lock();
		assertThat(tryLockElsewhere(theirs.getReadWriteLock(name).writeLock(), Duration.ZERO))
			.as("the write lock while the lock of that name is held")
			.isTrue();
		assertThat(tryLockElsewhere(theirs.getReadWriteLock(name).readLock(), Duration.ZERO)).isTrue();
		lock.unlock();

		DistReadWriteLock readWrite = mine.getReadWriteLock(name);
		readWrite.writeLock().lock();
		assertThat(tryLockElsewhere(theirs.getLock(name), Duration.ZERO)).as("the lock while the write lock is held")
			.isTrue();
		// One thread may hold both: two holds, one of each kind.
		lock.lock();
		assertThat(mine.heldLocks()).extracting(HoldInfo::lockName, HoldInfo::kind)
			.containsExactlyInAnyOrder(tuple(name, HoldKind.EXCLUSIVE), tuple(name, HoldKind.WRITE));
		lock.unlock();
		assertThat(readWrite.writeLock().isHeldByCurrentThread()).isTrue();
		readWrite.writeLock().unlock();
		assertThat(mine.heldLocks()).isEmpty();
	}

	@Test
	default void twoHandlesOfOneReadWriteLockAreOneLock() throws Exception {
		String name = "rw-handles";
		LockRegistry client = contractClient();
		assertThat(client.offersReadWriteLocks()).isTrue();
		DistReadWriteLock one = client.getReadWriteLock(name);
		DistReadWriteLock other = client.getReadWriteLock(name);
		assertThat(one.getName()).isEqualTo(name);
		assertThat(one.readLock().getName()).isEqualTo(name);
		assertThat(one.readLock()).isEqualTo(other.readLock())
			.hasSameHashCodeAs(other.readLock())
			.isNotEqualTo(one.writeLock())
			.isNotEqualTo(client.getLock(name))
			.isNotEqualTo(client.getReadWriteLock(name + "-2").readLock());
		assertThat(one.writeLock()).isEqualTo(other.writeLock());

		one.readLock().lock();
		assertThat(other.readLock().isHeldByCurrentThread()).isTrue();
		assertThat(other.readLock().getHoldCount()).isEqualTo(1);
		assertThat(other.writeLock().isHeldByCurrentThread()).isFalse();
		assertThat(client.getLock(name).isHeldByCurrentThread()).as("the exclusive lock of that name").isFalse();
		other.readLock().unlock();
		assertThat(one.readLock().getHoldCount()).isZero();
		assertThat(one.readLock().isLocked()).isFalse();
	}

	@Test
	default void heldLocksListsEachSideWithItsKind() throws Exception {
		String name = "rw-listed";
		LockRegistry client = contractClient();
		DistReadWriteLock lock = client.getReadWriteLock(name);
		lock.writeLock().lock();
		lock.readLock().lock();
		assertThat(client.heldLocks()).extracting(HoldInfo::lockName, HoldInfo::kind, HoldInfo::holdCount)
			.containsExactlyInAnyOrder(tuple(name, HoldKind.WRITE, 1), tuple(name, HoldKind.READ, 1));
		lock.writeLock().unlock();
		assertThat(client.heldLocks()).extracting(HoldInfo::lockName, HoldInfo::kind)
			.containsExactly(tuple(name, HoldKind.READ));
		lock.readLock().unlock();
		assertThat(client.heldLocks()).isEmpty();
	}

	@Test
	default void aLostReadHoldIsReportedWithItsKindAndTheLockWorksAfterwards() throws Exception {
		String name = "rw-lost";
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		DistLock read = contractClient(SHORT_WATCHDOG, lost::add).getReadWriteLock(name).readLock();
		read.lock();
		if (!loseAllHolds()) {
			read.unlock();
			Assumptions.abort("this backend keeps its holds across a restart");
		}
		// The watchdog's next renewal finds the share gone: the owner is told, with the hold's kind.
		await().atMost(Duration.ofSeconds(10)).until(() -> !lost.isEmpty());
		assertThat(lost.get(0).lockName()).isEqualTo(name);
		assertThat(lost.get(0).kind()).isEqualTo(HoldKind.READ);
		assertThatThrownBy(read::unlock).isInstanceOf(LockLostException.class).hasMessageContaining(name);
		assertThat(read.getHoldCount()).isZero();

		DistLock write = contractClient().getReadWriteLock(name).writeLock();
		await().atMost(Duration.ofSeconds(20)).pollInSameThread().ignoreExceptions().until(write::tryLock);
		write.unlock();
		assertThat(read.tryLock(Duration.ofSeconds(10))).isTrue();
		read.unlock();
	}

	@Test
	default void readWriteLocksSurviveAFlushOfServerSideScripts() throws Exception {
		DistReadWriteLock lock = contractClient().getReadWriteLock("rw-flushed");
		lock.readLock().lock();
		flushContractScripts();
		lock.readLock().unlock();
		assertThat(lock.writeLock().tryLock()).isTrue();
		flushContractScripts();
		lock.writeLock().unlock();
		assertThat(lock.readLock().isLocked()).isFalse();
		assertThat(lock.writeLock().isLocked()).isFalse();
	}

	@Test
	default void theRemainingLeaseIsTheLongestOfItsSide() throws Exception {
		String name = "rw-lease";
		LockRegistry client = contractClient();
		DistLock shorter = client.getReadWriteLock(name).readLock();
		DistLock longer = contractClient().getReadWriteLock(name).readLock();
		assertThat(shorter.tryLock(Duration.ZERO, Duration.ofSeconds(3))).isTrue();
		assertThat(longer.tryLock(Duration.ZERO, Duration.ofSeconds(8))).isTrue();
		LockRegistryStats stats = (LockRegistryStats) client;
		assertThat(shorter.remainingLease()).as("the longest read hold's").isGreaterThan(Duration.ofSeconds(3))
			.isLessThanOrEqualTo(Duration.ofSeconds(8));
		assertThat(stats.remainingLease(name, HoldKind.READ)).isGreaterThan(Duration.ofSeconds(3))
			.isLessThanOrEqualTo(Duration.ofSeconds(8));
		assertThat(stats.remainingLease(name, HoldKind.WRITE)).isEqualTo(Duration.ZERO);
		assertThat(client.getReadWriteLock(name).writeLock().remainingLease()).isEqualTo(Duration.ZERO);
		assertThat(stats.remainingLease(name)).as("the exclusive lock of that name").isEqualTo(Duration.ZERO);
		shorter.unlock();
		longer.unlock();
		assertThat(stats.remainingLease(name, HoldKind.READ)).isEqualTo(Duration.ZERO);
	}

	@Test
	default void readWriteLocksRejectBadArguments() throws Exception {
		LockRegistry client = contractClient();
		assertThatThrownBy(() -> client.getReadWriteLock(" ")).isInstanceOf(IllegalArgumentException.class);
		DistReadWriteLock lock = client.getReadWriteLock("rw-bad");
		assertThatThrownBy(() -> lock.readLock().unlock()).isInstanceOf(IllegalMonitorStateException.class)
			.hasMessageContaining("rw-bad");
		assertThatThrownBy(() -> lock.writeLock().unlock()).isInstanceOf(IllegalMonitorStateException.class)
			.hasMessageContaining("rw-bad");
		assertThatThrownBy(() -> lock.readLock().lock(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
		assertThatThrownBy(() -> lock.readLock().newCondition()).isInstanceOf(UnsupportedOperationException.class);
		assertThatThrownBy(() -> lock.writeLock().newCondition()).isInstanceOf(UnsupportedOperationException.class);

		// Another client cannot end this one's read hold.
		lock.readLock().lock();
		DistLock theirs = contractClient().getReadWriteLock("rw-bad").readLock();
		assertThatThrownBy(theirs::unlock).isInstanceOf(IllegalMonitorStateException.class);
		assertThat(lock.readLock().isHeldByCurrentThread()).isTrue();
		lock.readLock().unlock();
	}

	/** @return whichever of two waiting threads gets its lock first, within 5 s */
	private static HoldingThread awaitEither(HoldingThread one, HoldingThread other) throws Exception {
		CompletableFuture.anyOf(one.acquired(), other.acquired()).get(5, TimeUnit.SECONDS);
		return Boolean.TRUE.equals(one.acquired().getNow(false)) ? one : other;
	}

	private HoldingThread holding(String thread, DistLock lock, Duration wait) {
		return closeAfterContract(HoldingThread.lock(thread, lock, wait));
	}

	private HoldingThread holding(String thread, Callable<Boolean> acquire, Runnable release) {
		return closeAfterContract(HoldingThread.start(thread, acquire, release));
	}

}
