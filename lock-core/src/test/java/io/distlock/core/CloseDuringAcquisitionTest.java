package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.distlock.DistLock;

/**
 * A lock taken by a call that was on its way while the registry closed is not handed to the caller:
 * the closed registry's watchdog would neither renew it nor report it lost. It is given back, and the
 * caller fails as on a closed registry.
 */
class CloseDuringAcquisitionTest {

	@Test
	void aLockTakenWhileTheRegistryClosedIsGivenBack() throws Exception {
		CountDownLatch calling = new CountDownLatch(1);
		CountDownLatch closed = new CountDownLatch(1);
		List<String> released = new CopyOnWriteArrayList<>();
		StubBackend backend = new StubBackend() {
			@Override
			public Acquisition acquire(AcquireRequest request) {
				calling.countDown();
				try {
					closed.await(10, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				return Acquisition.acquired(1, request.lease(), request.ticket());
			}

			@Override
			public Release release(ReleaseRequest request) {
				released.add(request.name());
				return Release.RELEASED;
			}
		};
		BackendLockRegistry engine = new BackendLockRegistry(backend, LockEngineOptions.builder().clientId("c1").build());
		DistLock lock = engine.getLock("x");
		CompletableFuture<Object> outcome = CompletableFuture.supplyAsync(() -> {
			try {
				return lock.tryLock(Duration.ofSeconds(5));
			}
			catch (Throwable ex) {
				return ex;
			}
		});
		assertThat(calling.await(10, TimeUnit.SECONDS)).isTrue();
		engine.close();
		closed.countDown();
		assertThat(outcome.get(10, TimeUnit.SECONDS)).isInstanceOfSatisfying(IllegalStateException.class,
				ex -> assertThat(ex).hasMessageContaining("is closed"));
		assertThat(released).containsExactly("x");
		assertThat(engine.heldLocks()).isEmpty();
		assertThatThrownBy(() -> lock.tryLock(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
	}

}
