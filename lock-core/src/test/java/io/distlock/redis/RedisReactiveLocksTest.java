package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.distlock.DistLock;
import io.distlock.LockLostException;
import io.distlock.LockNotAcquiredException;
import io.distlock.LockRegistry;
import io.distlock.reactor.ReactiveLocks;
import io.distlock.testing.RedisServerExtension;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The reactive face against a real redis-server, with two clients standing for two instances:
 * work under {@code withLock} never overlaps, a busy lock fails the work without running it, a
 * cancel frees the lock, and a hold lost before the work ended fails the result.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisReactiveLocksTest {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	@RegisterExtension
	final RedisClientsExtension clients = RedisClientsExtension.of(redis);

	private final ConcurrentHashMap<String, AtomicInteger> inside = new ConcurrentHashMap<>();

	private final AtomicInteger overlaps = new AtomicInteger();

	private final AtomicInteger runs = new AtomicInteger();

	/** Work that counts how many run inside the same lock at once, across both clients. */
	private Mono<Integer> work(String name, int value) {
		return Mono.fromCallable(() -> {
			if (this.inside.computeIfAbsent(name, key -> new AtomicInteger()).incrementAndGet() > 1) {
				this.overlaps.incrementAndGet();
			}
			this.runs.incrementAndGet();
			return value;
		}).delayElement(Duration.ofMillis(1)).map(done -> {
			// Out before the value is emitted: the lock is released only after it.
			this.inside.get(name).decrementAndGet();
			return done;
		});
	}

	@Test
	void workUnderTheSameLockNeverOverlapsAcrossClients() {
		List<ReactiveLocks> locks = List.of(ReactiveLocks.of(this.clients.registry(Duration.ofSeconds(30))),
				ReactiveLocks.of(this.clients.registry(Duration.ofSeconds(30))));
		List<Mono<Integer>> all = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			String name = "reactive-" + (i % 4);
			all.add(locks.get(i % 2).withLock(name, Duration.ofSeconds(60), null, work(name, i)));
		}
		List<Integer> results = Flux.merge(Flux.fromIterable(all), 400).collectList().block(Duration.ofSeconds(100));
		assertThat(results).hasSize(400);
		assertThat(this.overlaps).hasValue(0);
		assertThat(this.runs).hasValue(400);
	}

	@Test
	void withoutTheLockTheSameWorkOverlaps() {
		// The control for the test above: the counting does see overlaps when nothing excludes the work.
		List<Mono<Integer>> all = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			String name = "reactive-" + (i % 4);
			all.add(work(name, i).subscribeOn(Schedulers.parallel()));
		}
		Flux.merge(Flux.fromIterable(all), 400).collectList().block(Duration.ofSeconds(100));
		assertThat(this.overlaps.get()).isPositive();
	}

	@Test
	void aBusyLockFailsTheWorkWithoutRunningIt() throws Exception {
		LockRegistry holder = this.clients.registry(Duration.ofSeconds(30));
		ReactiveLocks theirs = ReactiveLocks.of(this.clients.registry(Duration.ofSeconds(30)));
		DistLock lock = holder.getLock("reactive-busy");
		lock.lock();
		try {
			assertThatThrownBy(() -> theirs.withLock("reactive-busy", Duration.ofMillis(200), null, work("reactive-busy", 1))
				.block(Duration.ofSeconds(10))).isInstanceOf(LockNotAcquiredException.class)
				.hasMessageContaining("'reactive-busy'");
			assertThat(theirs.tryLock("reactive-busy", Duration.ZERO, null).blockOptional(Duration.ofSeconds(10))).isEmpty();
			assertThat(this.runs).hasValue(0);
		}
		finally {
			lock.unlock();
		}
		var hold = theirs.tryLock("reactive-busy", Duration.ofSeconds(5), null).block(Duration.ofSeconds(10));
		assertThat(hold).isNotNull();
		hold.releaseAsync().get(10, TimeUnit.SECONDS);
	}

	@Test
	void cancellingTheWorkOrTheWaitFreesTheLock() throws Exception {
		RedisLockRegistry registry = this.clients.registry(Duration.ofSeconds(30));
		ReactiveLocks mine = ReactiveLocks.of(registry);
		LockRegistry other = this.clients.registry(Duration.ofSeconds(30));
		// Cancelled while the work runs.
		Disposable running = mine.withLock("reactive-cancel", Duration.ofSeconds(5), null, Mono.never()).subscribe();
		await().atMost(Duration.ofSeconds(10)).until(() -> other.getLock("reactive-cancel").isLocked());
		assertThat(takeAndRelease(other, "reactive-cancel")).isFalse();
		running.dispose();
		await().atMost(Duration.ofSeconds(10)).until(() -> takeAndRelease(other, "reactive-cancel"));
		// Cancelled while it waits: nothing is left behind once the holder releases.
		DistLock held = other.getLock("reactive-cancel");
		held.lock();
		Disposable waiting = mine.withLock("reactive-cancel", Duration.ofSeconds(30), null, work("reactive-cancel", 1))
			.subscribe();
		await().atMost(Duration.ofSeconds(10)).until(() -> registry.waitingThreads() == 1);
		waiting.dispose();
		held.unlock();
		await().atMost(Duration.ofSeconds(10)).until(() -> registry.waitingThreads() == 0);
		assertThat(takeAndRelease(other, "reactive-cancel")).isTrue();
		assertThat(registry.heldLocks()).isEmpty();
		assertThat(this.runs).hasValue(0);
	}

	@Test
	void aHoldLostBeforeTheWorkEndedFailsTheResult() {
		ReactiveLocks mine = ReactiveLocks.of(this.clients.registry(Duration.ofSeconds(30)));
		assertThatThrownBy(() -> mine.withLock("reactive-lost", Duration.ZERO, Duration.ofMillis(200),
				Mono.delay(Duration.ofMillis(800)).thenReturn(1)).block(Duration.ofSeconds(10)))
			.isInstanceOf(LockLostException.class);
	}

	/** Takes and releases the lock from a fresh thread; true if it was free. */
	private static boolean takeAndRelease(LockRegistry registry, String name) {
		return Mono.fromCallable(() -> {
			DistLock lock = registry.getLock(name);
			if (!lock.tryLock()) {
				return false;
			}
			lock.unlock();
			return true;
		}).subscribeOn(Schedulers.boundedElastic()).block(Duration.ofSeconds(10));
	}

}
