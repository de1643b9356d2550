package io.distlock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.distlock.DistLock;
import io.distlock.LockRegistry;
import io.distlock.LockRegistryStats;
import io.distlock.WorkHold;

/**
 * The non-blocking acquisition ({@link LockRegistry#tryLockForWorkAsync}), for every backend: mixed
 * into {@link LockRegistryContract}, whose clients it uses. What users of reactive code rely on:
 * holds exclude each other across clients, a wait takes no thread, a cancelled wait leaves nothing
 * behind, timeouts and a closed registry end the future.
 */
public interface AsyncLockingContract {

	/** @return a new client with the default watchdog, closed after the test */
	LockRegistry asyncClient();

	/** @return a counter in the backend's world, initially 0 */
	SharedCounter asyncCounter(String name);

	@Test
	default void asyncHoldsExcludeEachOtherAcrossClients() throws Exception {
		List<LockRegistry> clients = List.of(asyncClient(), asyncClient());
		SharedCounter counter = asyncCounter("async-counter");
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		int chainsPerClient = 6;
		int iterations = 25;
		List<CompletableFuture<Void>> chains = new ArrayList<>();
		for (LockRegistry client : clients) {
			for (int c = 0; c < chainsPerClient; c++) {
				CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
				for (int i = 0; i < iterations; i++) {
					chain = chain.thenCompose(ignored -> client.tryLockForWorkAsync("async-counter", Duration.ofSeconds(60), null))
						.thenCompose(hold -> {
							assertThat(hold).as("acquired within the wait").isPresent();
							if (inside.incrementAndGet() > 1) {
								overlaps.incrementAndGet();
							}
							counter.set(counter.get() + 1);
							inside.decrementAndGet();
							return hold.get().releaseAsync();
						});
				}
				chains.add(chain);
			}
		}
		CompletableFuture.allOf(chains.toArray(CompletableFuture[]::new)).get(100, TimeUnit.SECONDS);
		assertThat(overlaps).hasValue(0);
		assertThat(counter.get()).isEqualTo(2L * chainsPerClient * iterations);
	}

