package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.script.RedisScript;

import io.distlock.DistLock;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.ReleaseRequest;
import io.distlock.testing.RedisServerExtension;

/**
 * A release of a hold nobody queued for skips the queue (field ':q' of the lock's hash): where a
 * waiter is queued, its hold must still reach it, including across a rolling upgrade, a restored hold,
 * Redlock's wake-everyone releases and a client without a restart grace.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisQuietReleaseTest {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration QUEUE_FOR = Duration.ofSeconds(10);

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisServer);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void tearDown() {
		this.threads.shutdownNow();
	}

	/**
	 * Rolling upgrade: an instance not upgraded yet releases and hands the lock to an upgraded waiter,
	 * writing the new hold without ':q'. A second upgraded waiter queued behind it (it marked the hold
	 * it queued for, which that hand-off replaced) must get the lock from the new holder's release, not
	 * only when it calls again.
	 */
	@Test
	void aHoldHandedOverByAnEarlierVersionIsHandedOnToTheWaiterQueuedBehindIt() throws Exception {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		assertThat(backend.acquire(AcquireRequest.of("upgrade", "old:1", 0, LEASE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(backend.acquire(new AcquireRequest("upgrade", "a:1", 0, LEASE, QUEUE_FOR, "ta")).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(backend.acquire(new AcquireRequest("upgrade", "b:1", 0, LEASE, QUEUE_FOR, "tb")).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);

		// The earlier version's release.lua, as the instance not upgraded yet runs it.
		Long released = this.clients.redis().execute(earlierRelease(),
				new RedisKeys("distlock", false).releaseKeys("upgrade", "old:1"),
				"old:1", "1", "", "", "4000", "distlock:grants:", "0", "");
		assertThat(released).isEqualTo(1L);
		assertThat(backend.isHeldBy("upgrade", "a:1")).as("handed to the first waiter").isTrue();

		// The upgraded waiter takes the hand-off up and releases it.
		assertThat(backend.acquire(new AcquireRequest("upgrade", "a:1", 0, LEASE, QUEUE_FOR, "ta")).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(backend.release(new ReleaseRequest("upgrade", "a:1", 1, "ta", Acquisition.NO_TOKEN, null)))
			.isEqualTo(Release.RELEASED);
		assertThat(backend.isHeldBy("upgrade", "b:1")).as("handed on to the waiter queued behind").isTrue();
		backend.close();
	}

	/**
	 * The documented cost of a hold that nobody marked (restored from a snapshot): its release leaves
	 * the waiter queued, and the waiter gets the lock when it calls again.
	 */
	@Test
	void aRestoredHoldsWaiterGetsTheLockWhenItCallsAgain() {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		assertThat(backend.acquire(AcquireRequest.of("restored", "a:1", 0, LEASE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(backend.acquire(new AcquireRequest("restored", "b:1", 0, LEASE, QUEUE_FOR, "tb")).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		this.clients.redis().opsForHash().delete("distlock:{restored}", ":q");
		assertThat(backend.release(ReleaseRequest.of("restored", "a:1", 1))).isEqualTo(Release.RELEASED);
		assertThat(backend.acquire(AcquireRequest.of("restored", "c:1", 0, LEASE)).status())
			.as("nobody barges past the waiter").isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(backend.acquire(new AcquireRequest("restored", "b:1", 0, LEASE, QUEUE_FOR, "tb")).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		backend.close();
	}

	/** Redlock's waiters do not queue: its release of an unmarked hold still announces it. */
	@Test
	void aRedlockReleaseOfAnUnmarkedHoldIsStillAnnounced() {
		RedisNode node = new RedisNode(this.clients.connectionFactory(), "distlock", Duration.ZERO);
		assertThat(node.acquire("redlock", "a:1", 0, LEASE, "attempt-1").status()).isEqualTo(Acquisition.Status.ACQUIRED);
		long before = calls("publish");
		assertThat(node.release("redlock", "a:1", 1, "attempt-1")).isEqualTo(Release.RELEASED);
		assertThat(calls("publish")).isEqualTo(before + 1);
		node.close();
	}

	/**
	 * A client without a restart grace sends acquire.lua four keys; it still serves a grace another
	 * client marked on the fencing counter.
	 */
	@Test
	void aClientWithoutAGraceServesTheGraceAnotherMarked() {
		RedisLockBackend withoutGrace = new RedisLockBackend(this.clients.connectionFactory(), "distlock", Duration.ZERO);
		long until = System.currentTimeMillis() + 60_000;
		this.clients.redis().opsForValue().set("distlock:fencing", "grace:" + until);
		Acquisition refused = withoutGrace.acquire(AcquireRequest.of("marked", "a:1", 0, LEASE));
		assertThat(refused.status()).isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(refused.restartGrace()).isTrue();
		this.clients.redis().delete("distlock:fencing");
		assertThat(withoutGrace.acquire(AcquireRequest.of("marked", "a:1", 0, LEASE)).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		withoutGrace.close();
	}

	private static RedisScript<Long> earlierRelease() {
		try {
			return RedisScript.of(new ClassPathResource("earlier-version/release.lua")
				.getContentAsString(StandardCharsets.UTF_8), Long.class);
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

	private long calls(String command) {
		Properties stats = this.clients.redis()
			.execute((RedisCallback<Properties>) connection -> connection.serverCommands().info("commandstats"));
		Matcher calls = Pattern.compile("calls=(\\d+)").matcher(String.valueOf(stats.get("cmdstat_" + command)));
		return calls.find() ? Long.parseLong(calls.group(1)) : 0;
	}

}
