package io.distlock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.distlock.DistLock;
import io.distlock.LockRegistry;
import io.distlock.testing.RedisServerExtension;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A Mono method that waits for a contended lock never blocks the thread it is subscribed on.
 * BlockHound watches the threads of one scheduler that stands for an event loop; only those, so
 * that the other tests in this JVM are not affected.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReactiveLockingBlockHoundTests {

	private static final String EVENT_LOOP = "distlock-test-event-loop";

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	private static Scheduler eventLoop;

	private static ConfigurableApplicationContext context;

	@BeforeAll
	static void watchTheEventLoop() {
		// The integrations (Reactor's among them) allow the waits of an idle scheduler worker; without
		// them each idle worker of the watched scheduler dies of a BlockingOperationError and its
		// executor starts another, without end. Their thread predicates are replaced, not extended:
		// only this test's scheduler is watched.
		BlockHound.builder()
			.loadIntegrations()
			.nonBlockingThreadPredicate(ignored -> thread -> thread.getName().startsWith(EVENT_LOOP))
			.install();
		eventLoop = Schedulers.newParallel(EVENT_LOOP, 2);
		context = new SpringApplicationBuilder(LockTestApplication.class, ReactiveConfiguration.class)
			.web(WebApplicationType.NONE)
			.properties("spring.data.redis.port=" + redis.server().port(),
					"spring.datasource.url=jdbc:h2:mem:blockhound;DB_CLOSE_DELAY=-1", "test.lock-wait=750ms", "distlock.restart-grace=0",
					"spring.main.banner-mode=off")
			.run();
	}

	@AfterAll
	static void stop() {
		context.close();
		eventLoop.dispose();
	}

	@Test
	void blockHoundCatchesALockWaitOnTheEventLoop() throws Exception {
		LockRegistry registry = context.getBean(LockRegistry.class);
		DistLock lock = registry.getLock("watched");
		// The control: waiting for a lock the plain way on a watched thread is reported. The lock is
		// held by another thread so that the wait really parks: an uncontended tryLock whose reply
		// is already in when it looks never parks, and BlockHound (rightly) sees nothing. Wherever
		// it parks first (waiting for Redis's reply, in the waiting room, arming the deadline), the
		// BlockingOperationError reaches the caller as itself: clean-ups that fail on the way out
		// (leaving the queue blocks too) are only added to it (ErrorsWhileWaitingTest in lock-core).
		CountDownLatch held = new CountDownLatch(1);
		CountDownLatch done = new CountDownLatch(1);
		Thread holding = new Thread(() -> {
			DistLock holder = registry.getLock("watched");
			holder.lock();
			try {
				held.countDown();
				done.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				holder.unlock();
			}
		});
		holding.start();
		try {
			assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
			assertThatThrownBy(() -> Mono.fromCallable(() -> lock.tryLock(Duration.ofMillis(500), null))
				.subscribeOn(eventLoop)
				.block(Duration.ofSeconds(10)))
				// Reactor's block() wraps a checked or non-fatal error in a ReactiveException.
				.satisfies(thrown -> assertThat(thrown instanceof BlockingOperationError ? thrown : thrown.getCause())
					.as("what block() threw: %s", thrown)
					.isInstanceOf(BlockingOperationError.class));
		}
		finally {
			done.countDown();
			holding.join();
		}
	}

	@Test
	void aMonoWaitingForAContendedLockBlocksNoEventLoopThread() throws Exception {
		ReactiveShipping shipping = context.getBean(ReactiveShipping.class);
		DistLock holder = context.getBean(LockRegistry.class).getLock("ship");
		CountDownLatch held = new CountDownLatch(1);
		Thread holding = new Thread(() -> {
			holder.lock();
			try {
				held.countDown();
				Thread.sleep(500);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				holder.unlock();
			}
		});
		holding.start();
		assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
		AtomicReference<Throwable> failure = new AtomicReference<>();
		long start = System.nanoTime();
		String shipped = shipping.ship().subscribeOn(eventLoop).doOnError(failure::set).block(Duration.ofSeconds(30));
		holding.join();
		assertThat(failure.get()).isNull();
		assertThat(shipped).isEqualTo("shipped");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("it waited for the holder")
			.isGreaterThan(Duration.ofMillis(200));
	}

	/** A locked Mono method. */
	static class ReactiveShipping {

		@DistributedLock(key = "'ship'", waitTime = "10s")
		public Mono<String> ship() {
			return Mono.just("shipped");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ReactiveConfiguration {

		@Bean
		ReactiveShipping reactiveShipping() {
			return new ReactiveShipping();
		}

	}

}
