package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

/**
 * Unit-level edges of how hand-off messages reach waiting threads (the Redis backend's delivery is
 * covered by {@code RedisFairHandOffTest}; here a stub stands in for its subscription).
 */
class ReleaseWaitsTest {

	private final AtomicReference<Consumer<LockNotice>> messages = new AtomicReference<>();

	private final ReleaseWaits waits = new ReleaseWaits(new SubscribingStub(), "client");

	@Test
	void aHandOffNamingAnEarlierAttemptOfTheSameThreadIsNotTaken() throws Exception {
		// The earlier attempt gave up and passed the lock on; its message arrives while the thread waits again.
		Waiter waiter = this.waits.enter(LockId.exclusive("lock"), "client:7", "b");
		messages().accept(new LockNotice.Granted(41, "client:7", "a"));
		assertThat(waiter.awaitTurn(TimeUnit.MILLISECONDS.toNanos(50))).isNotEqualTo(ReleaseWaits.Turn.GRANTED);

		messages().accept(new LockNotice.Granted(42, "client:7", "b"));
		assertThat(waiter.awaitTurn(TimeUnit.SECONDS.toNanos(5))).isEqualTo(ReleaseWaits.Turn.GRANTED);
		assertThat(waiter.grantedToken()).isEqualTo(42);
		this.waits.leave(waiter);
	}

	@Test
	void aHandOffReachesItsWaiterWhereverItStandsAndWakesNobodyElse() throws Exception {
		Waiter head = this.waits.enter(LockId.exclusive("lock"), "client:1", "a");
		assertThat(head.awaitTurn(0)).isEqualTo(ReleaseWaits.Turn.TRY);
		Waiter second = this.waits.enter(LockId.exclusive("lock"), "client:2", "b");
		messages().accept(new LockNotice.Granted(7, "client:2", "b"));
		assertThat(second.awaitTurn(TimeUnit.SECONDS.toNanos(5))).isEqualTo(ReleaseWaits.Turn.GRANTED);
		// Its time ran out (the head then tries on its own), but nothing was handed to it.
		assertThat(head.awaitTurn(TimeUnit.MILLISECONDS.toNanos(50))).isNotEqualTo(ReleaseWaits.Turn.GRANTED);
		// Another client's hand-off is not this client's business either.
		messages().accept(new LockNotice.Granted(8, "other:1", "c"));
		assertThat(head.awaitTurn(TimeUnit.MILLISECONDS.toNanos(50))).isNotEqualTo(ReleaseWaits.Turn.GRANTED);
		this.waits.leave(second);
		this.waits.leave(head);
		assertThat(this.waits.size()).isZero();
	}

	/**
	 * Defect: leaving wakes the next waiter before it counts the leaver out; a wake-up that threw
	 * left the room counting it for good (and never unsubscribed).
	 */
	@Test
	void aWaiterLeavesEvenWhenWakingTheNextOneFails() {
		Waiter head = this.waits.enter(LockId.exclusive("failing"), "client:1", "a");
		Waiter next = this.waits.enter(LockId.exclusive("failing"), "client:2", "b", () -> {
			throw new IllegalStateException("could not wake");
		});
		assertThatThrownBy(() -> this.waits.leave(head)).hasMessage("could not wake");
		assertThat(this.waits.waitingThreads()).isEqualTo(1);
		this.waits.leave(next);
		assertThat(this.waits.size()).isZero();
	}

	/**
	 * A subscribing that fails with an Error leaves the subscriber's thread in place: a new one would
	 * be started on the thread that next enters a room, and run that room's task ahead of those queued.
	 */
	@Test
	void theSubscribersThreadOutlivesASubscribingThatFailed() {
		List<Thread> subscribers = new java.util.concurrent.CopyOnWriteArrayList<>();
		ReleaseWaits failingFirst = new ReleaseWaits(new SubscribingStub() {
			@Override
			public AutoCloseable subscribe(String name, String clientId, Consumer<LockNotice> onRelease) {
				subscribers.add(Thread.currentThread());
				if (subscribers.size() == 1) {
					throw new AssertionError("subscribing failed");
				}
				return () -> {
				};
			}
		}, "client");
		try {
			failingFirst.leave(failingFirst.enter(LockId.exclusive("first"), "client:1", "a"));
			failingFirst.leave(failingFirst.enter(LockId.exclusive("second"), "client:1", "b"));
			await().atMost(Duration.ofSeconds(30)).until(() -> subscribers.size() == 2);
			assertThat(subscribers.get(1)).as("the same thread").isSameAs(subscribers.get(0));
		}
		finally {
			failingFirst.closeAll(waiter -> {
			});
		}
	}

	/** The room subscribes in the background: its messages flow once that is done. */
	private Consumer<LockNotice> messages() {
		return await().atMost(Duration.ofSeconds(5)).until(this.messages::get, Objects::nonNull);
	}

	/** Only what {@link ReleaseWaits} uses: the subscription. */
	private class SubscribingStub implements LockBackend {

		@Override
		public AutoCloseable subscribe(String name, String clientId, Consumer<LockNotice> onRelease) {
			ReleaseWaitsTest.this.messages.set(onRelease);
			return () -> ReleaseWaitsTest.this.messages.set(null);
		}

		@Override
		public Acquisition acquire(AcquireRequest request) {
			throw new UnsupportedOperationException();
		}

		@Override
		public Release release(ReleaseRequest request) {
			throw new UnsupportedOperationException();
		}

		@Override
		public List<Boolean> renew(List<HoldRef> holds, Duration lease, Duration within) {
			throw new UnsupportedOperationException();
		}

		@Override
		public boolean isHeldBy(String name, String owner) {
			throw new UnsupportedOperationException();
		}

		@Override
		public Duration remainingLease(String name) {
			throw new UnsupportedOperationException();
		}

		@Override
		public Health health() {
			return new Health(true, Map.of());
		}

		@Override
		public void close() {
		}

	}

}
