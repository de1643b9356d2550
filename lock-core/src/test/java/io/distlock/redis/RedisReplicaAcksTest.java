package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.ClosedAfterEach;

/**
 * With replica acknowledgement an acquisition counts only once the replicas have it, so a failover
 * to one of them cannot lose it: a hold is on the replica when {@code lock()} returns; one that too
 * few replicas acknowledge, or that a server refusing {@code WAIT} cannot confirm, is given back and
 * fails naming the setting; and it is refused where {@code WAIT} could not follow the acquisition on
 * its connection.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisReplicaAcksTest {

	private static final Duration ACK_TIMEOUT = Duration.ofMillis(300);

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	@Test
	void aHoldIsOnTheReplicaWhenTheAcquisitionReturns() throws InterruptedException {
		RedisServerProcess master = this.opened.add(RedisServerProcess.start());
		RedisServerProcess replica = this.opened.add(RedisServerProcess.start("--replicaof", master.host(),
				Integer.toString(master.port())));
		await().atMost(Duration.ofSeconds(20))
			.until(() -> replica.query("INFO", "replication").contains("master_link_status:up"));
		RedisLockRegistry registry = registry(factory(master, null), new ReplicaAcks(1, Duration.ofSeconds(5)));

		for (int i = 0; i < 20; i++) {
			DistLock lock = registry.getLock("acked-" + i);
			assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
			assertThat(replica.query("EXISTS", "distlock:{acked-" + i + "}")).as("hold %d on the replica", i)
				.isEqualTo("1");
			lock.unlock();
		}
	}

	@Test
	void aHoldTooFewReplicasAcknowledgeIsGivenBackAndTheFailureNamesTheSetting() throws InterruptedException {
		RedisServerProcess master = this.opened.add(RedisServerProcess.start());
		RedisLockRegistry acked = registry(factory(master, null), new ReplicaAcks(1, ACK_TIMEOUT));

		DistLock lock = acked.getLock("no-replica");
		assertThatThrownBy(() -> lock.tryLock(Duration.ZERO)).isInstanceOf(LockBackendException.class)
			.hasMessageContaining("Lock 'no-replica' was taken on " + master.host() + ":" + master.port()
					+ " and given back: only 0 of 1 replicas acknowledged it within 300 ms")
			.hasMessageContaining("distlock.redis.replica-acks=1");
		assertThat(master.query("EXISTS", "distlock:{no-replica}")).as("the hold was given back").isEqualTo("0");
		DistLock other = registry(factory(master, null), ReplicaAcks.NONE).getLock("no-replica");
		assertThat(other.tryLock(Duration.ZERO)).as("another client gets the lock at once").isTrue();
		other.unlock();
	}

	@Test
	void aServerThatRefusesWaitFailsTheAcquisitionAndGetsTheHoldBack() throws InterruptedException {
		RedisServerProcess master = this.opened.add(RedisServerProcess.start());
		List<String> acl = List.of("ACL", "SETUSER", "nowait", "on", ">pw", "~*", "&*", "+@all", "-wait");
		assertThat(master.command(acl.toArray(String[]::new))).isEqualTo("+OK");
		RedisLockRegistry acked = registry(factory(master, "nowait"), new ReplicaAcks(1, ACK_TIMEOUT));

		assertThatThrownBy(() -> acked.getLock("refused").tryLock(Duration.ZERO))
			.isInstanceOf(LockBackendException.class)
			.hasMessageContaining("given back: the server refused WAIT")
			.hasMessageContaining("NOPERM");
		assertThat(master.query("EXISTS", "distlock:{refused}")).isEqualTo("0");
	}

	@Test
	void replicasAreNotAskedForWhereWaitCouldNotFollowTheAcquisitionOnItsConnection() {
		RedisServerProcess master = this.opened.add(RedisServerProcess.start());
		LettuceConnectionFactory pooled = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(master.host(), master.port()));
		pooled.setShareNativeConnection(false);
		pooled.afterPropertiesSet();
		pooled.start();
		this.opened.add(pooled::destroy);

		assertThatThrownBy(() -> registry(pooled, new ReplicaAcks(1, ACK_TIMEOUT)))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("needs a single Redis or a Sentinel master through Lettuce with a shared connection")
			.hasMessageContaining("Set distlock.redis.replica-acks=0");
	}

	private LettuceConnectionFactory factory(RedisServerProcess server, String user) {
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(server.host(), server.port());
		if (user != null) {
			configuration.setUsername(user);
			configuration.setPassword(RedisPassword.of("pw"));
		}
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(5)).build());
		factory.afterPropertiesSet();
		factory.start();
		this.opened.add(factory::destroy);
		return factory;
	}

	private RedisLockRegistry registry(LettuceConnectionFactory factory, ReplicaAcks replicaAcks) {
		return this.opened.add(new RedisLockRegistry(factory, "distlock", LockEngineOptions.defaults(), replicaAcks));
	}

}
