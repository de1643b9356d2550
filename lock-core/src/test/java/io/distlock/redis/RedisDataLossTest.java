package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.LockListener;
import io.distlock.LockNotAcquiredException;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.LockEngineOptions;
import io.distlock.core.ReleaseRequest;
import io.distlock.testing.RedisServerExtension;

/**
 * A Redis that lost its data lets no new holder in before the holders it forgot have been told, and
 * the tokens it hands out afterwards are still larger than any before.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisDataLossTest {

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	private static final Duration LEASE = Duration.ofSeconds(2);

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisServer);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void tearDown() throws Exception {
		this.threads.shutdownNow();
	}

	@Test
	void aRestartedServerLetsNoNewHolderInBeforeTheForgottenHolderIsTold() throws Exception {
		noNewHolderBeforeTheOldOneIsTold("restarted", () -> redisServer.server().restart());
	}

	@Test
	void aFlushedServerLetsNoNewHolderInBeforeTheForgottenHolderIsTold() throws Exception {
		noNewHolderBeforeTheOldOneIsTold("flushed", () -> redisServer.server().command("FLUSHALL"));
	}

	/**
	 * RDB snapshots are Redis's default persistence: a hold taken after the last save is gone after a
	 * crash and a restart from the snapshot, while the fencing counter comes back with it.
	 */
	@Test
	void aServerRestartedFromASnapshotLetsNoNewHolderInBeforeTheForgottenHolderIsTold() throws Exception {
		noNewHolderBeforeTheOldOneIsTold("snapshot", () -> redisServer.server().restartFromSnapshot());
	}

	@Test
	void aServerUpLongerThanTheGraceAdmitsItsFirstHolderAtOnce() throws Exception {
		redisServer.server().restart();
		// Up for longer than the grace, and no lock was ever taken on it.
		await().atMost(Duration.ofSeconds(30)).until(() -> uptimeSeconds() * 1000 > LEASE.toMillis() + 1000);
		DistLock lock = registry().getLock("fresh");
		assertThat(lock.tryLock(Duration.ZERO)).isTrue();
		lock.unlock();
	}

	@Test
	void aServerThatStartedWithinTheGraceServesOnlyWhatIsLeftOfIt() throws Exception {
		Duration grace = Duration.ofSeconds(6);
		redisServer.server().restart();
		long restartedAt = System.nanoTime();
		// Two thirds of the grace are over before the first acquisition.
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
			.until(() -> System.nanoTime() - restartedAt > grace.toNanos() * 2 / 3);
		DistLock lock = this.clients.registry(LockEngineOptions.builder().watchdogTimeout(LEASE).restartGrace(grace))
			.getLock("recent");
		assertThat(lock.tryLock(Duration.ofSeconds(30))).isTrue();
		long acquiredAt = System.nanoTime();
		lock.unlock();
		// Counted from the restart (its uptime is whole seconds, rounded against the new holder), not
		// from the first acquisition, which would end it at 10 s.
		assertThat(Duration.ofNanos(acquiredAt - restartedAt)).as("waited from the restart")
			.isGreaterThan(grace.minusSeconds(1))
			.isLessThan(grace.plusMillis(2500));
	}

	@Test
	void aCallRefusedByTheGraceSaysSoAndWhenItEnds() throws Exception {
		redisServer.server().restart();
		// A grace of 5 s and a wait of 1 s: the first call after the restart connects and loads the
		// script, which took longer than a wait of 200 ms on a loaded machine ("did not answer within
		// the wait"), yet it must end within the grace to be refused by it.
		RedisLockRegistry registry = this.clients
			.registry(LockEngineOptions.builder().watchdogTimeout(LEASE).restartGrace(Duration.ofSeconds(5)));
		assertThatThrownBy(() -> registry.executeLocked("refused", Duration.ofSeconds(1), () -> "not run"))
			.isInstanceOfSatisfying(LockNotAcquiredException.class,
					refused -> assertThat(refused.getRestartGraceEnds()).isPresent())
			.hasMessageContaining("restart grace until")
			.hasMessageContaining("distlock.restart-grace")
			.hasMessageNotContaining("another holder");
		assertThat(registry.restartGraceEnds()).isPresent();
		// Once it is over the registry says nothing of it, and the lock is taken.
		assertThat(registry.executeLocked("refused", Duration.ofSeconds(10), () -> "run")).isEqualTo("run");
		assertThat(registry.restartGraceEnds()).isEmpty();
	}

	/**
	 * A snapshot taken during a grace restores its marker: a later restart from it must serve a grace
	 * of its own, not take the old marker's end for the end of it.
	 */
	@Test
	void aSnapshotTakenDuringAGraceDoesNotEndTheGraceOfALaterRestart() throws Exception {
		redisServer.server().restart();
		RedisLockBackend first = backend(LEASE);
		assertThat(first.acquire(AcquireRequest.of("during", "a:1", 0, LEASE)).restartGrace())
			.as("in the grace of the restart").isTrue();
		redisServer.server().command("SAVE");
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
			.until(() -> first.acquire(AcquireRequest.of("over", "a:1", 0, LEASE)).status() == Acquisition.Status.ACQUIRED);
		// Taken after the save: the restart from it forgets this hold, whose holder is not told yet.
		assertThat(first.acquire(AcquireRequest.of("forgotten", "a:1", 0, Duration.ofSeconds(30))).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		redisServer.server().restartFromSnapshot();
		RedisLockBackend second = backend(LEASE);
		Acquisition refused = await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
			.until(() -> second.acquire(AcquireRequest.of("forgotten", "b:1", 0, LEASE)), reply -> reply != null);
		assertThat(refused.status()).as("another client right after the restart").isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(refused.restartGrace()).isTrue();
		first.close();
		second.close();
	}

	/**
	 * A hold restored from a snapshot after its owner released it is not that owner's to take up
	 * during the grace, nor with its old token: it is a new hold for a new attempt.
	 */
	@Test
	void anOwnersHoldRestoredFromASnapshotIsANewHoldForItsNextAttempt() throws Exception {
		redisServer.server().restart();
		RedisLockBackend owner = backend(Duration.ZERO);
		RedisLockBackend other = backend(Duration.ZERO);
		Duration lease = Duration.ofSeconds(30);
		assertThat(owner.acquire(new AcquireRequest("restored", "a:1", 0, lease, Duration.ZERO, "t1")).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		long ownerToken = owner.issueToken("restored", "a:1", "t1");
		redisServer.server().command("SAVE");
		assertThat(owner.release(new ReleaseRequest("restored", "a:1", 1, "t1", Acquisition.NO_TOKEN, null)))
			.isEqualTo(Release.RELEASED);
		assertThat(other.acquire(new AcquireRequest("restored", "b:1", 0, lease, Duration.ZERO, "u1")).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		long otherToken = other.issueToken("restored", "b:1", "u1");
		assertThat(otherToken).isGreaterThan(ownerToken);
		redisServer.server().restartFromSnapshot();
		RedisLockBackend withGrace = backend(LEASE);
		Acquisition again = await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
			.until(() -> withGrace.acquire(new AcquireRequest("restored", "a:1", 0, lease, Duration.ZERO, "t2")),
					reply -> reply != null);
		assertThat(again.status()).as("the old owner's next attempt, in the grace").isEqualTo(Acquisition.Status.HELD_BY_OTHER);
		assertThat(again.restartGrace()).isTrue();
		Acquisition later = await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
			.until(() -> withGrace.acquire(new AcquireRequest("restored", "a:1", 0, lease, Duration.ZERO, "t3")),
					reply -> reply.status() == Acquisition.Status.ACQUIRED);
		assertThat(later.token()).as("no old token").isEqualTo(Acquisition.TOKEN_ON_REQUEST);
		assertThat(withGrace.issueToken("restored", "a:1", "t3")).as("a new token, above the other holder's").isGreaterThan(otherToken);
		owner.close();
		other.close();
		withGrace.close();
	}

	private RedisLockBackend backend(Duration grace) {
		return new RedisLockBackend(this.clients.connectionFactory(), "distlock", grace);
	}

	private static long uptimeSeconds() {
		Matcher uptime = Pattern.compile("uptime_in_seconds:(\\d+)").matcher(redisServer.server().query("INFO", "server"));
		return uptime.find() ? Long.parseLong(uptime.group(1)) : 0;
	}

	private void noNewHolderBeforeTheOldOneIsTold(String name, Runnable dataLoss) throws Exception {
		List<Long> toldAt = new CopyOnWriteArrayList<>();
		DistLock first = registry(lost -> toldAt.add(System.nanoTime())).getLock(name);
		RedisLockRegistry secondClient = registry();
		DistLock second = secondClient.getLock(name);
		// Both instances have held locks on this server before (a brand-new instance cannot tell a
		// flushed server from one never used: see acquire.lua's startOrServeGrace).
		DistLock before = secondClient.getLock(name + "-before");
		assertThat(before.tryLock(Duration.ofSeconds(10))).isTrue();
		before.unlock();
		// A snapshot taken before the hold: the hold is not in it, the fencing counter is.
		redisServer.server().command("SAVE");
		first.lock();
		long firstToken = first.getFencingToken();

		long lossAt = System.nanoTime();
		dataLoss.run();
		Future<Long> secondAcquired = this.threads.submit(() -> {
			await().atMost(Duration.ofSeconds(30)).pollInSameThread().ignoreExceptions()
				.until(() -> second.tryLock(Duration.ofSeconds(10)));
			long at = System.nanoTime();
			second.unlock();
			return at;
		});
		long acquiredAt = secondAcquired.get(60, TimeUnit.SECONDS);

		assertThat(toldAt).as("the forgotten holder was told").isNotEmpty();
		assertThat(toldAt.get(0)).as("told before anyone else got in").isLessThan(acquiredAt);
		// What the grace costs: the lock is unavailable for about one grace after the loss.
		assertThat(Duration.ofNanos(acquiredAt - lossAt)).isLessThan(LEASE.plus(Duration.ofSeconds(10)));
		DistLock third = registry().getLock(name);
		assertThat(third.tryLock(Duration.ofSeconds(5))).isTrue();
		assertThat(third.getFencingToken()).as("tokens never go back").isGreaterThan(firstToken);
		third.unlock();
	}

	private RedisLockRegistry registry(LockListener... listeners) {
		return this.clients.registry(LockEngineOptions.builder().watchdogTimeout(LEASE).restartGrace(LEASE), listeners);
	}

}
