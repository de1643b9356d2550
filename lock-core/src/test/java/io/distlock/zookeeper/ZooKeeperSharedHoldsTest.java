package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.distlock.HoldKind;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.HoldRef;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.ReleaseRequest;

/**
 * Read, write and permit holds on ZooKeeper, driven by calling the backend directly against one real
 * server, and checked on the nodes themselves: what the contract suites cannot see from outside.
 */
class ZooKeeperSharedHoldsTest {

	private static final String BASE = "/distlock-shared";

	private static final Duration LONG = Duration.ofMinutes(1);

	private static final Duration QUEUE = Duration.ofSeconds(4);

	private static TestingServer server;

	private ZooKeeperTestClients clients;

	private CuratorFramework mineCurator;

	private ZooKeeperLockBackend mine;

	private ZooKeeperLockBackend theirs;

	private CuratorFramework observer;

	@BeforeAll
	static void startServer() throws Exception {
		server = new TestingServer(ZooKeeperTestClients.standaloneSpec(), true);
	}

	@AfterAll
	static void stopServer() throws Exception {
		server.close();
	}

	@BeforeEach
	void backends() {
		this.clients = new ZooKeeperTestClients(server.getConnectString());
		this.mineCurator = this.clients.newCurator(ZooKeeperTestClients.SESSION_TIMEOUT);
		this.mine = new ZooKeeperLockBackend(this.mineCurator, BASE, ZooKeeperTestClients.CONNECTION_TIMEOUT, true);
		this.theirs = new ZooKeeperLockBackend(this.clients.newCurator(ZooKeeperTestClients.SESSION_TIMEOUT), BASE,
				ZooKeeperTestClients.CONNECTION_TIMEOUT, true);
		this.observer = this.clients.newCurator(ZooKeeperTestClients.SESSION_TIMEOUT);
	}

	@AfterEach
	void close() {
		this.mine.close();
		this.theirs.close();
		this.observer.close();
		this.clients.close();
	}

	private static AcquireRequest request(String name, HoldKind kind, String owner, String ticket, Duration queueFor) {
		return new AcquireRequest(name, owner, 0, LONG, queueFor, ticket, kind, (kind == HoldKind.PERMIT) ? 2 : 0);
	}

	private static ReleaseRequest release(String name, HoldKind kind, String owner) {
		return new ReleaseRequest(name, owner, 1, null, 0, null, kind);
	}

	/** @return the children of the lock's line, in the order of their sequence */
	private List<String> line(String name, String suffix) throws Exception {
		try {
			return this.observer.getChildren()
				.forPath(BASE + "/" + ZooKeeperNodeNames.nodeName(name) + suffix)
				.stream()
				.sorted((one, other) -> ZooKeeperSharedHolds.Node.parse(one).compareTo(ZooKeeperSharedHolds.Node.parse(other)))
				.toList();
		}
		catch (KeeperException.NoNodeException none) {
			return List.of();
		}
	}

