package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.ClosedAfterEach;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisReplicaAcksReReviewTest {

	private static final RedisKeys KEYS = new RedisKeys(RedisLockRegistry.DEFAULT_KEY_PREFIX, false);

	private static final Pattern WAITING_CLIENT = Pattern.compile("id=(\\d+) [^\\n]*cmd=wait\\b");

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	/** close() while an acquisition's WAIT is pending: the hold it took stays for its whole lease. */
	@Test
	void closingDuringAnAcknowledgementLeavesNoHoldForItsLease() throws Exception {
		RedisServerProcess master = this.opened.add(RedisServerProcess.start("--repl-diskless-sync-delay", "0"));
		RedisServerProcess replica = this.opened.add(RedisServerProcess.start("--repl-diskless-sync-delay", "0",
				"--replicaof", master.host(), Integer.toString(master.port())));
		await().atMost(Duration.ofSeconds(20))
			.until(() -> replica.query("INFO", "replication").contains("master_link_status:up"));
		RedisTestClients clients = this.opened.add(new RedisTestClients(master));
		RedisLockRegistry registry = new RedisLockRegistry(clients.connectionFactory(),
				RedisLockRegistry.DEFAULT_KEY_PREFIX, LockEngineOptions.builder().restartGrace(Duration.ZERO).build(),
				RedisReplicaAcks.of(1, Duration.ofSeconds(3)));
		DistLock lock = registry.getLock("closing");
		replica.pause();
		try {
			CompletableFuture<Object> taking = CompletableFuture.supplyAsync(() -> {
				try {
					return lock.tryLock(Duration.ofSeconds(20));
				}
				catch (Throwable ex) {
					return ex;
				}
			});
			await().atMost(Duration.ofSeconds(10)).until(() -> WAITING_CLIENT.matcher(master.query("CLIENT", "LIST")).find());
			registry.close();
			Object outcome = taking.get(10, TimeUnit.SECONDS);
			System.out.println("OUTCOME: " + outcome);
			if (outcome instanceof Throwable t) {
				t.printStackTrace(System.out);
			}
			System.out.println("PTTL after close: " + master.query("PTTL", KEYS.lock("closing")));
			// Well past the 3 s acknowledgement timeout: the hold should be gone, not kept for its 30 s lease.
			Thread.sleep(4000);
			assertThat(master.query("PTTL", KEYS.lock("closing"))).as("PTTL of a hold nobody was told about").isEqualTo("-2");
		}
		finally {
			replica.resume();
		}
	}

	/**
	 * The same replica, 300 ms slow to acknowledge: tryLock(0) gets 700 ms for it and succeeds, while
	 * tryLock(100 ms), which is given more time by its caller, gets only its 100 ms and fails.
	 */
	@Test
	void aShortPositiveWaitGetsLessTimeForTheReplicasThanNoWaitAtAll() throws Exception {
		RedisServerProcess master = this.opened.add(RedisServerProcess.start("--repl-diskless-sync-delay", "0"));
		RedisServerProcess replica = this.opened.add(RedisServerProcess.start("--repl-diskless-sync-delay", "0",
				"--replicaof", master.host(), Integer.toString(master.port())));
		await().atMost(Duration.ofSeconds(20))
			.until(() -> replica.query("INFO", "replication").contains("master_link_status:up"));
		RedisTestClients clients = this.opened.add(new RedisTestClients(master));
		RedisLockRegistry registry = this.opened.add(new RedisLockRegistry(clients.connectionFactory(),
				RedisLockRegistry.DEFAULT_KEY_PREFIX, LockEngineOptions.builder().restartGrace(Duration.ZERO).build(),
				RedisReplicaAcks.of(1, Duration.ofSeconds(3))));
		// Opens the own connection.
		DistLock warm = registry.getLock("warm");
		assertThat(warm.tryLock(Duration.ZERO)).isTrue();
		warm.unlock();
		Object noWait = slowReplica(replica, () -> registry.getLock("no-wait").tryLock(Duration.ZERO));
		Object shortWait = slowReplica(replica, () -> registry.getLock("short-wait").tryLock(Duration.ofMillis(100)));
		System.out.println("NO WAIT: " + noWait);
		System.out.println("SHORT WAIT: " + shortWait);
		assertThat(noWait).isEqualTo(Boolean.TRUE);
		assertThat(shortWait).isEqualTo(Boolean.TRUE);
	}

	interface Call {

		Object call() throws Exception;

	}

	private static Object slowReplica(RedisServerProcess replica, Call call) throws Exception {
		replica.pause();
		Thread resumer = new Thread(() -> {
			try {
				Thread.sleep(300);
			}
			catch (InterruptedException ex) {
				// resume now
			}
			replica.resume();
		});
		resumer.start();
		try {
			return call.call();
		}
		catch (Exception ex) {
			return ex;
		}
		finally {
			resumer.join();
			replica.resume();
		}
	}

}
