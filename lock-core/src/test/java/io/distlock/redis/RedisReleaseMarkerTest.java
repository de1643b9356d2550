package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.data.redis.connection.DataType;

import io.distlock.DistLock;
import io.distlock.HoldKind;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.ReleaseRequest;
import io.distlock.testing.RedisServerExtension;

/**
 * The release marker, which lets a copy of a release re-sent after a reconnect know that it was
 * applied: the released hold itself, renamed, keeping the hold's expiry where the engine knows that
 * to be between 15 and 30 s, else living 15 s; and a marker of an earlier version (a string)
 * still recognised.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisReleaseMarkerTest {

	private static final Duration LEASE = Duration.ofSeconds(30);

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisServer);

	@Test
	void aWatchdogHoldBecomesItsOwnMarkerAndKeepsItsExpiry() {
		RedisLockRegistry registry = this.clients.registry(LEASE);
		DistLock lock = registry.getLock("renamed");
		lock.lock();
		lock.unlock();
		Set<String> markers = this.clients.template().keys("distlock:{renamed}:released:*");
		assertThat(markers).hasSize(1);
		String marker = markers.iterator().next();
		assertThat(this.clients.template().type(marker)).isEqualTo(DataType.HASH);
		assertThat(this.clients.template().opsForHash().hasKey(marker, ":attempt")).isTrue();
		// The watchdog's lease, taken a moment ago: more than the 15 s a marker needs, at most the lease.
		assertThat(this.clients.template().getExpire(marker, TimeUnit.MILLISECONDS)).isGreaterThan(15_000)
			.isLessThanOrEqualTo(LEASE.toMillis());
		assertThat(this.clients.template().hasKey("distlock:{renamed}")).isFalse();
	}

	/**
	 * Whatever the engine did with a hold (an explicit lease with less than 15 s left, re-entries with
	 * shorter and longer leases, a hold handed over and released before or after its new holder
	 * extended it), the marker it leaves lives at least 15 s: the client never vouches for more than
	 * Redis keeps.
	 */
	@Test
	void everyMarkerTheEngineLeavesLivesAtLeastFifteenSeconds() throws Exception {
		RedisLockRegistry registry = this.clients.registry(LEASE);
		DistLock explicit = registry.getLock("m-16");
		explicit.lock(Duration.ofSeconds(16));
		// Under 15 s left by the release, whatever the machine's speed: the marker is given 15 s.
		Thread.sleep(1_200);
		explicit.unlock();
		assertMarkerLivesFifteenSeconds("m-16");

		reenterAndRelease(registry.getLock("m-reenter-shorter"), Duration.ofSeconds(20), Duration.ofSeconds(2));
		assertMarkerLivesFifteenSeconds("m-reenter-shorter");
		reenterAndRelease(registry.getLock("m-reenter-longer"), Duration.ofSeconds(16), Duration.ofSeconds(25));
		assertMarkerLivesFifteenSeconds("m-reenter-longer");

		for (long holdFor : new long[] { 0, 1_500 }) {
			String name = "m-handoff-" + holdFor;
			DistLock first = registry.getLock(name);
			first.lock();
			CompletableFuture<Void> second = CompletableFuture.runAsync(() -> {
				DistLock lock = registry.getLock(name);
				lock.lock();
				try {
					Thread.sleep(holdFor);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				lock.unlock();
			});
			await().atMost(Duration.ofSeconds(10)).until(() -> this.clients.template().hasKey("distlock:{" + name + "}:queue"));
			first.unlock();
			second.get(30, TimeUnit.SECONDS);
			assertMarkersLiveFifteenSeconds(name, 2);
		}
	}

	@Test
	void aCopyOfAReleaseFindsTheRenamedHold() {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		assertThat(acquire(backend, "copy", "t-1").status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(backend.release(release("copy", "t-1", 29_000))).isEqualTo(Release.RELEASED);
		assertThat(this.clients.template().type("distlock:{copy}:released:a:1")).isEqualTo(DataType.HASH);
		assertThat(backend.release(release("copy", "t-1", 29_000))).as("the copy").isEqualTo(Release.RELEASED);
		// A later hold of the same owner that is gone without a release is still reported lost.
		assertThat(acquire(backend, "copy", "t-2").status()).isEqualTo(Acquisition.Status.ACQUIRED);
		this.clients.template().delete("distlock:{copy}");
		assertThat(backend.release(release("copy", "t-2", 29_000))).isEqualTo(Release.NOT_HELD);
		backend.close();
	}

	/**
	 * Where the hold's expiry is not known to be long enough (0: unknown, as Redlock's releases; a
	 * short explicit lease), or is longer than a marker is needed (a long explicit lease), the marker
	 * is given 15 s.
	 */
	@Test
	void aMarkerWhoseHoldHadTooLittleOrTooMuchLeftLivesFifteenSeconds() {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		long[] leftAndLease = { 0, 30_000, 4_000, 5_000, 44_000, 45_000, 119_000, 120_000 };
		for (int i = 0; i < leftAndLease.length; i += 2) {
			String name = "given-" + i;
			long lease = leftAndLease[i + 1];
			assertThat(backend.acquire(new AcquireRequest(name, "a:1", 0, Duration.ofMillis(lease), Duration.ZERO, "t"))
				.status()).isEqualTo(Acquisition.Status.ACQUIRED);
			assertThat(backend.release(release(name, "t", leftAndLease[i]))).isEqualTo(Release.RELEASED);
			String marker = "distlock:{" + name + "}:released:a:1";
			assertThat(this.clients.template().getExpire(marker, TimeUnit.MILLISECONDS)).as("%d ms left", leftAndLease[i])
				.isGreaterThan(10_000).isLessThanOrEqualTo(15_000);
			assertThat(backend.release(release(name, "t", leftAndLease[i]))).as("the copy").isEqualTo(Release.RELEASED);
		}
		backend.close();
	}

	/**
	 * An instance restarted with the same client id after an upgrade may find the marker its earlier
	 * version wrote, a string: a copy of that release is still recognised, and the new release
	 * replaces the marker.
	 */
	@Test
	void anEarlierVersionsStringMarkerIsStillRecognised() {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		this.clients.template().opsForValue().set("distlock:{earlier}:released:a:1", "t-old", Duration.ofSeconds(15));
		assertThat(backend.release(release("earlier", "t-old", 0))).as("the earlier version's copy")
			.isEqualTo(Release.RELEASED);
		assertThat(backend.release(release("earlier", "t-other", 0))).isEqualTo(Release.NOT_HELD);
		assertThat(acquire(backend, "earlier", "t-new").status()).isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(backend.release(release("earlier", "t-new", 29_000))).isEqualTo(Release.RELEASED);
		assertThat(this.clients.template().type("distlock:{earlier}:released:a:1")).isEqualTo(DataType.HASH);
		assertThat(backend.release(release("earlier", "t-new", 29_000))).as("the copy").isEqualTo(Release.RELEASED);
		backend.close();
	}

	private static void reenterAndRelease(DistLock lock, Duration lease, Duration reentryLease) {
		lock.lock(lease);
		lock.lock(reentryLease);
		lock.unlock();
		lock.unlock();
	}

	private void assertMarkerLivesFifteenSeconds(String name) {
		assertMarkersLiveFifteenSeconds(name, 1);
	}

	/** The lock's owners' markers: as many as its holders, each with at least 15 s to live. */
	private void assertMarkersLiveFifteenSeconds(String name, int holders) {
		Set<String> markers = this.clients.template().keys("distlock:{" + name + "}:released:*");
		assertThat(markers).as(name).hasSize(holders);
		for (String marker : markers) {
			assertThat(this.clients.template().getExpire(marker, TimeUnit.MILLISECONDS)).as(marker).isGreaterThan(14_500);
		}
	}

	private static Acquisition acquire(RedisLockBackend backend, String name, String ticket) {
		return backend.acquire(new AcquireRequest(name, "a:1", 0, LEASE, Duration.ZERO, ticket));
	}

	private static ReleaseRequest release(String name, String ticket, long leaseLeftMillis) {
		return new ReleaseRequest(name, "a:1", 1, ticket, Acquisition.NO_TOKEN, null, HoldKind.EXCLUSIVE,
				leaseLeftMillis);
	}

}
