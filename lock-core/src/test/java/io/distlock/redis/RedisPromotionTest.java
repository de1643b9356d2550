package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.HashSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistLock;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisSentinelGroup;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.ClosedAfterEach;

/**
 * Replication is asynchronous: a replica that Sentinel promotes may have missed the holds its master
 * granted last, and their holders learn of it only at their next renewal. The promoted replica serves
 * the restart grace, so that no new holder enters before then; a client that merely connects to the
 * same master again does not make it serve one.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RedisPromotionTest {

	/** Also the watchdog lease: a holder is told of a lost hold within it. */
	private static final Duration GRACE = Duration.ofSeconds(4);

	private static final Pattern UPTIME = Pattern.compile("uptime_in_seconds:(\\d+)");

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	@Test
	void aPromotedReplicaServesTheRestartGraceAndAnotherConnectionToTheSameMasterDoesNot() throws InterruptedException {
		RedisSentinelGroup group = RedisSentinelGroup.start();
		this.opened.add(group);
		RedisServerProcess master = group.master();
		RedisServerProcess replica = group.dataNodes().stream().filter(node -> node != master).findFirst().orElseThrow();

		// A master that started within the grace serves the rest of it: the first hold waits for that.
		DistLock first = client(group).getLock("before-the-failover");
		assertThat(first.tryLock(GRACE.plusSeconds(10))).isTrue();
		first.unlock();

		RedisLockRegistry sameMaster = client(group);
		DistLock second = sameMaster.getLock("another-connection");
		assertThat(second.tryLock(Duration.ZERO)).as("a new connection to the same master serves no grace").isTrue();
		second.unlock();

		// Without the promotion check, a replica up longer than the grace would admit a new holder at once.
		await().atMost(GRACE.plusSeconds(20)).until(() -> uptimeSeconds(replica) > GRACE.toSeconds());
		assertThat(master.command("WAIT", "1", "5000")).as("the replica has the master's writes").isEqualTo(":1");
		master.kill();
		assertThat(group.awaitNewMaster(master, Duration.ofSeconds(30))).isSameAs(replica);

		RedisLockRegistry afterFailover = client(group);
		DistLock third = afterFailover.getLock("after-the-failover");
		assertThat(third.tryLock(Duration.ZERO)).as("a new holder on the promoted replica, at once").isFalse();
		assertThat(afterFailover.restartGraceEnds()).as("the refusal names the restart grace").isPresent();
		assertThat(third.tryLock(GRACE.plusSeconds(10))).as("a new holder once the grace is over").isTrue();
		third.unlock();
	}

	private static long uptimeSeconds(RedisServerProcess server) {
		Matcher uptime = UPTIME.matcher(server.query("INFO", "server"));
		return uptime.find() ? Long.parseLong(uptime.group(1)) : 0;
	}

	private RedisLockRegistry client(RedisSentinelGroup group) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisSentinelConfiguration(group.masterName(), new HashSet<>(group.sentinelNodes())),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build());
		factory.afterPropertiesSet();
		factory.start();
		this.opened.add(factory::destroy);
		RedisLockRegistry registry = new RedisLockRegistry(factory, "distlock",
				LockEngineOptions.builder().watchdogTimeout(GRACE).restartGrace(GRACE).build());
		this.opened.add(registry);
		return registry;
	}

}
