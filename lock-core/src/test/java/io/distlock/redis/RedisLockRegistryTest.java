package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.types.RedisClientInfo;

import io.distlock.DistLock;
import io.distlock.LockLostException;
import io.distlock.LostHold;
import io.distlock.core.AcquireRequest;
import io.distlock.core.EngineProbe;
import io.distlock.core.LockEngineOptions;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.ReleaseRequest;
import io.distlock.testing.RedisServerExtension;

/**
 * What is particular to the Redis backend: its representation, idempotent scripts, bounded memory on
 * both sides, and the shared subscription connection.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisLockRegistryTest {

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisServer);

	@Test
	void lockIsAHashOfOwnerToHoldCountWithItsFencingToken() {
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(30));
		DistLock lock = registry.getLock("order:42");
		lock.lock();
		lock.lock();
		Map<Object, Object> hash = this.clients.redis().opsForHash().entries("distlock:{order:42}");
		String owner = registry.options().clientId() + ":" + Thread.currentThread().getId();
		// ':attempt' names the attempt that took the hold: only that attempt's release or clean-up may
		// give it back. No fencing token until the holder asks for one: most never do.
		assertThat(hash).containsEntry(owner, "2").containsKey(":attempt").hasSize(2);
		long token = lock.getFencingToken();
		assertThat(this.clients.redis().opsForHash().entries("distlock:{order:42}")).containsEntry(":token", Long.toString(token))
			.hasSize(3);
		assertThat(lock.getFencingToken()).as("asked again: the same token, not a new one").isEqualTo(token);
		assertThat(this.clients.redis().getExpire("distlock:{order:42}", TimeUnit.MILLISECONDS)).isBetween(20_000L, 30_000L);
		lock.unlock();
		lock.unlock();
		assertThat(this.clients.redis().hasKey("distlock:{order:42}")).isFalse();
	}

	/**
	 * Tokens are issued when a holder first asks: a hold that never asks leaves the fencing counter
	 * as it was, and a hold lost before it asks gets none (its token could be above the next holder's).
	 */
	@Test
	void aFencingTokenIsIssuedOnRequestAndNeverToAHoldThatIsGone() {
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(30));
		DistLock lock = registry.getLock("tokens");
		lock.lock();
		lock.unlock();
		assertThat(this.clients.redis().hasKey("distlock:fencing")).as("nobody asked for a token").isFalse();
		lock.lock();
		long token = lock.getFencingToken();
		assertThat(this.clients.redis().opsForValue().get("distlock:fencing")).isEqualTo(Long.toString(token));
		lock.unlock();

		lock.lock();
		this.clients.redis().delete("distlock:{tokens}");
		assertThatThrownBy(lock::getFencingToken).isInstanceOf(LockLostException.class);
		assertThat(this.clients.redis().opsForValue().get("distlock:fencing")).as("no token issued to a hold that is gone")
			.isEqualTo(Long.toString(token));
		assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);

		lock.lock();
		assertThat(lock.getFencingToken()).as("the next holder's token").isGreaterThan(token);
		lock.unlock();
	}

	/**
	 * A grace started by a client configured with one is served by every client, including one
	 * configured without (the counter is read on every first acquisition).
	 */
	@Test
	void aRestartGraceIsServedByClientsConfiguredWithoutOne() {
		// A grace longer than the server has been up: it runs from the server's start.
		RedisLockBackend withGrace = new RedisLockBackend(this.clients.connectionFactory(), "distlock", Duration.ofHours(1));
		RedisLockBackend withoutGrace = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		assertThat(this.clients.redis().hasKey("distlock:fencing")).isFalse();
		assertThat(withGrace.acquire(AcquireRequest.of("grace", "a:1", 0, Duration.ofSeconds(30))).status())
			.as("the counter is missing: the server may have lost its data").isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(withoutGrace.acquire(AcquireRequest.of("grace", "b:1", 0, Duration.ofSeconds(30))).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(withoutGrace.acquire(AcquireRequest.of("other", "b:1", 0, Duration.ofSeconds(30))).status())
			.isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		withGrace.close();
		withoutGrace.close();
	}

	/**
	 * An uncontended pair sends nothing nobody hears: no look in the queue (LPOP) and no message
	 * (PUBLISH) when nobody queued, and the restart grace's check reads its keys in one MGET. The
	 * commands Redis runs per pair, the two script calls included, are what BENCHMARKS.md reports.
	 */
	@Test
	void anUncontendedPairLooksInNoQueueAndPublishesNothing() {
		RedisLockRegistry withoutGrace = this.clients.registry(LockEngineOptions.builder().restartGrace(Duration.ZERO));
		RedisLockRegistry withGrace = this.clients.registry(LockEngineOptions.builder().restartGrace(Duration.ofMillis(1)));
		assertThat(commandsPerPair(withoutGrace.getLock("quiet"))).doesNotContainKeys("publish", "lpop")
			.containsEntry("evalsha", 2.0)
			.doesNotContainKeys("set", "del").containsEntry("rename", 1.0)
			.satisfies(commands -> assertThat(total(commands)).isEqualTo(8.0));
		// The grace's check adds TIME, LASTSAVE and one MGET; INFO replication at most every 100 ms.
		assertThat(commandsPerPair(withGrace.getLock("quiet-grace"))).doesNotContainKeys("publish", "lpop", "get")
			.containsEntry("mget", 1.0)
			.satisfies(commands -> assertThat(total(commands)).isLessThanOrEqualTo(10.5));
	}

	private Map<String, Double> commandsPerPair(DistLock lock) {
		for (int i = 0; i < 5; i++) {
			lock.lock();
			lock.unlock();
		}
		int pairs = 50;
		this.clients.redis().execute((RedisCallback<Object>) connection -> {
			connection.serverCommands().resetConfigStats();
			return null;
		});
		for (int i = 0; i < pairs; i++) {
			lock.lock();
			lock.unlock();
		}
		java.util.Properties stats = this.clients.redis()
			.execute((RedisCallback<java.util.Properties>) connection -> connection.serverCommands().info("commandstats"));
		Map<String, Double> perPair = new java.util.TreeMap<>();
		Pattern calls = Pattern.compile("calls=(\\d+)");
		stats.forEach((field, value) -> {
			String command = String.valueOf(field).replace("cmdstat_", "");
			Matcher matcher = calls.matcher(String.valueOf(value));
			if (!command.startsWith("config") && !command.startsWith("info") && matcher.find()) {
				perPair.put(command, Long.parseLong(matcher.group(1)) / (double) pairs);
			}
		});
		return perPair;
	}

	private static double total(Map<String, Double> commands) {
		return commands.values().stream().mapToDouble(Double::doubleValue).sum();
	}

	/**
	 * During a rolling upgrade a hold may have been handed over by an earlier distlock, which names
	 * the attempt ':ticket': its new holder can still release it and ask for its token.
	 */
	@Test
	void aHoldHandedOverByAnEarlierVersionCanBeReleased() {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		this.clients.redis().opsForHash().putAll("distlock:{legacy}", Map.of("c:1", "1", ":token", "42", ":ticket", "t7"));
		this.clients.redis().expire("distlock:{legacy}", Duration.ofSeconds(30));
		assertThat(backend.issueToken("legacy", "c:1", "t7")).isEqualTo(42);
		assertThat(backend.issueToken("legacy", "c:1", "t8")).as("another attempt's").isEqualTo(Acquisition.NO_TOKEN);
		assertThat(backend.release(new ReleaseRequest("legacy", "c:1", 1, "t8", Acquisition.NO_TOKEN, null)))
			.as("another attempt's").isEqualTo(Release.NOT_HELD);
		assertThat(backend.release(new ReleaseRequest("legacy", "c:1", 1, "t7", Acquisition.NO_TOKEN, null)))
			.isEqualTo(Release.RELEASED);
		assertThat(this.clients.redis().hasKey("distlock:{legacy}")).isFalse();
		backend.close();
	}

	@Test
	void reSentReleaseOfAReentrantHoldIsAppliedOnce() {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		assertThat(backend.acquire(AcquireRequest.of("resent", "c:1", 0, Duration.ofSeconds(30))).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(backend.acquire(AcquireRequest.of("resent", "c:1", 1, Duration.ofSeconds(30))).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);

		// The same release twice, as Lettuce re-sends a command after a reconnect.
		assertThat(backend.release(ReleaseRequest.of("resent", "c:1", 2))).isEqualTo(Release.DECREMENTED);
		assertThat(backend.release(ReleaseRequest.of("resent", "c:1", 2))).isEqualTo(Release.DECREMENTED);
		assertThat(this.clients.redis().opsForHash().get("distlock:{resent}", "c:1")).isEqualTo("1");
		assertThat(backend.isHeldBy("resent", "c:1")).isTrue();
		backend.close();
	}

	@Test
	void reSentAcquisitionCountsOnce() {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		long token = backend.acquire(AcquireRequest.of("resent", "c:1", 0, Duration.ofSeconds(30))).token();
		assertThat(backend.acquire(AcquireRequest.of("resent", "c:1", 0, Duration.ofSeconds(30))).token()).isEqualTo(token);
		backend.acquire(AcquireRequest.of("resent", "c:1", 1, Duration.ofSeconds(30)));
		backend.acquire(AcquireRequest.of("resent", "c:1", 1, Duration.ofSeconds(30)));
		assertThat(this.clients.redis().opsForHash().get("distlock:{resent}", "c:1")).isEqualTo("2");
		assertThat(backend.release(ReleaseRequest.of("resent", "c:1", 2))).isEqualTo(Release.DECREMENTED);
		assertThat(backend.release(ReleaseRequest.of("resent", "c:1", 1))).isEqualTo(Release.RELEASED);
		backend.close();
	}

	@Test
	void abandoningAnOldAttemptCannotDeleteTheHoldANewerAttemptTookOver() {
		RedisNode node = new RedisNode(this.clients.connectionFactory(), "distlock", Duration.ZERO);
		node.acquire("attempts", "c:1", 0, Duration.ofSeconds(30), "attempt-1");
		// The owner's next attempt finds its leftover hold before the undo of the first arrives.
		assertThat(node.acquire("attempts", "c:1", 0, Duration.ofSeconds(30), "attempt-2").status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(node.abandon("attempts", "c:1", "attempt-1")).isFalse();
		assertThat(node.isHeldBy("attempts", "c:1")).isTrue();

		assertThat(node.abandon("attempts", "c:1", "attempt-2")).isTrue();
		assertThat(node.isHeldBy("attempts", "c:1")).isFalse();
		node.close();
	}

	@Test
	void aLateReleaseOfAnOldHoldCannotFreeTheHoldTheOwnersNextAttemptTookOver() {
		// Redlock returns from a release once a majority answered; the rest may reach a node after the
		// same thread's next acquisition there. Deleting that hold would let another client in.
		RedisNode node = new RedisNode(this.clients.connectionFactory(), "distlock", Duration.ZERO);
		node.acquire("late-release", "c:1", 0, Duration.ofSeconds(30), "attempt-1");
		assertThat(node.acquire("late-release", "c:1", 0, Duration.ofSeconds(30), "attempt-2").attemptId())
			.isEqualTo("attempt-2");
		assertThat(node.release("late-release", "c:1", 1, "attempt-1")).isEqualTo(Release.NOT_HELD);
		assertThat(node.isHeldBy("late-release", "c:1")).isTrue();

		assertThat(node.release("late-release", "c:1", 1, "attempt-2")).isEqualTo(Release.RELEASED);
		assertThat(node.isHeldBy("late-release", "c:1")).isFalse();
		node.close();
	}

	@Test
	void scriptsRunStraightOnTheSharedLettuceConnectionAndSurviveAScriptFlush() {
		RedisLockBackend backend = new RedisLockBackend(this.clients.connectionFactory(), "distlock");
		assertThat(backend.acquire(AcquireRequest.of("direct", "c:1", 0, Duration.ofSeconds(30))).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		assertThat(backend.calls().asyncReady()).as("not through the template").isTrue();
		redisServer.server().command("SCRIPT", "FLUSH");
		assertThat(backend.release(ReleaseRequest.of("direct", "c:1", 1))).isEqualTo(Release.RELEASED);
		assertThat(backend.isHeldBy("direct", "c:1")).isFalse();
		backend.close();
	}

	@Test
	void twentyThousandOneOffNamesLeaveNothingBehind() {
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(30));
		long lastToken = 0;
		for (int i = 0; i < 20_000; i++) {
			DistLock lock = registry.getLock("one-off:" + i);
			lock.lock();
			lastToken = lock.getFencingToken();
			lock.unlock();
		}
		// Only the fencing counter remains in Redis once the release markers lapse (with the lease, 30 s), and no
		// per-name state in the client.
		await().atMost(Duration.ofSeconds(45))
			.until(() -> this.clients.redis().execute((RedisCallback<Long>) connection -> connection.serverCommands().dbSize()),
					size -> size == 1L);
		assertThat(this.clients.redis().opsForValue().get("distlock:fencing")).isEqualTo(Long.toString(lastToken));
		assertThat(registry.heldLocks()).isEmpty();
		assertThat(EngineProbe.waitingLockNames(registry)).isZero();
	}

	@Test
	void waitersOfManyDistinctLocksShareOneSubscriptionConnection() throws Exception {
		int names = 200;
		RedisLockRegistry holder = this.clients.registry(Duration.ofSeconds(30));
		RedisLockRegistry waiter = this.clients.registry(Duration.ofSeconds(30));
		List<DistLock> held = new ArrayList<>();
		for (int i = 0; i < names; i++) {
			DistLock lock = holder.getLock("many:" + i);
			lock.lock();
			held.add(lock);
		}
		ExecutorService threads = Executors.newFixedThreadPool(names);
		try {
			CountDownLatch started = new CountDownLatch(names);
			List<Future<Boolean>> outcomes = new ArrayList<>();
			for (int i = 0; i < names; i++) {
				String name = "many:" + i;
				outcomes.add(threads.submit(() -> {
					started.countDown();
					DistLock lock = waiter.getLock(name);
					boolean acquired = lock.tryLock(Duration.ofSeconds(25));
					if (acquired) {
						lock.unlock();
					}
					return acquired;
				}));
			}
			started.await();
			await().atMost(Duration.ofSeconds(20)).until(() -> EngineProbe.waitingLockNames(waiter) == names);
			// Rooms subscribe in the background, one after another: counted once every lock's channel is
			// subscribed (the count was once taken before the first SUBSCRIBE had landed, on a loaded machine).
			await().atMost(Duration.ofSeconds(20)).until(() -> subscribedChannels() >= names);
			assertThat(pubSubConnections()).isEqualTo(1);

			long releasing = System.nanoTime();
			held.forEach(DistLock::unlock);
			for (Future<Boolean> outcome : outcomes) {
				assertThat(outcome.get(20, TimeUnit.SECONDS)).isTrue();
			}
			// Under the 30 s TTL the waiters would otherwise sleep for, with room for a loaded machine.
			assertThat(Duration.ofNanos(System.nanoTime() - releasing)).isLessThan(Duration.ofSeconds(20));
			assertThat(EngineProbe.waitingLockNames(waiter)).isZero();
		}
		finally {
			threads.shutdownNow();
		}
	}

	@Test
	void watchdogReportsAHoldDeletedBehindItsBack() throws Exception {
		List<LostHold> lost = new CopyOnWriteArrayList<>();
		RedisLockRegistry registry = this.clients.registry(Duration.ofMillis(300), lost::add);
		DistLock lock = registry.getLock("deleted");
		lock.lock();
		this.clients.redis().delete("distlock:{deleted}");

		await().atMost(Duration.ofSeconds(5)).until(() -> !lost.isEmpty());
		assertThat(lost.get(0).lockName()).isEqualTo("deleted");
		assertThat(lost.get(0).reason()).contains("no longer held");
		assertThat(registry.heldLocks()).singleElement().satisfies(hold -> assertThat(hold.lost()).isTrue());
		assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class).hasMessageContaining("'deleted'");
		assertThat(registry.heldLocks()).isEmpty();
	}

	/** @return how many channels the server's clients are subscribed to, over all of them */
	private static long subscribedChannels() {
		Matcher subscriptions = Pattern.compile("\\bsub=(\\d+)").matcher(redisServer.server().query("CLIENT", "LIST"));
		long channels = 0;
		while (subscriptions.find()) {
			channels += Long.parseLong(subscriptions.group(1));
		}
		return channels;
	}

	private long pubSubConnections() {
		List<RedisClientInfo> clientInfos = this.clients.redis().execute((RedisCallback<List<RedisClientInfo>>) connection -> connection
			.serverCommands().getClientList());
		return clientInfos.stream().filter(info -> info.getFlags() != null && info.getFlags().contains("P")).count();
	}

}
