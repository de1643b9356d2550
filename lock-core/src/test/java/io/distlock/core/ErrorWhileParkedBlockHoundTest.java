package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.distlock.DistLock;
import io.distlock.core.AsyncAcquisitionTest.HeldElsewhere;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;

/**
 * An Error thrown where a waiting thread parks reaches the caller as itself. BlockHound throws one
 * from every park of the threads it watches, as it did on CI's event loop, where the wait's own
 * lock was left half-taken and the caller got an unrelated IllegalMonitorStateException. Runs in a
 * JVM of its own (see the module's pom): BlockHound stays installed for the JVM's life.
 */
class ErrorWhileParkedBlockHoundTest {

	private static final String WATCHED = "distlock-test-watched";

	@BeforeAll
	static void watchOneThread() {
		BlockHound.builder()
			.loadIntegrations()
			.nonBlockingThreadPredicate(ignored -> thread -> thread.getName().startsWith(WATCHED))
			.install();
	}

	@Test
	void anErrorThrownWhereAWaiterParksReachesTheCallerAsItself() throws Exception {
		HeldElsewhere backend = new HeldElsewhere();
		BackendLockRegistry engine = new BackendLockRegistry(backend, LockEngineOptions.builder().clientId("c1").build());
		try {
			DistLock lock = engine.getLock("x");
			CompletableFuture<Throwable> thrown = new CompletableFuture<>();
			Thread watched = new Thread(() -> {
				try {
					thrown.complete(lock.tryLock(Duration.ofSeconds(10)) ? null : new AssertionError("timed out"));
				}
				catch (Throwable ex) {
					thrown.complete(ex);
				}
			}, WATCHED);
			watched.start();
			assertThat(thrown.get(30, TimeUnit.SECONDS)).isInstanceOf(BlockingOperationError.class);
			await().atMost(Duration.ofSeconds(5)).until(() -> engine.waitingThreads() == 0);
			// The room's lock is whole: a thread that may park waits there, and times out, as usual.
			assertThat(lock.tryLock(Duration.ofMillis(200))).isFalse();
			assertThat(engine.waitingThreads()).isZero();
		}
		finally {
			engine.close();
		}
	}

}
