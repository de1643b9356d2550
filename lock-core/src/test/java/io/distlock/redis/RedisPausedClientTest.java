package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.core.EngineProbe;
import io.distlock.testing.RedisServerExtension;

/**
 * A client whose JVM stops for a while (a long GC pause, a stalled VM) while it waits for a lock
 * must not come back believing in a hand-off that expired meanwhile: others may have held the lock
 * since, and two holders is what the lock exists to prevent.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisPausedClientTest {

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	private static final RedisKeys keys = new RedisKeys("distlock", false);

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redisServer);

	private ForkedLockClient child;

	@AfterEach
	void tearDown() throws Exception {
		if (this.child != null) {
			this.child.close();
		}
	}

	@Test
	void aWaiterResumedAfterAPauseDoesNotTakeUpAHandOffThatExpiredMeanwhile() throws Exception {
		String name = "paused-waiter";
		RedisLockRegistry registryA = this.clients.registry(Duration.ofSeconds(30));
		DistLock holderA = registryA.getLock(name);
		holderA.lock();
		// Lease 3 s: the hand-off to it lasts at most 3 s, which it cannot extend while frozen.
		this.child = ForkedLockClient.start(redisServer.server(), Duration.ofSeconds(3));
		this.child.send("trylock " + name + " 30000");
		// Queued in Redis and subscribed to the lock's channel, so that the grant reaches its socket.
		await().atMost(Duration.ofSeconds(20))
			.pollInterval(Duration.ofMillis(10))
			.until(() -> queueLength(name) == 1 && subscribers(name) == 1);

		this.child.freeze();
		holderA.unlock();
		assertThat(this.clients.redis().opsForHash().keys(keys.lock(name))).as("the holder's fields: handed to the frozen child")
			.map(String::valueOf)
			.filteredOn(field -> !field.startsWith(":"))
			.singleElement()
			.isNotEqualTo(EngineProbe.currentOwner(registryA));
		// The frozen child cannot take the hand-off up and extend it: its provisional lease runs out.
		await().atMost(Duration.ofSeconds(15))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> !Boolean.TRUE.equals(this.clients.redis().hasKey(keys.lock(name))));

		DistLock holderC = this.clients.registry(Duration.ofSeconds(30)).getLock(name);
		assertThat(holderC.tryLock(Duration.ofSeconds(10))).isTrue();
		long tokenC = holderC.getFencingToken();
		long resumedAt = System.nanoTime();
		this.child.resume();

		// While C holds the lock, the resumed child must not believe it holds it too.
		String whileCHolds = this.child.nextReply(Duration.ofSeconds(2));
		if (whileCHolds != null && whileCHolds.startsWith("ACQUIRED")) {
			String[] acquired = whileCHolds.split(" ");
			fail("Two holders: %d ms after resuming, the child reported the lock acquired with token %s (the hand-off "
					+ "that expired while it was frozen), while C held it with token %d",
					TimeUnit.NANOSECONDS.toMillis(Long.parseLong(acquired[2]) - resumedAt), acquired[1], tokenC);
		}
		assertThat(holderC.isHeldByCurrentThread()).isTrue();

		holderC.unlock();
		String afterC = (whileCHolds != null) ? whileCHolds : this.child.nextReply(Duration.ofSeconds(20));
		if (afterC != null && afterC.startsWith("ACQUIRED")) {
			assertThat(Long.parseLong(afterC.split(" ")[1])).as("the child's fencing token after C's release")
				.isGreaterThan(tokenC);
		}
	}

	@Test
	void aClientFrozenBeforeTheReplyToItsAcquisitionDoesNotBelieveInAHoldThatExpiredMeanwhile() throws Exception {
		String name = "paused-reply";
		this.child = ForkedLockClient.start(redisServer.server(), Duration.ofSeconds(3));
		// Redis stalls, so the child's acquisition waits in Redis's socket; then the child freezes, and
		// Redis takes the lock for it and answers into the frozen child's socket.
		redisServer.server().pause();
		try {
			this.child.send("trylock " + name + " 30000");
			awaitBytesUnreadBy(redisServer.server().port());
			this.child.freeze();
		}
		finally {
			redisServer.server().resume();
		}
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> Boolean.TRUE.equals(this.clients.redis().hasKey(keys.lock(name))));
		// The frozen child cannot renew: its lease (3 s) runs out, and C takes the lock.
		await().atMost(Duration.ofSeconds(15))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> !Boolean.TRUE.equals(this.clients.redis().hasKey(keys.lock(name))));
		DistLock holderC = this.clients.registry(Duration.ofSeconds(30)).getLock(name);
		assertThat(holderC.tryLock(Duration.ofSeconds(10))).isTrue();
		long tokenC = holderC.getFencingToken();
		this.child.resume();

		String whileCHolds = this.child.nextReply(Duration.ofSeconds(2));
		if (whileCHolds != null && whileCHolds.startsWith("ACQUIRED")) {
			fail("Two holders: the child reported the lock acquired with token %s (a reply that came after its "
					+ "lease had run out), while C held it with token %d", whileCHolds.split(" ")[1], tokenC);
		}
		assertThat(holderC.isHeldByCurrentThread()).isTrue();
		holderC.unlock();
		String afterC = (whileCHolds != null) ? whileCHolds : this.child.nextReply(Duration.ofSeconds(20));
		assertThat(afterC).startsWith("ACQUIRED");
		assertThat(Long.parseLong(afterC.split(" ")[1])).as("the child's fencing token after C's release")
			.isGreaterThan(tokenC);
	}

	/**
	 * Waits until a client has sent the paused server on {@code port} something it has not read: the
	 * kernel's table of TCP sockets shows it ({@code rx_queue} of the server's established
	 * connections). While the server is paused only the child sends; the test's own connections are
	 * idle. A fixed second used to stand for this, and a loaded machine's child could still be on
	 * its way to sending its acquisition when frozen, so that Redis never took the lock for it.
	 * Without {@code /proc} (not Linux) that second is all there is.
	 */
	private static void awaitBytesUnreadBy(int port) throws InterruptedException {
		List<Path> tables = Stream.of("/proc/net/tcp", "/proc/net/tcp6").map(Path::of).filter(Files::isReadable).toList();
		if (tables.isEmpty()) {
			Thread.sleep(1000);
			return;
		}
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5)).until(() -> {
			long unread = 0;
			for (Path table : tables) {
				List<String> lines = Files.readAllLines(table);
				for (String line : lines.subList(1, lines.size())) {
					// sl local_address rem_address st tx_queue:rx_queue ...; ports, states and sizes in hex
					String[] fields = line.trim().split("\\s+");
					int localPort = Integer.parseInt(fields[1].substring(fields[1].indexOf(':') + 1), 16);
					if (localPort == port && "01".equals(fields[3])) {
						unread += Long.parseLong(fields[4].substring(fields[4].indexOf(':') + 1), 16);
					}
				}
			}
			return unread > 0;
		});
	}

	private long queueLength(String name) {
		Long length = this.clients.redis().opsForList().size(keys.queue(name));
		return (length != null) ? length : 0;
	}

	private long subscribers(String name) {
		String reply = redisServer.server().query("PUBSUB", "NUMSUB", keys.releaseChannel(name));
		// channel, count: one element per line
		return Long.parseLong(reply.split("\n")[1].trim());
	}

}
