package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.ReadFrom;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.async.RedisAsyncCommands;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStaticMasterReplicaConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.ClosedAfterEach;

/**
 * distlock.redis.replica-acks where its own connection, its clean-up, closing and its caller's
 * interrupts and deadlines meet: the findings of two reviews, each test failing before its fix.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisReplicaAcksConnectionTest {

	private static final RedisKeys KEYS = new RedisKeys(RedisLockRegistry.DEFAULT_KEY_PREFIX, false);

	private static final Pattern WITHIN = Pattern.compile("acknowledged the hold within (\\d+) ms");

	private static final Pattern WAITING_CLIENT = Pattern.compile("id=(\\d+) [^\\n]*cmd=wait\\b");

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	/**
	 * All acquisitions of a registry share one connection, and WAIT blocks it on the server: an
	 * acquisition sent while another one's WAIT waits for a slow replica runs only after that WAIT,
	 * when its caller's deadline has passed. The caller's clean-up must land behind it and undo what
	 * it took; sent over the shared connection (before the fix) it landed first, and the acquisition
	 * then kept the lock for a whole lease that nobody renewed, released or reported.
	 */
	@Test
	void anAcquisitionQueuedBehindAnotherOnesWaitLeavesNoHoldWhenItsCallerGivesUp() throws Exception {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisServerProcess master = servers.master();
		RedisLockRegistry registry = registry(master, RedisReplicaAcks.of(1, Duration.ofSeconds(4)));
		DistLock slow = registry.getLock("slow");
		DistLock queued = registry.getLock("queued");
		servers.replica().pause();
		try {
			CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(() -> tryLock(slow, Duration.ofSeconds(20)));
			await().atMost(Duration.ofSeconds(10)).until(() -> WAITING_CLIENT.matcher(master.query("CLIENT", "LIST")).find());
			// Gives up after its 1.1 s deadline; its script is still queued behind the other WAIT.
			CompletableFuture<Boolean> second = CompletableFuture.supplyAsync(() -> tryLock(queued, Duration.ofMillis(200)));
			assertThat(second).failsWithin(Duration.ofSeconds(10));
			assertThat(first).failsWithin(Duration.ofSeconds(10));
			// The queued script runs once the other WAIT ends; the caller's clean-up must undo it then,
			// not leave it for its 30 s lease.
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(master.query("EXISTS", KEYS.lock("queued")))
					.as("a hold taken for a caller that was told the acquisition failed (PTTL %s ms)",
							master.query("PTTL", KEYS.lock("queued")))
					.isEqualTo("0"));
		}
		finally {
			servers.replica().resume();
		}
	}

	/**
	 * Only the own connection's disconnects void an acknowledgement: another connection of the
	 * application's Lettuce client closing meanwhile (a pipeline's or transaction's dedicated
	 * connection given back, a pooled one evicted, the subscriber's reconnect) must not fail an
	 * acquisition every replica acknowledged, as it did when every disconnect of the client counted.
	 */
	@Test
	void anotherConnectionOfTheClientClosingDoesNotVoidAnAcknowledgement() throws Exception {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisServerProcess master = servers.master();
		RedisTestClients clients = this.opened.add(new RedisTestClients(master));
		LettuceConnectionFactory factory = clients.connectionFactory();
		RedisLockRegistry registry = this.opened.add(new RedisLockRegistry(factory, RedisLockRegistry.DEFAULT_KEY_PREFIX,
				LockEngineOptions.builder().restartGrace(Duration.ZERO).build(),
				RedisReplicaAcks.of(1, Duration.ofSeconds(10))));
		DistLock lock = registry.getLock("acknowledged");
		servers.replica().pause();
		CompletableFuture<Boolean> taking;
		try {
			taking = CompletableFuture.supplyAsync(() -> tryLock(lock, Duration.ofSeconds(20)));
			await().atMost(Duration.ofSeconds(10)).until(() -> WAITING_CLIENT.matcher(master.query("CLIENT", "LIST")).find());
			// The application runs a pipeline: Spring Data Redis opens a dedicated connection and closes it.
			try (RedisConnection connection = factory.getConnection()) {
				connection.openPipeline();
				connection.stringCommands().set("k".getBytes(), "v".getBytes());
				connection.closePipeline();
			}
		}
		finally {
			servers.replica().resume();
		}
		assertThat(taking.get(15, TimeUnit.SECONDS)).as("acquired once the replica acknowledged it").isTrue();
	}

	/**
	 * Spring stops a SmartLifecycle LettuceConnectionFactory before it calls the registry's destroy
	 * method: closing must not ask the stopped factory for anything (it threw, and the backend's later
	 * closing steps never ran).
	 */
	@Test
	void theRegistryClosesAfterItsConnectionFactoryStopped() throws Exception {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisTestClients clients = this.opened.add(new RedisTestClients(servers.master()));
		LettuceConnectionFactory factory = clients.connectionFactory();
		RedisLockRegistry registry = new RedisLockRegistry(factory, RedisLockRegistry.DEFAULT_KEY_PREFIX,
				LockEngineOptions.builder().restartGrace(Duration.ZERO).build(), RedisReplicaAcks.of(1, Duration.ofSeconds(1)));
		DistLock lock = registry.getLock("closing");
		assertThat(lock.tryLock(Duration.ofSeconds(2))).isTrue();
		lock.unlock();
		// As ApplicationContext.close() does: Lifecycle beans stop, then destroy methods run.
		factory.stop();
		assertThatCode(registry::close).doesNotThrowAnyException();
	}

	/**
	 * An interrupt during the WAIT of lock() (uninterruptible): the unacknowledged hold is given back,
	 * keyed by the attempt's ticket, and lock() sends the acquisition again with the same ticket. The
	 * give-back must run before that retry; sent over the shared connection (before the fix), a late
	 * give-back could delete the hold lock() had returned with. The shared connection is held up here
	 * with a BLPOP to force the order that a busy shared connection gives by chance.
	 */
	@Test
	void lockNeverReturnsWithAHoldThatItsOwnGiveBackDeletes() throws Exception {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisServerProcess master = servers.master();
		RedisTestClients clients = this.opened.add(new RedisTestClients(master, Duration.ofSeconds(20)));
		LettuceConnectionFactory factory = clients.connectionFactory();
		RedisLockRegistry registry = this.opened.add(new RedisLockRegistry(factory, RedisLockRegistry.DEFAULT_KEY_PREFIX,
				LockEngineOptions.builder().restartGrace(Duration.ZERO).build(),
				RedisReplicaAcks.of(1, Duration.ofMillis(1500))));
		DistLock lock = registry.getLock("given-back");
		DistLock other = registry(master, RedisReplicaAcks.NONE).getLock("given-back");
		// As on any server where a hold was given back before (the EVAL fallback loads it).
		assertThat(master.query("SCRIPT", "LOAD", LockScripts.ABANDON.getScriptAsString())).isEqualTo(LockScripts.ABANDON.getSha1());
		servers.replica().pause();
		AtomicBoolean held = new AtomicBoolean();
		Thread holder = new Thread(() -> {
			lock.lock();
			// lock() returned: its caller is told it holds the lock (and the deferred interrupt restored).
			held.set(true);
			Thread.interrupted();
			try {
				Thread.sleep(10_000);
			}
			catch (InterruptedException ex) {
				// ends the critical section
			}
			if (held.get()) {
				try {
					lock.unlock();
				}
				catch (RuntimeException ex) {
					// lost
				}
			}
		}, "holder");
		try {
			holder.start();
			await().atMost(Duration.ofSeconds(10)).until(() -> WAITING_CLIENT.matcher(master.query("CLIENT", "LIST")).find());
			// The shared connection is busy for 3 s (a stand-in for a backlog of application commands).
			@SuppressWarnings("unchecked")
			RedisAsyncCommands<byte[], byte[]> shared;
			try (RedisConnection connection = factory.getConnection()) {
				shared = (RedisAsyncCommands<byte[], byte[]>) connection.getNativeConnection();
			}
			RedisFuture<?> blocked = shared.blpop(3, "nothing".getBytes());
			await().atMost(Duration.ofSeconds(10)).until(() -> master.query("CLIENT", "LIST").contains("cmd=blpop"));
			long evalsBefore = evals(master);
			// An interrupt during the WAIT (executor shutdownNow, Future.cancel(true)): the hold is given back
			// (an EVAL), and lock() sends its acquisition again.
			holder.interrupt();
			await().atMost(Duration.ofSeconds(10)).until(() -> evals(master) > evalsBefore);
			servers.replica().resume();
			await().atMost(Duration.ofSeconds(10)).untilTrue(held);
			// Anything that waited behind the BLPOP has run once it is answered.
			blocked.get(10, TimeUnit.SECONDS);
			assertThat(other.tryLock(Duration.ZERO))
				.as("a second holder gets in while lock() has returned to a thread that believes it holds the lock")
				.isFalse();
			assertThat(master.query("EXISTS", KEYS.lock("given-back"))).isEqualTo("1");
		}
		finally {
			servers.replica().resume();
			holder.interrupt();
			holder.join(5000);
		}
	}

	/**
	 * The own connection is a pipelining LettuceConnection, which would follow the factory's
	 * pipelining flush policy: with flushOnClose() (or buffered(n)) nothing would be written until the
	 * pipeline closed, every acquisition would time out, and the registry's close would flush them
	 * all, taking locks that nobody holds. Its commands are written at once whatever the policy.
	 */
	@Test
	void acquisitionsDoNotDependOnTheFactorysPipeliningFlushPolicy() throws Exception {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisServerProcess master = servers.master();
		RedisTestClients clients = this.opened.add(new RedisTestClients(master));
		LettuceConnectionFactory factory = clients.connectionFactory();
		factory.setPipeliningFlushPolicy(LettuceConnection.PipeliningFlushPolicy.flushOnClose());
		RedisLockRegistry registry = new RedisLockRegistry(factory, RedisLockRegistry.DEFAULT_KEY_PREFIX,
				LockEngineOptions.builder().restartGrace(Duration.ZERO).build(), RedisReplicaAcks.of(1, Duration.ofSeconds(1)));
		DistLock lock = registry.getLock("flushed");
		Throwable failure = catchThrowable(() -> lock.tryLock(Duration.ofSeconds(2)));
		registry.close();
		assertThat(failure).isNull();
	}

	/**
	 * With a read-from setting (spring.data.redis.lettuce.read-from, or a static master/replica
	 * factory) the connection is a Master/Replica one, which routes CLIENT (one of Lettuce's read-only
	 * commands) to a replica while the script and WAIT go to the master: the CLIENT ID comparison would
	 * check a replica's connection. Such a factory is refused, naming the property.
	 */
	@Test
	void aFactoryThatReadsFromReplicasIsRefused() {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisServerProcess master = servers.master();
		RedisServerProcess replica = servers.replica();
		RedisStaticMasterReplicaConfiguration configuration = new RedisStaticMasterReplicaConfiguration(master.host(),
				master.port());
		configuration.node(replica.host(), replica.port());
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().readFrom(ReadFrom.REPLICA_PREFERRED).commandTimeout(Duration.ofSeconds(5)).build());
		factory.afterPropertiesSet();
		factory.start();
		this.opened.add(factory::destroy);
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> new RedisLockRegistry(factory, RedisLockRegistry.DEFAULT_KEY_PREFIX,
					LockEngineOptions.builder().restartGrace(Duration.ZERO).build(), RedisReplicaAcks.of(1, Duration.ofSeconds(1))))
			.withMessageContaining("distlock.redis.replica-acks")
			.withMessageContaining("read-from");
	}

	/**
	 * tryLock(0) gets 1.1 s before the deadline guard interrupts it: its WAIT must end within that,
	 * whatever replica-ack-timeout says, so that a replica that does not answer is reported as such,
	 * naming the property, not as "the backend did not answer within the wait of 0 ms".
	 */
	@Test
	void tryLockWithoutWaitingSaysTheReplicasDidNotAcknowledge() {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisLockRegistry locks = registry(servers.master(), RedisReplicaAcks.of(1, Duration.ofSeconds(3)));
		// Connected and scripts loaded first: on a loaded machine, opening the connections inside the one
		// second a zero wait is given took all of it, and the call failed as unanswered instead.
		DistLock warm = locks.getLock("warm-up");
		warm.lock();
		warm.unlock();
		DistLock lock = locks.getLock("no-wait");
		servers.replica().pause();
		try {
			assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> lock.tryLock(Duration.ZERO))
				.withMessageContaining("distlock.redis.replica-acks");
		}
		finally {
			servers.replica().resume();
		}
	}

	/**
	 * close() while an acquisition's WAIT is pending closes the connection the give-back would go on:
	 * it must go another way rather than leave the hold for its whole lease.
	 */
	@Test
	void closingDuringAnAcknowledgementLeavesNoHoldForItsLease() throws Exception {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisServerProcess master = servers.master();
		RedisTestClients clients = this.opened.add(new RedisTestClients(master));
		RedisLockRegistry registry = new RedisLockRegistry(clients.connectionFactory(),
				RedisLockRegistry.DEFAULT_KEY_PREFIX, LockEngineOptions.builder().restartGrace(Duration.ZERO).build(),
				RedisReplicaAcks.of(1, Duration.ofSeconds(3)));
		DistLock lock = registry.getLock("closing");
		servers.replica().pause();
		try {
			CompletableFuture<Boolean> taking = CompletableFuture.supplyAsync(() -> {
				try {
					return lock.tryLock(Duration.ofSeconds(20));
				}
				catch (InterruptedException ex) {
					throw new IllegalStateException(ex);
				}
			});
			await().atMost(Duration.ofSeconds(10)).until(() -> WAITING_CLIENT.matcher(master.query("CLIENT", "LIST")).find());
			registry.close();
			assertThat(taking).failsWithin(Duration.ofSeconds(10));
			// Given back at once, not kept for its 30 s lease.
			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(() -> assertThat(master.query("PTTL", KEYS.lock("closing")))
					.as("PTTL of a hold nobody was told about")
					.isEqualTo("-2"));
		}
		finally {
			servers.replica().resume();
		}
	}

	/**
	 * A short positive wait gets as long for the replicas as no wait at all (the engine gives every
	 * timed call a second), not just its own 100 ms, and a refusal says what bounded it.
	 */
	@Test
	void aShortWaitGetsAsLongForTheReplicasAsNoWait() {
		ReplicatedRedis servers = ReplicatedRedis.start(this.opened);
		RedisLockRegistry registry = this.opened.add(new RedisLockRegistry(
				this.opened.add(new RedisTestClients(servers.master())).connectionFactory(),
				RedisLockRegistry.DEFAULT_KEY_PREFIX, LockEngineOptions.builder().restartGrace(Duration.ZERO).build(),
				RedisReplicaAcks.of(1, Duration.ofSeconds(3))));
		DistLock lock = registry.getLock("short-wait");
		servers.replica().pause();
		try {
			assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> lock.tryLock(Duration.ofMillis(100)))
				.satisfies(refused -> {
					Matcher within = WITHIN.matcher(refused.getMessage());
					assertThat(within.find()).as(refused.getMessage()).isTrue();
					assertThat(Long.parseLong(within.group(1))).as("ms given to the replicas").isGreaterThanOrEqualTo(400);
				})
				.withMessageContaining("all the caller's wait");
		}
		finally {
			servers.replica().resume();
		}
	}

	private static final Pattern EVAL_CALLS = Pattern.compile("cmdstat_eval:calls=(\\d+)");

	private static long evals(RedisServerProcess server) {
		Matcher calls = EVAL_CALLS.matcher(server.query("INFO", "commandstats"));
		return calls.find() ? Long.parseLong(calls.group(1)) : 0;
	}

	private static boolean tryLock(DistLock lock, Duration wait) {
		try {
			return lock.tryLock(wait);
		}
		catch (InterruptedException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private RedisLockRegistry registry(RedisServerProcess server, RedisReplicaAcks acks) {
		return ReplicatedRedis.registry(this.opened, server, acks);
	}

}