	/** CURATOR-621: a downgrade's read node sorted after a writer queued meanwhile, which then got in. */
	@Test
	void aDowngradesReadNodeSortsWhereItsWriteNodeIsSoAQueuedWriterStaysBehindIt() throws Exception {
		String name = "downgrade";
		assertThat(this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(this.theirs.acquire(request(name, HoldKind.READ, "theirs:2", "2", QUEUE)).status())
			.as("a reader behind the queued writer")
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);

		assertThat(this.mine.acquire(request(name, HoldKind.READ, "mine:1", "2", QUEUE)).status())
			.as("the write holder's read lock, at once")
			.isEqualTo(Acquisition.Status.ACQUIRED);
		List<String> line = line(name, ".rw");
		assertThat(line).hasSize(4);
		String write = line.get(0);
		assertThat(write).startsWith("w-");
		assertThat(line.get(1)).as("the read node, beside its write node")
			.startsWith("r-")
			.endsWith(write.substring(write.lastIndexOf('-') + 1) + "d");

		assertThat(this.mine.release(release(name, HoldKind.WRITE, "mine:1"))).isEqualTo(Release.RELEASED);
		assertThat(line(name, ".rw")).hasSize(3);
		assertThat(this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", QUEUE)).status())
			.as("the queued writer, behind the downgraded read hold")
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(this.theirs.acquire(request(name, HoldKind.READ, "theirs:2", "2", QUEUE)).status())
			.as("the reader behind the queued writer")
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(this.mine.isHeldBy(name, HoldKind.READ, "mine:1")).isTrue();

		assertThat(this.mine.release(release(name, HoldKind.READ, "mine:1"))).isEqualTo(Release.RELEASED);
		assertThat(this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(this.theirs.acquire(request(name, HoldKind.READ, "theirs:2", "2", QUEUE)).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		this.theirs.release(release(name, HoldKind.WRITE, "theirs:1"));
		assertThat(this.theirs.acquire(request(name, HoldKind.READ, "theirs:2", "2", QUEUE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		this.theirs.release(release(name, HoldKind.READ, "theirs:2"));
		assertThat(line(name, ".rw")).isEmpty();
	}

	/**
	 * A create whose answer never came (the call failed after the node was made): the attempt's next
	 * call takes that node up as its place, by the ticket in its name, instead of queueing a second
	 * one behind it; or, once the attempt gives up, leaving deletes it.
	 */
	@Test
	void aCreateWhoseAnswerNeverCameIsFoundByItsTicket() throws Exception {
		String name = "unanswered";
		this.mine.hook = (point, lock) -> {
			if (point.equals("created-in-line")) {
				throw new KeeperException.ConnectionLossException();
			}
		};
		assertThatThrownBy(() -> this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "7", QUEUE)))
			.hasCauseInstanceOf(KeeperException.ConnectionLossException.class);
		assertThat(line(name, ".rw")).hasSize(1);
		long czxid = this.observer.checkExists()
			.forPath(BASE + "/" + ZooKeeperNodeNames.nodeName(name) + ".rw/" + line(name, ".rw").get(0))
			.getCzxid();
		this.mine.hook = (point, lock) -> {
		};

		// Sent again by the same attempt: the node already there is its place, and it holds.
		Acquisition again = this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "7", QUEUE));
		assertThat(again.status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(again.attemptId()).isEqualTo(Long.toString(czxid));
		assertThat(line(name, ".rw")).hasSize(1);
		assertThat(this.mine.release(release(name, HoldKind.WRITE, "mine:1"))).isEqualTo(Release.RELEASED);

		// An attempt that gives up after such a failure leaves no node behind.
		this.mine.hook = (point, lock) -> {
			if (point.equals("created-in-line")) {
				throw new KeeperException.ConnectionLossException();
			}
		};
		assertThatThrownBy(() -> this.mine.acquire(request(name, HoldKind.PERMIT, "mine:2", "8", QUEUE)))
			.hasCauseInstanceOf(KeeperException.ConnectionLossException.class);
		assertThat(line(name, ".sem")).hasSize(1);
		this.mine.leaveQueue(name, HoldKind.PERMIT, "mine:2", "8", true);
		assertThat(line(name, ".sem")).isEmpty();
	}

	@Test
	void aTryWithoutWaitLeavesNoNodeAndPermitsComeFromTheFirstNode() throws Exception {
		String name = "no-wait";
		assertThat(this.mine.acquire(request(name, HoldKind.READ, "mine:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", Duration.ZERO)).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(line(name, ".rw")).as("the refused writer's node, deleted before the answer").hasSize(1);
		this.mine.release(release(name, HoldKind.READ, "mine:1"));

		assertThat(this.mine.acquire(request(name, HoldKind.PERMIT, "mine:1", "2", QUEUE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		Acquisition other = this.theirs
			.acquire(new AcquireRequest(name, "theirs:1", 0, LONG, QUEUE, "2", HoldKind.PERMIT, 5));
		assertThat(other.status()).isEqualTo(Acquisition.Status.PERMITS_DIFFER);
		assertThat(other.token()).isEqualTo(2);
		assertThat(line(name, ".sem")).hasSize(1);
		assertThat(this.theirs.availablePermits(name, 5)).isEqualTo(1);
		this.mine.release(release(name, HoldKind.PERMIT, "mine:1"));
		assertThat(this.theirs.acquire(new AcquireRequest(name, "theirs:1", 0, LONG, QUEUE, "3", HoldKind.PERMIT, 5))
			.status()).as("idle: the new permits are taken").isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(this.mine.availablePermits(name, 2)).isEqualTo(4);
		this.theirs.release(release(name, HoldKind.PERMIT, "theirs:1"));
	}

	@Test
	void theSessionsEndReportsEverySharedHoldLostWithItsKind() throws Exception {
		List<HoldRef> lost = new CopyOnWriteArrayList<>();
		this.mine.onHoldsLost((holds, reason) -> lost.addAll(holds));
		assertThat(this.mine.acquire(request("ended", HoldKind.READ, "mine:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(this.mine.acquire(request("ended", HoldKind.PERMIT, "mine:1", "2", QUEUE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		this.clients.cutOff(this.mineCurator);
		await().atMost(Duration.ofSeconds(30)).until(() -> lost.size() == 2);
		assertThat(lost).extracting(HoldRef::name, HoldRef::owner, HoldRef::kind)
			.containsExactlyInAnyOrder(tuple("ended", "mine:1", HoldKind.READ), tuple("ended", "mine:1", HoldKind.PERMIT));
		// The ensemble deletes the session's nodes: another client's writer gets in.
		await().atMost(Duration.ofSeconds(30))
			.until(() -> this.theirs.acquire(request("ended", HoldKind.WRITE, "theirs:1", "1", Duration.ZERO)).status(),
					status -> status == Acquisition.Status.ACQUIRED);
	}

	/**
	 * Defect: a shared hold's release reads its node before it deletes it, and that read, meeting
	 * the session's expiry, made the release throw, where the delete meeting it answers that the hold
	 * is gone (so {@code unlock()} reports the hold lost, as it does for the exclusive lock).
	 */
	@Test
	void aSharedReleaseThatMeetsTheSessionsExpiryAnswersNotHeld() throws Exception {
		// A read hold: every shared kind is released on the same path (ZooKeeperSharedHolds#release).
		String name = "expires-at-release";
		assertThat(this.mine.acquire(request(name, HoldKind.READ, "mine:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		// Through the handle the release took, as the session ends: closed before the read.
		AtomicBoolean cut = this.clients.cutOffAt(this.mine, this.mineCurator, "delete-reading");

		assertThat(this.mine.release(release(name, HoldKind.READ, "mine:1"))).isEqualTo(Release.NOT_HELD);
		assertThat(cut).as("the session ended at delete-reading").isTrue();
		this.mine.hook = (point, lock) -> {
		};
		// The ensemble deletes the expired session's node: another client's writer gets in.
		await().atMost(Duration.ofSeconds(30))
			.until(() -> this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", Duration.ZERO)).status(),
					status -> status == Acquisition.Status.ACQUIRED);
	}

	/**
	 * Defect: a waiting read whose time ran out just as its session expired threw from leaving the
	 * line, instead of returning false: its node is the session's, and the ensemble deletes it.
	 */
	@Test
	void leavingTheLineAsTheSessionExpiresLeavesQuietly() throws Exception {
		String name = "expires-at-leave";
		assertThat(this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(this.mine.acquire(request(name, HoldKind.READ, "mine:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		// Through the handle the leaving took, as the session ends: closed before the line is read.
		AtomicBoolean cut = this.clients.cutOffAt(this.mine, this.mineCurator, "leave-checked");

		this.mine.leaveQueue(name, HoldKind.READ, "mine:1", "1", true);
		assertThat(cut).as("the session ended at leave-checked").isTrue();
		this.mine.hook = (point, lock) -> {
		};
		// The read's node went with the session: another writer of theirs gets in after the first.
		assertThat(this.theirs.release(release(name, HoldKind.WRITE, "theirs:1"))).isEqualTo(Release.RELEASED);
		await().atMost(Duration.ofSeconds(30))
			.until(() -> this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:2", "2", Duration.ZERO)).status(),
					status -> status == Acquisition.Status.ACQUIRED);
	}

	/**
	 * The session that made an attempt's node ends (reported lost) and Curator opens a new one while
	 * the node still stands on the server, waiting for the old session's expiry: the attempt's look at
	 * the line, through the new session, finds the node in front and takes a hold on it. That hold was
	 * not among those reported lost, and its node goes when the old session expires, letting another
	 * client's writer in while this one was told it holds. (The exclusive lock checks that its node is
	 * the current session's before it takes a hold.)
	 */
	@Test
	void aHoldIsNeverTakenOnANodeOfASessionAlreadyReportedLost() throws Exception {
		String name = "replaced-session";
		List<HoldRef> lost = new CopyOnWriteArrayList<>();
		java.util.concurrent.CountDownLatch lostReported = new java.util.concurrent.CountDownLatch(1);
		this.mine.onHoldsLost((holds, reason) -> {
			lost.addAll(holds);
			lostReported.countDown();
		});
		this.mine.hook = (point, lock) -> {
			if (point.equals("created-in-line") && lock.equals(name)) {
				this.mine.hook = (p, l) -> {
				};
				// The old session's node stands; the client gives the session up and opens another.
				this.clients.replaceSession(this.mineCurator);
				assertThat(lostReported.await(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
			}
		};
		Acquisition acquisition = this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", QUEUE));
		if (acquisition.status() == Acquisition.Status.ACQUIRED) {
			// The old session's end then lets another client's writer in.
			await().atMost(Duration.ofSeconds(30))
				.until(() -> this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", Duration.ZERO)).status(),
						status -> status == Acquisition.Status.ACQUIRED);
			assertThat(lost).as("a hold taken on the old session's node, never reported lost, while another writer holds")
				.extracting(HoldRef::name, HoldRef::kind)
				.contains(tuple(name, HoldKind.WRITE));
		}
	}

	/**
	 * The session is replaced after an attempt read its line through the old session's handle: the
	 * look's next call through that handle (here, the deletion of its node by a caller that may not
	 * wait) fails, and the attempt starts over on the new session rather than failing.
	 */
	@Test
	void aLookWhoseSessionIsReplacedMeanwhileStartsOverOnTheNewSession() throws Exception {
		String name = "replaced-during-look";
		assertThat(this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", Duration.ZERO)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		this.clients.replaceSessionAt(this.mine, this.mineCurator, "line-read");

		assertThat(this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", Duration.ZERO)).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);

		this.theirs.release(release(name, HoldKind.WRITE, "theirs:1"));
		// The old session's node stands until the ensemble expires that session.
		await().atMost(Duration.ofSeconds(30))
			.until(() -> this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "2", Duration.ZERO)).status(),
					status -> status == Acquisition.Status.ACQUIRED);
	}

	/**
	 * The session is replaced while an attempt's create is on its way, which Curator then sends through
	 * the new session: the node it made is the attempt's place, not a copy to delete and queue again
	 * behind.
	 */
	@Test
	void aCreateAnsweredThroughANewSessionKeepsItsPlace() throws Exception {
		String name = "created-through-new-session";
		assertThat(this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", Duration.ZERO)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		this.clients.replaceSessionAt(this.mine, this.mineCurator, "creating-in-line");

		assertThat(this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		List<String> inLine = line(name, ".rw");
		assertThat(inLine).hasSize(2);
		assertThat(ZooKeeperSharedHolds.Node.parse(inLine.get(1)).sequence())
			.as("the node of the attempt's one create, right behind the holder's")
			.isEqualTo(ZooKeeperSharedHolds.Node.parse(inLine.get(0)).sequence() + 1);

		this.theirs.release(release(name, HoldKind.WRITE, "theirs:1"));
		assertThat(this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(line(name, ".rw")).containsExactly(inLine.get(1));
	}

	/**
	 * The check after a hold is recorded meets a failure Curator queued in the background, which it
	 * hands to whoever asks for the session next, once: asked again, it answers, and the hold is kept.
	 * Before, the hold was forgotten on that one failure.
	 */
	@Test
	void aHoldWhoseSessionReadFailsOnceIsKept() throws Exception {
		String name = "session-read-fails-once";
		AtomicInteger failures = failSessionReadsAfterLineRead(name, 1);

		assertThat(this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", Duration.ZERO)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(failures).as("the failure was handed out").hasValue(0);
	}

	/**
	 * The check after a hold is recorded cannot read the session at all, and forgets the hold, though its
	 * node is the live session's. A call that may not wait has that node deleted: before, it stayed
	 * first in line and held the lock for as long as the session lived.
	 */
	@Test
	void aNodeWhoseHoldWasForgottenGoesIfItsCallMayNotWait() throws Exception {
		String name = "forgotten-no-wait";
		failSessionReadsAfterLineRead(name, UNREADABLE);

		assertThat(this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", Duration.ZERO)).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);

		await().atMost(Duration.ofSeconds(30)).until(() -> line(name, ".rw").isEmpty());
		assertThat(this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", Duration.ZERO)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
	}

	/**
	 * As above, for a call that waits: it keeps its node as its place and holds through it at its next
	 * look. Before, it queued again at the end of the line, behind a waiter that had come after it.
	 */
	@Test
	void aWaiterWhoseHoldWasForgottenKeepsItsPlace() throws Exception {
		String name = "forgotten-waiting";
		assertThat(this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", Duration.ZERO)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:2", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		List<String> inLine = line(name, ".rw");
		assertThat(inLine).hasSize(3);
		this.theirs.release(release(name, HoldKind.WRITE, "theirs:1"));
		AtomicInteger failures = failSessionReadsAfterLineRead(name, UNREADABLE);

		assertThat(this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", QUEUE)).status())
			.as("the hold forgotten")
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(failures).as("the session could not be read").hasValue(0);
		assertThat(this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(line(name, ".rw")).containsExactly(inLine.get(1), inLine.get(2));
	}

	/**
	 * The end of a session is handled between a hold's record and its check, while the session cannot
	 * be read, so every hold counts as lost, this one too, and its node is deleted. (In Curator the end
	 * reported is the replaced session's; here the handling is called for the live one, which leaves
	 * the same state.) The check forgets the hold: before, it found the session unchanged and answered
	 * the lock taken, on a node that was gone, and another client took the lock too.
	 */
	@Test
	void aHoldGivenUpBetweenItsRecordAndItsCheckIsNotTaken() throws Exception {
		String name = "given-up-before-check";
		AtomicBoolean handled = ZooKeeperTestClients.handleSessionEndUnreadableAt(this.mine, "line-read", name,
				(point, at) -> {
				});

		Acquisition taken = this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", Duration.ZERO));
		assertThat(handled).as("the session's end handled").isTrue();
		assertThat(taken.status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		await().atMost(Duration.ofSeconds(30))
			.until(() -> this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", Duration.ZERO)).status(),
					status -> status == Acquisition.Status.ACQUIRED);
	}

	/**
	 * As above, for a call that waits, with the deletion of the given-up hold's node held back: the
	 * waiter never holds through that node again. Before, it kept the node as its place and held
	 * through it at its next look, and the deletion then pulled the node from under its hold: another
	 * client took the lock too.
	 */
	@Test
	void aWaiterWhoseHoldWasGivenUpBeforeItsCheckDoesNotHoldThroughItsNode() throws Exception {
		String name = "given-up-waiting";
		Thread caller = Thread.currentThread();
		CountDownLatch deletionMayGo = new CountDownLatch(1);
		AtomicBoolean handled = ZooKeeperTestClients.handleSessionEndUnreadableAt(this.mine, "line-read", name, (point, at) -> {
			if (point.equals("delete-checked") && Thread.currentThread() != caller) {
				// The handling's deletion of the given-up hold's node, on the lease thread.
				deletionMayGo.await(30, TimeUnit.SECONDS);
			}
		});
		assertThat(this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(handled).as("the session's end handled").isTrue();

		Acquisition next = this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", QUEUE));
		deletionMayGo.countDown();
		this.mine.awaitBackgroundTasks();
		await().atMost(Duration.ofSeconds(30))
			.until(() -> next.status() == Acquisition.Status.ACQUIRED || this.mine
				.acquire(request(name, HoldKind.WRITE, "mine:1", "1", QUEUE))
				.status() == Acquisition.Status.ACQUIRED);
		assertThat(this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", Duration.ZERO)).status())
			.as("while this client holds")
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
	}

	/**
	 * The end of a session is handled while a waiter's check forgets its hold, the session unreadable to
	 * both; the waiter keeps the node as its place and holds through it again before the handling, which
	 * listed the holds before the check, goes on. That handling must not delete the node: the hold it
	 * listed was given up by the check, and the node is the new hold's (which it did not list). Before,
	 * it deleted the node, and another client took the lock too.
	 */
	@Test
	void theEndOfASessionDoesNotDeleteTheNodeOfAHoldGivenUpByItsCheck() throws Exception {
		String name = "forgotten-then-listed";
		Thread caller = Thread.currentThread();
		Thread handling = new Thread(() -> this.mine.connectionChanged(ConnectionState.LOST));
		CountDownLatch listed = new CountDownLatch(1);
		CountDownLatch handlingMayGoOn = new CountDownLatch(1);
		AtomicInteger callerFailures = new AtomicInteger(UNREADABLE);
		AtomicBoolean lineRead = new AtomicBoolean();
		this.mine.hook = (point, at) -> {
			if (point.equals("line-read") && at.equals(name)) {
				lineRead.set(true);
			}
			else if (point.equals("session-reading") && Thread.currentThread() == handling) {
				// The handling listed the holds, and now reads the live session, which fails.
				listed.countDown();
				handlingMayGoOn.await(30, TimeUnit.SECONDS);
				throw new IllegalStateException("Curator's queued background failure");
			}
			else if (point.equals("session-reading") && Thread.currentThread() == caller && lineRead.get()) {
				if (handling.getState() == Thread.State.NEW) {
					handling.start();
					assertThat(listed.await(30, TimeUnit.SECONDS)).isTrue();
				}
				if (callerFailures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
					throw new IllegalStateException("Curator's queued background failure");
				}
			}
		};
		assertThat(this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", QUEUE)).status())
			.as("the hold forgotten by its check")
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(this.mine.acquire(request(name, HoldKind.WRITE, "mine:1", "1", QUEUE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);

		handlingMayGoOn.countDown();
		handling.join(30_000);
		this.mine.awaitBackgroundTasks();
		assertThat(this.theirs.acquire(request(name, HoldKind.WRITE, "theirs:1", "1", Duration.ZERO)).status())
			.as("while this client holds")
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
	}

	/** Reads of the session that a handle of {@link ZooKeeperConnection} asks for all fail. */
	private static final int UNREADABLE = 3;

	/**
	 * The next {@code times} reads of the session, by the thread that read {@code name}'s line, fail.
	 * @return how many failures are left to hand out
	 */
	private AtomicInteger failSessionReadsAfterLineRead(String name, int times) {
		AtomicInteger left = new AtomicInteger(times);
		AtomicReference<Thread> reader = new AtomicReference<>();
		this.mine.hook = (point, at) -> {
			if (point.equals("line-read") && at.equals(name)) {
				reader.set(Thread.currentThread());
			}
			else if (point.equals("session-reading") && reader.get() == Thread.currentThread()
					&& left.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
				throw new IllegalStateException("Curator's queued background failure");
			}
		};
		return left;
	}

}
