package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.HoldKind;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.HoldRef;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.LockNotice;
import io.distlock.core.ReleaseRequest;
import io.distlock.testing.RedisServerExtension;

/**
 * Read, write and permit holds on a single Redis, asked of {@link RedisLockBackend} directly, as the
 * engine asks: counts set from the caller's belief, holds named by their attempt, hand-offs announced
 * on the waiting client's channel. Owner ids are {@code <client id>:<thread>}, as the engine makes them,
 * so that a grant reaches the client named before the first ':'.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisSharedHoldsBackendTest {

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

	private Acquisition acquire(String name, HoldKind kind, String owner, int held, Duration queueFor, String ticket) {
		return acquire(name, kind, owner, held, queueFor, ticket, LEASE, 0);
	}

	private Acquisition acquire(String name, HoldKind kind, String owner, int held, Duration queueFor, String ticket,
			Duration lease, int permits) {
		return backend().acquire(new AcquireRequest(name, owner, held, lease, queueFor, ticket, kind, permits));
	}

	private Acquisition permit(String name, String owner, int permits, Duration queueFor, String ticket) {
		return acquire(name, HoldKind.PERMIT, owner, 0, queueFor, ticket, LEASE, permits);
	}

	private Release release(String name, HoldKind kind, String owner, int held, String attemptId) {
		return backend().release(new ReleaseRequest(name, owner, held, attemptId, Acquisition.TOKEN_ON_REQUEST, null, kind));
	}

	/** Every notice one client's waiters of the named lock would get, in arrival order. */
	private BlockingQueue<LockNotice> listen(String name, HoldKind.Family family, String clientId) throws Exception {
		BlockingQueue<LockNotice> notices = new LinkedBlockingQueue<>();
		this.closing.add(backend().subscribe(name, family, clientId, notices::add));
		return notices;
	}

	/**
	 * The next grant for {@code owner}: a client's listeners of a lock hear every grant of that lock
	 * that reaches the client, and each waiter picks its own by owner and ticket, as the engine's do.
	 */
	private static LockNotice.Granted nextGrant(BlockingQueue<LockNotice> notices, String owner)
			throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (System.nanoTime() < deadline) {
			LockNotice notice = notices.poll(100, TimeUnit.MILLISECONDS);
			if (notice instanceof LockNotice.Granted granted && granted.owner().equals(owner)) {
				return granted;
			}
		}
		throw new AssertionError("No grant for " + owner + " within 10 s");
	}

	private static void assertNoGrant(BlockingQueue<LockNotice> notices, String owner) {
		assertThat(notices.stream()
			.filter(notice -> notice instanceof LockNotice.Granted granted && granted.owner().equals(owner))).isEmpty();
	}

	@Test
	void keepsEveryKindOnASingleServer() {
		assertThat(backend().supportedKinds()).isEqualTo(EnumSet.allOf(HoldKind.class));
		for (HoldKind kind : HoldKind.values()) {
			assertThat(backend().queuesWaiters(kind)).as(kind.name()).isTrue();
		}
	}

	@Test
	void keepsExclusiveLocksOnlyWhereReplicasMustAcknowledge() {
		RedisLockBackend acknowledged = new RedisLockBackend(this.clients.connectionFactory(), "distlock", Duration.ZERO,
				RedisReplicaAcks.of(1, Duration.ofSeconds(1)));
		this.closing.add(acknowledged);

		assertThat(acknowledged.supportedKinds()).containsExactly(HoldKind.EXCLUSIVE);
		assertThat(acknowledged.queuesWaiters(HoldKind.READ)).isFalse();
		assertThatThrownBy(() -> acknowledged.acquire(new AcquireRequest("rw", "a:1", 0, LEASE, NO_WAIT, "r1",
				HoldKind.READ, 0))).isInstanceOf(UnsupportedOperationException.class);
	}

	@Test
	void aRestartedServerLetsNoReaderWriterOrPermitHolderInBeforeItsGraceEnds() {
		redisServer.server().restart();
		RedisLockBackend graced = new RedisLockBackend(this.clients.connectionFactory(), "distlock", Duration.ofSeconds(3));
		this.closing.add(graced);
		AcquireRequest reader = new AcquireRequest("rw", "a:1", 0, LEASE, LockBackend.QUEUE_PLACE, "r1", HoldKind.READ, 0);
		// The first call after the restart may meet the connection still reconnecting.
		Acquisition refused = await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> graced.acquire(reader),
				acquisition -> acquisition != null);

		assertThat(refused.status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(refused.restartGrace()).isTrue();
		for (AcquireRequest other : List.of(
				new AcquireRequest("rw", "b:1", 0, LEASE, NO_WAIT, "w1", HoldKind.WRITE, 0),
				new AcquireRequest("sem", "c:1", 0, LEASE, NO_WAIT, "p1", HoldKind.PERMIT, 2))) {
			assertThat(graced.acquire(other).restartGrace()).as(other.kind().name()).isTrue();
		}
		// The queued reader is let in by its own call once the grace is over.
		await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100))
			.until(() -> graced.acquire(reader).status() == Acquisition.Status.ACQUIRED);
	}

	@Test
	void severalReadersOfSeveralClientsHoldAtOnce() {
		for (String reader : List.of("a:1", "a:2", "b:1")) {
			assertThat(acquire("rw", HoldKind.READ, reader, 0, NO_WAIT, "t-" + reader).status())
				.as(reader).isEqualTo(Acquisition.Status.ACQUIRED);
		}
		for (String reader : List.of("a:1", "a:2", "b:1")) {
			assertThat(backend().isHeldBy("rw", HoldKind.READ, reader)).as(reader).isTrue();
		}
		assertThat(backend().isHeldBy("rw", HoldKind.WRITE, "a:1")).isFalse();
		assertThat(backend().remainingLease("rw", HoldKind.READ)).isGreaterThan(Duration.ofSeconds(20));
		assertThat(backend().remainingLease("rw", HoldKind.WRITE)).isZero();
	}

	@Test
	void readersKeepTheWriterOutAndTheWriterKeepsReadersOut() {
		assertThat(acquire("rw", HoldKind.READ, "a:1", 0, NO_WAIT, "r1").status()).isEqualTo(Acquisition.Status.ACQUIRED);
		Acquisition writer = acquire("rw", HoldKind.WRITE, "b:1", 0, NO_WAIT, "w1");
		assertThat(writer.status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(release("rw", HoldKind.READ, "a:1", 1, "r1")).isEqualTo(Release.RELEASED);

		assertThat(acquire("rw", HoldKind.WRITE, "b:1", 0, NO_WAIT, "w2").status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(acquire("rw", HoldKind.READ, "a:1", 0, NO_WAIT, "r2").status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(acquire("rw", HoldKind.WRITE, "c:1", 0, NO_WAIT, "w3").status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
	}

	@Test
	void aQueuedWriterHoldsLaterReadersBackButNotReentries() {
		assertThat(acquire("rw", HoldKind.READ, "a:1", 0, NO_WAIT, "r1").status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(acquire("rw", HoldKind.WRITE, "b:1", 0, LockBackend.QUEUE_PLACE, "w1").status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);

		assertThat(acquire("rw", HoldKind.READ, "c:1", 0, NO_WAIT, "r2").status()).as("a reader after the writer")
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(acquire("rw", HoldKind.READ, "a:1", 1, NO_WAIT, "r3").status()).as("the holder re-entering")
			.isEqualTo(Acquisition.Status.ACQUIRED);
		// A re-sent copy of that re-entry counts once: the count is set, not incremented.
		assertThat(acquire("rw", HoldKind.READ, "a:1", 1, NO_WAIT, "r3").status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(release("rw", HoldKind.READ, "a:1", 2, "r1")).isEqualTo(Release.DECREMENTED);
		assertThat(release("rw", HoldKind.READ, "a:1", 1, "r1")).isEqualTo(Release.RELEASED);
	}

	@Test
	void aWritersReleaseGrantsEveryQueuedReaderUpToTheNextWriter() throws Exception {
		BlockingQueue<LockNotice> clientR = listen("rw", HoldKind.Family.READ_WRITE, "r");
		BlockingQueue<LockNotice> clientS = listen("rw", HoldKind.Family.READ_WRITE, "s");
		BlockingQueue<LockNotice> clientW = listen("rw", HoldKind.Family.READ_WRITE, "w");
		BlockingQueue<LockNotice> clientL = listen("rw", HoldKind.Family.READ_WRITE, "l");
		BlockingQueue<LockNotice> sameNameLock = listen("rw", HoldKind.Family.LOCK, "r");
		Acquisition first = acquire("rw", HoldKind.WRITE, "w:1", 0, NO_WAIT, "w1");
		long firstToken = backend().issueToken("rw", HoldKind.WRITE, "w:1", first.attemptId());
		for (String[] waiter : new String[][] { { "r:1", "READ" }, { "s:1", "READ" }, { "w:2", "WRITE" }, { "l:1", "READ" } }) {
			assertThat(acquire("rw", HoldKind.valueOf(waiter[1]), waiter[0], 0, LockBackend.QUEUE_PLACE, "q-" + waiter[0])
				.status()).as(waiter[0]).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		}

		assertThat(release("rw", HoldKind.WRITE, "w:1", 1, first.attemptId())).isEqualTo(Release.RELEASED);

		LockNotice.Granted toR = nextGrant(clientR, "r:1");
		LockNotice.Granted toS = nextGrant(clientS, "s:1");
		assertThat(toR.ticket()).isEqualTo("q-r:1");
		assertThat(toS.ticket()).isEqualTo("q-s:1");
		assertThat(toR.token()).isGreaterThan(firstToken);
		assertThat(toS.token()).isNotEqualTo(toR.token()).isGreaterThan(firstToken);
		// The waiters take their grants up: with their own lease, and the token drawn for them.
		Acquisition takenUp = acquire("rw", HoldKind.READ, "r:1", 0, LockBackend.QUEUE_PLACE, "q-r:1");
		assertThat(takenUp.status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(takenUp.token()).isEqualTo(toR.token());
		assertThat(acquire("rw", HoldKind.READ, "s:1", 0, LockBackend.QUEUE_PLACE, "q-s:1").token()).isEqualTo(toS.token());

		assertThat(backend().isHeldBy("rw", HoldKind.WRITE, "w:2")).as("the next writer").isFalse();
		assertThat(backend().isHeldBy("rw", HoldKind.READ, "l:1")).as("the reader behind the next writer").isFalse();
		assertNoGrant(clientW, "w:2");
		assertNoGrant(clientL, "l:1");
		assertThat(sameNameLock).as("the exclusive lock of the same name hears nothing").isEmpty();

		// The last reader out lets the writer in, and it alone.
		assertThat(release("rw", HoldKind.READ, "r:1", 1, "q-r:1")).isEqualTo(Release.RELEASED);
		assertThat(backend().isHeldBy("rw", HoldKind.WRITE, "w:2")).isFalse();
		assertThat(release("rw", HoldKind.READ, "s:1", 1, "q-s:1")).isEqualTo(Release.RELEASED);
		assertThat(nextGrant(clientW, "w:2").ticket()).isEqualTo("q-w:2");
		assertThat(backend().isHeldBy("rw", HoldKind.READ, "l:1")).isFalse();
	}

	@Test
	void aWriterThatLeavesTheQueueLetsTheReadersBehindItIn() throws Exception {
		BlockingQueue<LockNotice> readers = listen("rw", HoldKind.Family.READ_WRITE, "r");
		assertThat(acquire("rw", HoldKind.READ, "a:1", 0, NO_WAIT, "r0").status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(acquire("rw", HoldKind.WRITE, "w:1", 0, LockBackend.QUEUE_PLACE, "w1").status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(acquire("rw", HoldKind.READ, "r:1", 0, LockBackend.QUEUE_PLACE, "r1").status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(acquire("rw", HoldKind.READ, "r:2", 0, LockBackend.QUEUE_PLACE, "r2").status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);

		backend().leaveQueue("rw", HoldKind.WRITE, "w:1", "w1", true);

		assertThat(nextGrant(readers, "r:1").ticket()).isEqualTo("r1");
		assertThat(nextGrant(readers, "r:2").ticket()).isEqualTo("r2");
		assertThat(backend().isHeldBy("rw", HoldKind.READ, "r:1")).isTrue();
	}

	@Test
	void theWriterMayReadAndWaitersStayBehindItsReadHold() {
		Acquisition write = acquire("rw", HoldKind.WRITE, "a:1", 0, NO_WAIT, "w1");
		assertThat(acquire("rw", HoldKind.WRITE, "b:1", 0, LockBackend.QUEUE_PLACE, "w2").status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);

		Acquisition read = acquire("rw", HoldKind.READ, "a:1", 0, NO_WAIT, "r1");
		assertThat(read.status()).as("the downgrade").isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(release("rw", HoldKind.WRITE, "a:1", 1, write.attemptId())).isEqualTo(Release.RELEASED);

		assertThat(backend().isHeldBy("rw", HoldKind.READ, "a:1")).isTrue();
		assertThat(backend().isHeldBy("rw", HoldKind.WRITE, "b:1")).as("the queued writer").isFalse();
		assertThat(acquire("rw", HoldKind.WRITE, "b:1", 0, LockBackend.QUEUE_PLACE, "w2").status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(release("rw", HoldKind.READ, "a:1", 1, read.attemptId())).isEqualTo(Release.RELEASED);
		assertThat(backend().isHeldBy("rw", HoldKind.WRITE, "b:1")).as("granted on the last release").isTrue();
	}

	@Test
	void aWriteAskedBesideTheOwnersOwnReadHoldWaitsForItLikeAnyReaders() {
		// The engine refuses a real upgrade before asking; a read hold of the owner's own that reaches the
		// script is one the engine no longer knows (kept after unlock, or handed to an attempt that gave
		// up), and it lapses: refusing the write as an upgrade would fail a thread that holds nothing.
		Acquisition read = acquire("rw", HoldKind.READ, "a:1", 0, NO_WAIT, "r1");
		assertThat(read.status()).isEqualTo(Acquisition.Status.ACQUIRED);

		Acquisition write = acquire("rw", HoldKind.WRITE, "a:1", 0, LockBackend.QUEUE_PLACE, "w1");

		assertThat(write.status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(backend().isHeldBy("rw", HoldKind.WRITE, "a:1")).isFalse();
		assertThat(release("rw", HoldKind.READ, "a:1", 1, read.attemptId())).isEqualTo(Release.RELEASED);
		assertThat(backend().isHeldBy("rw", HoldKind.WRITE, "a:1")).as("granted once the read hold ended").isTrue();
	}

	/**
	 * An owner's queue place outlives the attempt that took it when the attempt's leave does not land
	 * (a place lapses by itself). Here the reader's place is at the head once the writer ahead of it is
	 * gone by its lease (no script admitted anyone then), and the owner's write acquisition finds its
	 * own entry at the head: it must be admitted as the writer it asks to be, not as the reader its
	 * old entry says (it was told it writes while another reader entered).
	 */
	@Test
	void anOwnersLeftoverReadPlaceDoesNotTurnItsWriteAcquisitionIntoARead() {
		assertThat(acquire("rw", HoldKind.WRITE, "w:1", 0, NO_WAIT, "w1", Duration.ofMillis(1000), 0).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(acquire("rw", HoldKind.READ, "x:1", 0, LockBackend.QUEUE_PLACE, "r1").status())
			.as("the reader queues behind the writer").isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		// The reader's attempt gives up; its leave never lands. The writer's holder crashes: its lease ends.
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
			.until(() -> backend().remainingLease("rw", HoldKind.WRITE).isZero());

		Acquisition write = acquire("rw", HoldKind.WRITE, "x:1", 0, LockBackend.QUEUE_PLACE, "w2");

		assertThat(write.status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(acquire("rw", HoldKind.READ, "r:1", 0, NO_WAIT, "r2").status())
			.as("another owner's reader while x:1 writes").isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(backend().isHeldBy("rw", HoldKind.WRITE, "x:1")).as("what x:1 was told it holds").isTrue();
		assertThat(backend().isHeldBy("rw", HoldKind.READ, "x:1")).as("what x:1 did not ask for").isFalse();
	}

	@Test
	void releasesNameTheirHoldAndARepeatedReleaseIsRecognised() {
		Acquisition read = acquire("rw", HoldKind.READ, "a:1", 0, NO_WAIT, "r1");
		assertThat(release("rw", HoldKind.READ, "a:1", 1, "another attempt")).isEqualTo(Release.NOT_HELD);
		assertThat(release("rw", HoldKind.WRITE, "a:1", 1, read.attemptId())).as("another kind").isEqualTo(Release.NOT_HELD);
		assertThat(release("rw", HoldKind.READ, "a:1", 1, read.attemptId())).isEqualTo(Release.RELEASED);
		assertThat(release("rw", HoldKind.READ, "a:1", 1, read.attemptId())).as("a re-sent copy").isEqualTo(Release.RELEASED);
		assertThat(acquire("rw", HoldKind.READ, "a:1", 1, NO_WAIT, "r1").status()).as("a re-entry of a hold gone")
			.isEqualTo(Acquisition.Status.LOST);
		assertThat(this.clients.redis().hasKey("distlock:rw:{rw}")).as("an idle lock leaves no state").isFalse();
	}

	@Test
	void permitsAreNeverExceededAcrossClients() throws Exception {
		RedisLockBackend other = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		this.closing.add(other);
		List<RedisLockBackend> backends = List.of(backend(), other);
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		AtomicInteger entered = new AtomicInteger();
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				RedisLockBackend backend = backends.get(t % 2);
				String owner = "c" + (t % 2) + ":" + t;
				done.add(threads.submit(() -> {
					for (int i = 0; i < 40; i++) {
						String ticket = owner + "-" + i;
						Acquisition permit = backend.acquire(
								new AcquireRequest("sem", owner, 0, LEASE, NO_WAIT, ticket, HoldKind.PERMIT, 3));
						if (permit.status() != Acquisition.Status.ACQUIRED) {
							continue;
						}
						entered.incrementAndGet();
						most.accumulateAndGet(inside.incrementAndGet(), Math::max);
						Thread.onSpinWait();
						inside.decrementAndGet();
						assertThat(backend.release(new ReleaseRequest("sem", owner, 1, ticket, Acquisition.TOKEN_ON_REQUEST,
								null, HoldKind.PERMIT))).isEqualTo(Release.RELEASED);
					}
					return null;
				}));
			}
			for (Future<?> future : done) {
				future.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(entered.get()).isPositive();
		assertThat(most.get()).isLessThanOrEqualTo(3);

		for (String owner : List.of("a:1", "a:2", "a:3")) {
			assertThat(permit("sem", owner, 3, NO_WAIT, "p-" + owner).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		}
		assertThat(permit("sem", "a:4", 3, NO_WAIT, "p4").status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(backend().availablePermits("sem", 3)).isZero();
	}

	@Test
	void aFreedPermitGoesToTheFirstQueuedWaiter() throws Exception {
		BlockingQueue<LockNotice> waiters = listen("sem", HoldKind.Family.SEMAPHORE, "q");
		assertThat(permit("sem", "a:1", 1, NO_WAIT, "p1").status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(permit("sem", "q:1", 1, LockBackend.QUEUE_PLACE, "p2").status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(permit("sem", "q:2", 1, LockBackend.QUEUE_PLACE, "p3").status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);

		assertThat(release("sem", HoldKind.PERMIT, "a:1", 1, "p1")).isEqualTo(Release.RELEASED);

		assertThat(nextGrant(waiters, "q:1").ticket()).isEqualTo("p2");
		assertNoGrant(waiters, "q:2");
		assertThat(backend().isHeldBy("sem", HoldKind.PERMIT, "q:2")).isFalse();
	}

	@Test
	void otherPermitsAreRefusedWhileTheSemaphoreHasStateAndAcceptedOnceIdle() {
		assertThat(permit("sem", "a:1", 2, NO_WAIT, "p1").status()).isEqualTo(Acquisition.Status.ACQUIRED);

		Acquisition differing = permit("sem", "b:1", 3, LockBackend.QUEUE_PLACE, "p2");
		assertThat(differing.status()).isEqualTo(Acquisition.Status.PERMITS_DIFFER);
		assertThat(differing.token()).as("the permits in use").isEqualTo(2);
		assertThat(this.clients.redis().hasKey("distlock:sem:{sem}:queue")).as("nothing queued").isFalse();

		assertThat(release("sem", HoldKind.PERMIT, "a:1", 1, "p1")).isEqualTo(Release.RELEASED);
		assertThat(permit("sem", "b:1", 3, NO_WAIT, "p3").status()).isEqualTo(Acquisition.Status.ACQUIRED);
	}

	@Test
	void availablePermitsCountLiveHoldersAgainstTheStoredPermits() {
		assertThat(backend().availablePermits("sem", 3)).as("no state: the declared permits").isEqualTo(3);
		assertThat(permit("sem", "a:1", 3, NO_WAIT, "p1").status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(backend().availablePermits("sem", 3)).isEqualTo(2);
		assertThat(backend().availablePermits("sem", 5)).as("counted against the stored permits").isEqualTo(2);
	}

	@Test
	void eachReaderKeepsItsOwnLease() {
		Duration shortLease = Duration.ofMillis(1500);
		Acquisition crashed = acquire("rw", HoldKind.READ, "a:1", 0, NO_WAIT, "r1", shortLease, 0);
		Acquisition renewed = acquire("rw", HoldKind.READ, "b:1", 0, NO_WAIT, "r2", shortLease, 0);
		HoldRef renewedRef = new HoldRef("rw", "b:1", renewed.attemptId(), HoldKind.READ);

		// Only b's watchdog renews; a's client has crashed.
		await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200)).until(() -> {
			assertThat(backend().renew(List.of(renewedRef), shortLease, Duration.ofSeconds(5))).containsExactly(true);
			return !backend().isHeldBy("rw", HoldKind.READ, "a:1");
		});

		assertThat(backend().isHeldBy("rw", HoldKind.READ, "b:1")).isTrue();
		assertThat(backend().renew(List.of(new HoldRef("rw", "a:1", crashed.attemptId(), HoldKind.READ)), LEASE,
				Duration.ofSeconds(5))).as("the crashed reader's renewal").containsExactly(false);
		assertThat(acquire("rw", HoldKind.WRITE, "c:1", 0, NO_WAIT, "w1").status()).as("b still reads")
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(release("rw", HoldKind.READ, "a:1", 1, crashed.attemptId())).isEqualTo(Release.NOT_HELD);
	}

	@Test
	void oneRenewalServesHoldsOfEveryKind() {
		Duration shortLease = Duration.ofSeconds(3);
		Acquisition exclusive = acquire("m", HoldKind.EXCLUSIVE, "a:1", 0, NO_WAIT, "x1", shortLease, 0);
		Acquisition read = acquire("m", HoldKind.READ, "a:1", 0, NO_WAIT, "r1", shortLease, 0);
		Acquisition write = acquire("n", HoldKind.WRITE, "a:1", 0, NO_WAIT, "w1", shortLease, 0);
		Acquisition permit = acquire("m", HoldKind.PERMIT, "a:1", 0, NO_WAIT, "p1", shortLease, 2);

		List<Boolean> renewed = backend().renew(List.of(new HoldRef("m", "a:1", exclusive.attemptId()),
				new HoldRef("m", "a:1", read.attemptId(), HoldKind.READ),
				new HoldRef("n", "a:1", write.attemptId(), HoldKind.WRITE),
				new HoldRef("m", "a:1", permit.attemptId(), HoldKind.PERMIT),
				new HoldRef("m", "a:1", "an earlier attempt", HoldKind.READ),
				new HoldRef("m", "b:1", null, HoldKind.PERMIT)), LEASE, Duration.ofSeconds(5));

		assertThat(renewed).containsExactly(true, true, true, true, false, false);
		for (HoldKind kind : List.of(HoldKind.EXCLUSIVE, HoldKind.READ, HoldKind.PERMIT)) {
			assertThat(backend().remainingLease("m", kind)).as(kind.name()).isGreaterThan(Duration.ofSeconds(20));
		}
		assertThat(backend().remainingLease("n", HoldKind.WRITE)).isGreaterThan(Duration.ofSeconds(20));
		assertThat(backend().renew(List.of(new HoldRef("m", "a:1", read.attemptId(), HoldKind.READ),
				new HoldRef("m", "a:1", exclusive.attemptId())), LEASE, null)).as("through the template")
			.containsExactly(true, true);
	}

	@Test
	void aWriteTokenIsAboveEveryEarlierTokenAndAReadTokenLiesBetweenTheWritesAroundIt() {
		Acquisition write1 = acquire("rw", HoldKind.WRITE, "a:1", 0, NO_WAIT, "w1");
		assertThat(write1.token()).isEqualTo(Acquisition.TOKEN_ON_REQUEST);
		long first = backend().issueToken("rw", HoldKind.WRITE, "a:1", write1.attemptId());
		assertThat(backend().issueToken("rw", HoldKind.WRITE, "a:1", write1.attemptId())).as("asked again").isEqualTo(first);
		long exclusive = backend().issueToken("rw", HoldKind.EXCLUSIVE, "z:1",
				acquire("rw", HoldKind.EXCLUSIVE, "z:1", 0, NO_WAIT, "x1").attemptId());
		release("rw", HoldKind.WRITE, "a:1", 1, write1.attemptId());

		Acquisition read = acquire("rw", HoldKind.READ, "b:1", 0, NO_WAIT, "r1");
		long readToken = backend().issueToken("rw", HoldKind.READ, "b:1", read.attemptId());
		release("rw", HoldKind.READ, "b:1", 1, read.attemptId());
		Acquisition write2 = acquire("rw", HoldKind.WRITE, "c:1", 0, NO_WAIT, "w2");
		long second = backend().issueToken("rw", HoldKind.WRITE, "c:1", write2.attemptId());

		assertThat(readToken).isGreaterThan(first).isGreaterThan(exclusive);
		assertThat(second).isGreaterThan(readToken);
		assertThat(backend().issueToken("rw", HoldKind.READ, "b:1", read.attemptId())).as("a released hold")
			.isEqualTo(Acquisition.NO_TOKEN);
	}

	@Test
	void locksReadWriteLocksAndSemaphoresOfOneNameNeverMeet() {
		assertThat(acquire("x", HoldKind.EXCLUSIVE, "a:1", 0, NO_WAIT, "x1").status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(acquire("x", HoldKind.WRITE, "b:1", 0, NO_WAIT, "w1").status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(permit("x", "c:1", 1, NO_WAIT, "p1").status()).isEqualTo(Acquisition.Status.ACQUIRED);

		assertThat(backend().isHeldBy("x", HoldKind.EXCLUSIVE, "b:1")).isFalse();
		assertThat(backend().isHeldBy("x", HoldKind.WRITE, "a:1")).isFalse();
		assertThat(backend().isHeldBy("x", HoldKind.PERMIT, "b:1")).isFalse();
		Set<String> keys = this.clients.redis().keys("distlock:*");
		assertThat(keys).contains("distlock:{x}", "distlock:rw:{x}", "distlock:sem:{x}");
		assertThat(release("x", HoldKind.EXCLUSIVE, "a:1", 1, "x1")).isEqualTo(Release.RELEASED);
		assertThat(backend().isHeldBy("x", HoldKind.WRITE, "b:1")).isTrue();
		assertThat(backend().isHeldBy("x", HoldKind.PERMIT, "c:1")).isTrue();
	}

	@Test
	void noKeyOfAReadWriteLockOrSemaphoreIsAnExclusiveLocksKey() {
		RedisKeys keys = new RedisKeys("distlock", false);
		for (String name : List.of("x", "rw:{x}", "}", "sem:{x}", "{x}")) {
			for (HoldKind.Family family : List.of(HoldKind.Family.READ_WRITE, HoldKind.Family.SEMAPHORE)) {
				RedisKeys.SharedKeys shared = keys.shared(family, name);
				for (String key : List.of(shared.state(), shared.queue(), shared.queueEntries(), shared.markerPrefix())) {
					assertThat(key).as(key).startsWith((family == HoldKind.Family.READ_WRITE) ? "distlock:rw:" : "distlock:sem:");
				}
				assertThat(shared.counter()).isEqualTo(keys.fencingCounter(name));
			}
			assertThat(keys.lock(name)).startsWith("distlock:{");
		}
	}

}
