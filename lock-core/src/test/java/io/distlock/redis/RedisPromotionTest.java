package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisSentinelGroup;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.ClosedAfterEach;

/**
 * Replication is asynchronous: a replica that Sentinel promotes may have missed the holds its master
 * granted last, and their holders learn of it only at their next renewal. The promoted replica serves
 * the restart grace, so that no new holder enters before then, whether the client asking ran across
 * the failover or connected after it; a master that restarted (with a replica, so that it keeps its
 * former replication id) is not taken for a promoted replica.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RedisPromotionTest {

	/** Also the watchdog lease: a holder is told of a lost hold within it. */
	private static final Duration GRACE = Duration.ofSeconds(4);

	private static final Pattern UPTIME = Pattern.compile("uptime_in_seconds:(\\d+)");

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	@Test
	void aPromotedReplicaServesTheRestartGraceToClientsThatRanAcrossTheFailoverAndToNewOnes()
			throws InterruptedException {
		RedisSentinelGroup group = RedisSentinelGroup.start();
		this.opened.add(group);
		RedisServerProcess master = group.master();
		RedisServerProcess replica = group.dataNodes().stream().filter(node -> node != master).findFirst().orElseThrow();

		// A master that started within the grace serves the rest of it: the first hold waits for that.
		RedisLockRegistry running = sentinelClient(group);
		DistLock first = running.getLock("before-the-failover");
		assertThat(first.tryLock(GRACE.plusSeconds(10))).isTrue();
		first.unlock();
		DistLock second = sentinelClient(group).getLock("another-client");
		assertThat(second.tryLock(Duration.ZERO)).as("checking the same master again serves no grace").isTrue();
		second.unlock();

		// Without the promotion check, a replica up longer than the grace would admit a new holder at once.
		await().atMost(GRACE.plusSeconds(20)).until(() -> uptimeSeconds(replica) > GRACE.toSeconds());
		assertThat(master.command("WAIT", "1", "5000")).as("the replica has the master's writes").isEqualTo(":1");
		master.kill();
		assertThat(group.awaitNewMaster(master, Duration.ofSeconds(30))).isSameAs(replica);
		// A client that ran across the failover answers once it has found the new master (its
		// reconnects back off); asking it a question that takes no lock starts no grace.
		DistLock probe = running.getLock("probe");
		await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> !probe.isLocked());

		DistLock acrossTheFailover = running.getLock("after-the-failover");
		assertThat(acrossTheFailover.tryLock(Duration.ZERO)).as("a new holder on the promoted replica, at once, "
				+ "asked by a client that ran across the failover").isFalse();
		assertThat(running.restartGraceEnds()).as("the refusal names the restart grace").isPresent();
		RedisLockRegistry connectedAfter = sentinelClient(group);
		DistLock fresh = connectedAfter.getLock("after-the-failover-too");
		assertThat(fresh.tryLock(Duration.ZERO)).as("the same, asked by a client connected after it").isFalse();
		assertThat(connectedAfter.restartGraceEnds()).isPresent();

		assertThat(fresh.tryLock(GRACE.plusSeconds(10))).as("a new holder once the grace is over").isTrue();
		fresh.unlock();
	}

	@Test
	void aRestartedMasterThatKeepsItsReplicationIdForItsReplicaIsNotTakenForAPromotedOne() throws InterruptedException {
		RedisServerProcess master = this.opened.add(RedisServerProcess.start("--repl-diskless-sync-delay", "0"));
		RedisServerProcess replica = this.opened.add(RedisServerProcess.start("--repl-diskless-sync-delay", "0",
				"--replicaof", master.host(), Integer.toString(master.port())));
		await().atMost(Duration.ofSeconds(20))
			.until(() -> replica.query("INFO", "replication").contains("master_link_status:up"));
		RedisLockRegistry client = this.opened.add(new RedisTestClients(master)).registry(
				LockEngineOptions.builder().watchdogTimeout(GRACE).restartGrace(GRACE));
		DistLock lock = client.getLock("before-the-restart");
		assertThat(lock.tryLock(GRACE.plusSeconds(10))).isTrue();
		lock.unlock();
		long checkedAtUptime = uptimeSeconds(master);
		assertThat(master.command("SAVE")).isEqualTo("+OK");
		// A restart more than a second after the last check, which the check can tell from a promotion.
		await().atMost(Duration.ofSeconds(20)).until(() -> uptimeSeconds(master) >= checkedAtUptime + 2);

		master.restartFromSnapshot();
		await().atMost(GRACE.plusSeconds(20)).until(() -> uptimeSeconds(master) > GRACE.toSeconds());

		DistLock afterRestart = client.getLock("after-the-restart");
		assertThat(afterRestart.tryLock(Duration.ofSeconds(2))).as("a restart longer ago than the grace serves none")
			.isTrue();
		afterRestart.unlock();
	}

	private static long uptimeSeconds(RedisServerProcess server) {
		Matcher uptime = UPTIME.matcher(server.query("INFO", "server"));
		return uptime.find() ? Long.parseLong(uptime.group(1)) : 0;
	}

	private RedisLockRegistry sentinelClient(RedisSentinelGroup group) {
		return this.opened.add(new RedisTestClients(group, Duration.ofSeconds(2)))
			.registry(LockEngineOptions.builder().watchdogTimeout(GRACE).restartGrace(GRACE));
	}

}