	@Test
	default void asyncWaitsTakeNoThreadWhileTheyWait() throws Exception {
		LockRegistry holder = asyncClient();
		LockRegistry waiting = asyncClient();
		DistLock lock = holder.getLock("async-crowd");
		lock.lock();
		List<CompletableFuture<Optional<WorkHold>>> waits = new ArrayList<>();
		// One wait first, so that what any waiting needs (subscriptions, timers, call threads) runs already.
		waits.add(waiting.tryLockForWorkAsync("async-crowd", Duration.ofSeconds(90), null));
		await().atMost(Duration.ofSeconds(10)).until(() -> ((LockRegistryStats) waiting).waitingThreads() == 1);
		long threadsBefore = clientThreads();
		for (int i = 1; i < 40; i++) {
			waits.add(waiting.tryLockForWorkAsync("async-crowd", Duration.ofSeconds(90), null));
		}
		await().atMost(Duration.ofSeconds(10))
			.until(() -> ((LockRegistryStats) waiting).waitingThreads() == 40 || waits.stream().anyMatch(CompletableFuture::isDone));
		assertThat(waits).noneMatch(CompletableFuture::isDone);
		long threadsWhileWaiting = clientThreads();
		// A thread per wait would add 39; the registry's call pool may still grow to its 8 threads.
		assertThat(threadsWhileWaiting - threadsBefore).as("threads added by 39 more waits: %s",
				Thread.getAllStackTraces().keySet().stream().map(Thread::getName).sorted().toList())
			.isLessThan(20);
		AtomicInteger acquired = new AtomicInteger();
		// Each waiter in turn, whichever comes first: it acquires when the one before released.
		List<CompletableFuture<Void>> released = waits.stream()
			.map(wait -> wait.thenCompose(hold -> {
				assertThat(hold).isPresent();
				acquired.incrementAndGet();
				return hold.get().releaseAsync();
			}))
			.toList();
		lock.unlock();
		CompletableFuture.allOf(released.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
		assertThat(acquired).hasValue(40);
	}

	/** Live threads, but for those of servers the test runs in this JVM (H2's, one per connection). */
	private static long clientThreads() {
		return Thread.getAllStackTraces().keySet().stream().filter(thread -> !thread.getName().startsWith("H2 TCP Server"))
			.count();
	}

	@Test
	default void aCancelledAsyncWaitLeavesNothingBehind() throws Exception {
		LockRegistry holder = asyncClient();
		LockRegistry waiting = asyncClient();
		LockRegistry third = asyncClient();
		for (int round = 0; round < 5; round++) {
			String name = "async-cancel-" + round;
			WorkHold held = holder.tryLockForWorkAsync(name, Duration.ofSeconds(10), null).get(20, TimeUnit.SECONDS)
				.orElseThrow();
			CompletableFuture<Optional<WorkHold>> wait = waiting.tryLockForWorkAsync(name, Duration.ofSeconds(60), null);
			await().atMost(Duration.ofSeconds(10)).until(() -> ((LockRegistryStats) waiting).waitingThreads() == 1);
			if (round % 2 == 0) {
				// Cancelled while it waits; then released.
				assertThat(wait.cancel(false)).isTrue();
				held.release();
			}
			else {
				// The cancel and the release race: the hold it may win must be given back. A wait that won
				// before the cancel came has handed its hold to the caller, whose hold it is to release.
				CompletableFuture<Void> release = held.releaseAsync();
				if (!wait.cancel(false)) {
					wait.get(10, TimeUnit.SECONDS).orElseThrow().release();
				}
				release.get(10, TimeUnit.SECONDS);
			}
			// Neither a queue place nor a hold left by the cancelled wait: the lock is free for the
			// third client long before a watchdog would let a leaked hold go (it never would).
			CompletableFuture<Optional<WorkHold>> next = third.tryLockForWorkAsync(name, Duration.ofSeconds(20), null);
			Optional<WorkHold> hold = next.get(30, TimeUnit.SECONDS);
			assertThat(hold).as("round %d", round).isPresent();
			hold.get().release();
			await().atMost(Duration.ofSeconds(10)).until(() -> waiting.heldLocks().isEmpty());
		}
	}

	@Test
	default void workHoldsAreNotReentrant() throws Exception {
		LockRegistry client = asyncClient();
		WorkHold first = client.tryLockForWorkAsync("async-again", Duration.ZERO, null).get(10, TimeUnit.SECONDS)
			.orElseThrow();
		// The same thread, the same client: a second piece of work is another owner and waits.
		assertThat(client.tryLockForWorkAsync("async-again", Duration.ofMillis(100), null).get(10, TimeUnit.SECONDS))
			.isEmpty();
		assertThat(client.getLock("async-again").tryLock()).as("nor is it the calling thread's").isFalse();
		CompletableFuture<Optional<WorkHold>> second = client.tryLockForWorkAsync("async-again", Duration.ofSeconds(20),
				null);
		first.releaseAsync().get(10, TimeUnit.SECONDS);
		second.get(30, TimeUnit.SECONDS).orElseThrow().release();
	}

	@Test
	default void anAsyncWaitEndsWithItsWaitOrItsRegistry() throws Exception {
		LockRegistry holder = asyncClient();
		LockRegistry waiting = asyncClient();
		DistLock lock = holder.getLock("async-busy");
		lock.lock();
		assertThat(waiting.tryLockForWorkAsync("async-busy", Duration.ZERO, null).get(10, TimeUnit.SECONDS)).isEmpty();
		long start = System.nanoTime();
		assertThat(waiting.tryLockForWorkAsync("async-busy", Duration.ofMillis(300), null).get(10, TimeUnit.SECONDS))
			.isEmpty();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300))
			.isLessThan(Duration.ofSeconds(5));

		CompletableFuture<WorkHold> forever = waiting.lockForWorkAsync("async-busy", null);
		await().atMost(Duration.ofSeconds(10)).until(() -> ((LockRegistryStats) waiting).waitingThreads() == 1);
		((AutoCloseable) waiting).close();
		assertThatThrownBy(() -> forever.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
			.hasCauseInstanceOf(IllegalStateException.class)
			.hasMessageContaining("closed");
		assertThatThrownBy(() -> waiting.tryLockForWorkAsync("async-busy", Duration.ZERO, null).join())
			.isInstanceOf(CompletionException.class)
			.hasCauseInstanceOf(IllegalStateException.class);
		lock.unlock();
		assertThatThrownBy(() -> holder.tryLockForWorkAsync(" ", Duration.ZERO, null))
			.isInstanceOf(IllegalArgumentException.class);
	}

}
