package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.distlock.DistLock;
import io.distlock.LockBackendException;

/**
 * Unit-level edge (a stand-in backend holds the watchdog's thread exactly): {@code unlockKeepingFor}
 * sets the kept lease on the watchdog's thread, after any renewal under way. When the registry is
 * closed while that keep still waits its turn, the caller must be let go at once: the task will
 * never run. It waited until its own bound (the hold's lease), and before that bound existed, for ever.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KeepOnCloseTest {

	@Test
	void aKeepWaitingBehindABlockedRenewalEndsWhenTheRegistryCloses() throws Exception {
		CountDownLatch renewing = new CountDownLatch(1);
		CountDownLatch never = new CountDownLatch(1);
		StubBackend backend = new StubBackend() {
			@Override
			public List<Boolean> renew(List<HoldRef> holds, Duration lease, Duration within) {
				if (holds.stream().anyMatch(hold -> hold.name().equals("busy"))) {
					// The watchdog's thread is stuck in a renewal (a frozen server) until it is interrupted.
					renewing.countDown();
					try {
						never.await();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
					throw new IllegalStateException("renewal interrupted");
				}
				return super.renew(holds, lease, within);
			}
		};
		BackendLockRegistry engine = new BackendLockRegistry(backend,
				LockEngineOptions.builder().clientId("c1").watchdogTimeout(Duration.ofMillis(300)).build());
		try {
			engine.getLock("busy").lock();
			assertThat(renewing.await(10, TimeUnit.SECONDS)).as("the watchdog is renewing").isTrue();

			AtomicReference<Throwable> keepFailure = new AtomicReference<>();
			CountDownLatch locked = new CountDownLatch(1);
			CountDownLatch kept = new CountDownLatch(1);
			Thread keeper = new Thread(() -> {
				DistLock lock = engine.getLock("kept");
				try {
					// An explicit lease of a minute: the keep's own bound is about that long.
					lock.lock(Duration.ofMinutes(1));
					locked.countDown();
					lock.unlockKeepingFor(Duration.ofSeconds(30));
				}
				catch (Throwable ex) {
					keepFailure.set(ex);
				}
				finally {
					kept.countDown();
				}
			}, "keeper");
			keeper.start();
			assertThat(locked.await(10, TimeUnit.SECONDS)).isTrue();
			// The keep is queued behind the stuck renewal: its caller waits for the task's result.
			long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (keeper.getState() != Thread.State.TIMED_WAITING && System.nanoTime() < until) {
				Thread.onSpinWait();
			}
			assertThat(keeper.getState()).isEqualTo(Thread.State.TIMED_WAITING);
			assertThat(kept.getCount()).as("the keep waits for the watchdog's thread").isEqualTo(1);

			engine.close();
			assertThat(kept.await(5, TimeUnit.SECONDS)).as("the keep ended when the registry closed").isTrue();
			assertThat(keepFailure.get()).isInstanceOf(LockBackendException.class).hasMessageContaining("registry was closed");
		}
		finally {
			never.countDown();
			engine.close();
		}
	}

}
