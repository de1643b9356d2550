package io.distlock.reactor;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.LockNotAcquiredException;
import io.distlock.LockRegistry;
import io.distlock.WorkHold;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The reactive face of a {@link LockRegistry}, for Reactor code that does not use the annotation.
 * A lock is taken when the result is subscribed to (assembling takes nothing), waited for without
 * any thread ({@link LockRegistry#tryLockForWorkAsync}), and held by the subscription's work, not
 * by a thread; so it is not reentrant. Like Spring's {@code TransactionalOperator}:
 *
 * <pre class="code">
 * ReactiveLocks locks = ReactiveLocks.of(registry);
 * Mono&lt;Order&gt; shipped = locks.withLock("order:" + id, Duration.ofSeconds(2), null, ship(id));
 * </pre>
 *
 * <p>The work is subscribed to on Reactor's bounded-elastic scheduler once the lock is taken, and
 * the result completes there after the release, never on distlock's own threads. Each subscription
 * takes the lock anew and runs the work anew.
 */
public final class ReactiveLocks {

	private static final Logger log = LoggerFactory.getLogger(ReactiveLocks.class);

	private static final Object CANCELLED = new Object();

	private final LockRegistry registry;

	private final Scheduler work = Schedulers.boundedElastic();

	private ReactiveLocks(LockRegistry registry) {
		this.registry = registry;
	}

	/**
	 * @param registry a distlock registry (one that offers {@link LockRegistry#tryLockForWorkAsync})
	 * @return the registry's reactive face
	 */
	public static ReactiveLocks of(LockRegistry registry) {
		return new ReactiveLocks(Objects.requireNonNull(registry, "registry must not be null"));
	}

	/** @return the registry whose locks this takes */
	public LockRegistry lockRegistry() {
		return this.registry;
	}

	/**
	 * Runs {@code work} under the lock: takes it on subscription, subscribes to {@code work}, and
	 * releases it when the work completes, fails or is cancelled.
	 * @param name the lock's name
	 * @param waitTime how long to wait for the lock; zero: one try
	 * @param leaseTime the lease, or {@code null} for the watchdog
	 * @param work what to run under the lock, subscribed to once per subscription
	 * @param <T> the element type
	 * @return the work's value; {@link LockNotAcquiredException} if another holder kept the lock for
	 * the whole wait, {@link io.distlock.LockBackendException} if the backend did not answer, and
	 * {@link io.distlock.LockLostException} if the hold was lost before the release: in each case
	 * the work did not run, or (lost) ran while the lock may have gone to another
	 */
	public <T> Mono<T> withLock(String name, Duration waitTime, Duration leaseTime, Mono<T> work) {
		Objects.requireNonNull(work, "work must not be null");
		// Released within the work's own sequence, so that a hold lost meanwhile is this Mono's error.
		return Mono.usingWhen(acquire(name, waitTime, leaseTime),
				claim -> claim.claim() ? work.flatMap(value -> claim.release().thenReturn(value))
					.switchIfEmpty(claim.release().then(Mono.empty())) : Mono.empty(),
				Claim::releaseQuietly, (claim, error) -> claim.releaseQuietly(), Claim::releaseQuietly);
	}

	/**
	 * As {@link #withLock(String, Duration, Duration, Mono)}, for a stream of values: the lock is
	 * held until the last one, an error or a cancel.
	 * @param name the lock's name
	 * @param waitTime how long to wait for the lock; zero: one try
	 * @param leaseTime the lease, or {@code null} for the watchdog
	 * @param work what to run under the lock, subscribed to once per subscription
	 * @param <T> the element type
	 * @return the work's values, or the errors of {@link #withLock(String, Duration, Duration, Mono)}
	 */
	public <T> Flux<T> withLock(String name, Duration waitTime, Duration leaseTime, Publisher<T> work) {
		Objects.requireNonNull(work, "work must not be null");
		return Flux.usingWhen(acquire(name, waitTime, leaseTime),
				claim -> claim.claim() ? Flux.from(work).concatWith(claim.release().then(Mono.empty())) : Flux.<T>empty(),
				Claim::releaseQuietly, (claim, error) -> claim.releaseQuietly(), Claim::releaseQuietly);
	}

	/**
	 * Takes the lock for the subscriber to release ({@link WorkHold#releaseAsync()}); prefer
	 * {@code withLock}, which cannot forget to. A cancel before the hold is emitted ends the wait and
	 * releases a hold won meanwhile; once emitted, the hold is the subscriber's.
	 * @param name the lock's name
	 * @param waitTime how long to wait for it; zero: one try
	 * @param leaseTime the lease, or {@code null} for the watchdog
	 * @return the hold, or empty if another holder kept the lock for the whole wait
	 */
	public Mono<WorkHold> tryLock(String name, Duration waitTime, Duration leaseTime) {
		return acquire(name, waitTime, leaseTime).onErrorResume(LockNotAcquiredException.class, busy -> Mono.empty())
			.handle((claim, sink) -> {
				if (claim.claim()) {
					sink.next(claim.hold);
				}
			});
	}

	/**
	 * One subscription's acquisition. Reactor drops a value that arrives after a cancel, so the hold
	 * is handed over through a claim: whichever comes second of the cancel and the hold gives it
	 * back, unless the work claimed it first.
	 */
	private Mono<Claim> acquire(String name, Duration waitTime, Duration leaseTime) {
		return Mono.defer(() -> {
			long start = System.nanoTime();
			AtomicReference<Object> state = new AtomicReference<>();
			CompletableFuture<Optional<WorkHold>> acquisition = this.registry.tryLockForWorkAsync(name, waitTime, leaseTime);
			CompletableFuture<Optional<Claim>> delivered = acquisition.thenApply(hold -> hold.map(taken -> {
				Claim claim = new Claim(taken);
				if (!state.compareAndSet(null, claim)) {
					claim.giveBack();
				}
				return claim;
			}));
			return Mono.fromFuture(delivered, true).publishOn(this.work).doOnCancel(() -> {
				Object previous = state.getAndSet(CANCELLED);
				if (previous == null) {
					acquisition.cancel(false);
				}
				else if (previous instanceof Claim claim) {
					claim.giveBack();
				}
			}).flatMap(claim -> claim.map(Mono::just).orElseGet(() -> Mono.error(
					this.registry.notAcquired(name, Duration.ofNanos(System.nanoTime() - start)))));
		});
	}

	/** A hold on its way to the work: used by the work, or given back if the subscription went first. */
	private final class Claim {

		private static final int TAKEN = 0;

		private static final int IN_USE = 1;

		private static final int GIVEN_BACK = 2;

		final WorkHold hold;

		private final AtomicInteger phase = new AtomicInteger(TAKEN);

		Claim(WorkHold hold) {
			this.hold = hold;
		}

		boolean claim() {
			return this.phase.compareAndSet(TAKEN, IN_USE);
		}

		void giveBack() {
			if (this.phase.compareAndSet(TAKEN, GIVEN_BACK)) {
				this.hold.releaseAsync().whenComplete((ignored, error) -> logFailure(error));
			}
		}

		/** The work completed: a release that fails (the hold was lost) fails the result; once only. */
		Mono<Void> release() {
			return Mono.fromFuture(this.hold::releaseAsync).publishOn(ReactiveLocks.this.work);
		}

		/** The work failed or was cancelled: its own signal stands, a failed release is logged. */
		Mono<Void> releaseQuietly() {
			return release().onErrorResume(error -> {
				logFailure(error);
				return Mono.empty();
			});
		}

		private void logFailure(Throwable error) {
			if (error != null) {
				log.warn("Could not release lock '{}' at the end of its work: {}", this.hold.lockName(), error.toString());
			}
		}

	}

}
