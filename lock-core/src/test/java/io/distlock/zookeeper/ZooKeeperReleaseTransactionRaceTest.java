package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.LockNotice;
import io.distlock.core.ReleaseRequest;

/**
 * Interleavings around the release that deletes the lock's node and the holder's place in one
 * transaction ({@link ZooKeeperDeletions.Companion}), forced through the backend's hooks against one
 * real ZooKeeper server. Every wait is on a latch or on the server's state, never a sleep.
 */
class ZooKeeperReleaseTransactionRaceTest {

	private static final Duration LONG = Duration.ofMinutes(1);

	@RegisterExtension
	static final ZooKeeperServerExtension zooKeeper = new ZooKeeperServerExtension();

	@RegisterExtension
	final ZooKeeperClientsExtension zk = new ZooKeeperClientsExtension(zooKeeper, "/distlock-release-multi");

	private static AcquireRequest waiting(String name, String owner, String ticket) {
		return new AcquireRequest(name, owner, 0, LONG, LockBackend.QUEUE_PLACE, ticket);
	}

	/**
	 * Two owners of one client take the lock in turn through the line. The first one's release
	 * deletes its node and its place in one transaction; the second owner, woken by it, takes the
	 * lock through its own place before the first release has done with the line (forced here at
	 * the hook between the delete and {@code holdEnded}). That {@code holdEnded} must not take the
	 * second owner's place out of the client's books: else the second release deletes the lock's
	 * node alone, the place stays in line for the session's life, and the other client's waiter,
	 * whose watch is on that place, is never woken by the release (it waits for the place to lapse).
	 * (Before the transaction, {@code holdEnded} deleted whatever place it took out, which woke that
	 * waiter early but never lost it.)
	 */
	@Test
	void aReleaseEndingAfterTheNextHoldOfItsClientLeavesThatHoldsPlaceToItsRelease() throws Exception {
		ZooKeeperLockBackend other = this.zk.backend();
		ZooKeeperLockBackend mine = this.zk.backend();
		ZooKeeperLockBackend third = this.zk.backend();
		assertThat(other.acquire(AcquireRequest.of("q", "owner-o", 0, LONG)).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		// owner-1 of mine joins the line, and takes the lock through its place once other lets go.
		assertThat(mine.acquire(waiting("q", "owner-1", "1")).status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(other.release(ReleaseRequest.of("q", "owner-o", 1))).isEqualTo(Release.RELEASED);
		assertThat(mine.acquire(waiting("q", "owner-1", "1")).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		// owner-2 of mine waits behind it with a place of its own, the third client behind that.
		assertThat(mine.acquire(waiting("q", "owner-2", "2")).status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		CountDownLatch woken = new CountDownLatch(1);
		AutoCloseable subscription = third.subscribe("q", null, notice -> {
			if (notice == LockNotice.RELEASED) {
				woken.countDown();
			}
		});
		assertThat(third.acquire(waiting("q", "owner-3", "3")).status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		List<String> line = this.zk.line("q");
		assertThat(line).as("owner-1's place (held), owner-2's, the third client's").hasSize(3);
		String thirdsPlace = line.get(2);

		// owner-2 takes the lock right after owner-1's transaction, before owner-1's release is done.
		AtomicReference<Acquisition> second = new AtomicReference<>();
		mine.hook = (point, name) -> {
			if (point.equals("release-deleted") && second.get() == null) {
				second.set(mine.acquire(waiting("q", "owner-2", "2")));
			}
		};
		assertThat(mine.release(ReleaseRequest.of("q", "owner-1", 1))).isEqualTo(Release.RELEASED);
		assertThat(second.get().status()).isEqualTo(Acquisition.Status.ACQUIRED);
		mine.hook = (point, name) -> {
		};
		assertThat(this.zk.line("q")).as("owner-2's place, which it holds through, and the third's").hasSize(2);

		assertThat(mine.release(ReleaseRequest.of("q", "owner-2", 1))).isEqualTo(Release.RELEASED);
		// The place goes with owner-2's release, which wakes the waiter behind it.
		await().atMost(Duration.ofSeconds(10)).untilAsserted(
				() -> assertThat(this.zk.line("q")).as("owner-2's place goes with its release").containsExactly(thirdsPlace));
		assertThat(woken.await(10, TimeUnit.SECONDS)).as("the waiter behind owner-2's place is woken").isTrue();
		assertThat(third.acquire(waiting("q", "owner-3", "3")).status()).isEqualTo(Acquisition.Status.ACQUIRED);
		subscription.close();
	}

}
