package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistReadWriteLock;
import io.distlock.HoldKind;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.testing.RedisServerExtension;

/**
 * Races and safety of read, write and permit holds on a single Redis, asked of
 * {@link RedisLockBackend} directly (as {@link RedisSharedHoldsBackendTest} does). Each test is one
 * scenario that the scripts must keep safe.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisSharedHoldsReviewTest {

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisServer);

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration NO_WAIT = Duration.ZERO;

	private final List<AutoCloseable> closing = new ArrayList<>();

	private RedisLockBackend backend;

	@AfterEach
	void close() throws Exception {
		for (AutoCloseable closeable : this.closing) {
			closeable.close();
		}
		if (this.backend != null) {
			this.backend.close();
		}
	}

	private RedisLockBackend backend() {
		if (this.backend == null) {
			this.backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		}
		return this.backend;
	}

	private Acquisition acquire(String name, HoldKind kind, String owner, Duration queueFor, String ticket, Duration lease) {
		return backend().acquire(new AcquireRequest(name, owner, 0, lease, queueFor, ticket, kind, 0));
	}

	/**
	 * An owner's queue place outlives the attempt that took it when the attempt's leave does not land
	 * (BackendCalls.leaveQueue: "the place lapses by itself"; RedisLockCalls sends leaves briefly, or on
	 * a background thread over another connection where scripts go through the template). The owner's
	 * next attempt, of the other kind, must get the kind it asks for. Here the reader's place is at the
	 * head when the writer ahead of it is gone by its lease (no script ran admit() then), and the
	 * owner's write acquisition runs admit() with itself as 'self': admit() takes the queued entry's
	 * kind, 'r', and answers "acquired". The owner believes it writes while another reader enters.
	 */
	@Test
	void anOwnersLeftoverReadPlaceDoesNotTurnItsWriteAcquisitionIntoARead() {
		assertThat(acquire("rw", HoldKind.WRITE, "w:1", NO_WAIT, "w1", Duration.ofMillis(1000)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(acquire("rw", HoldKind.READ, "x:1", LockBackend.QUEUE_PLACE, "r1", LEASE).status())
			.as("the reader queues behind the writer").isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		// The reader's attempt gives up; its leave never lands. The writer's holder crashes: its lease ends.
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
			.until(() -> backend().remainingLease("rw", HoldKind.WRITE).isZero());

		Acquisition write = acquire("rw", HoldKind.WRITE, "x:1", LockBackend.QUEUE_PLACE, "w2", LEASE);

		assertThat(write.status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(acquire("rw", HoldKind.READ, "r:1", NO_WAIT, "r2", LEASE).status())
			.as("another owner's reader while x:1 was told it writes").isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(backend().isHeldBy("rw", HoldKind.WRITE, "x:1")).as("what x:1 was told it holds").isTrue();
		assertThat(backend().isHeldBy("rw", HoldKind.READ, "x:1")).as("what x:1 did not ask for").isFalse();
	}


	/**
	 * readLock().unlockKeepingFor(keep) leaves the read hold in Redis, unrenewed, for keep; the engine
	 * no longer counts it (getHoldCount() is 0), so its own upgrade check passes. acquire-shared.lua
	 * then finds the owner's 'r:' field and refuses the write as an upgrade (-3): the thread gets
	 * LockUpgradeException saying it holds the read lock, however long it would wait, instead of
	 * waiting for the kept read to end as it would for any other reader's. (The same happens for
	 * up to QUEUE_PLACE after a read attempt's leave that did not land left a granted hold behind.)
	 */
	@Test
	void aReadHoldKeptAfterUnlockIsWaitedForNotRefusedAsAnUpgrade() throws Exception {
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(30));
		DistReadWriteLock rw = registry.getReadWriteLock("rw");
		rw.readLock().lock();
		rw.readLock().unlockKeepingFor(Duration.ofMillis(1500));
		assertThat(rw.readLock().getHoldCount()).isZero();

		assertThat(rw.writeLock().tryLock(Duration.ofSeconds(10), null)).as("once the kept read ends").isTrue();
		rw.writeLock().unlock();
	}

}
