package io.distlock.kotlin

import io.distlock.DistLock
import io.distlock.LockRegistry
import io.distlock.LockRegistryStats
import io.distlock.embedded.RedisServerProcess
import io.distlock.reactor.ReactiveLocks
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.springframework.boot.WebApplicationType
import org.springframework.boot.builder.SpringApplicationBuilder
import org.springframework.context.ConfigurableApplicationContext
import reactor.core.publisher.Flux
import reactor.core.publisher.Mono
import java.time.Duration
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong
import io.distlock.annotation.LockAcquisitionException
import kotlin.time.Duration.Companion.seconds

/**
 * `@DistributedLock` on suspend functions, Flows, RxJava 3 and Mutiny types, and the coroutine
 * `withLock`: two application instances against one real Redis, a shared counter that breaks
 * without the lock, and a count of bodies inside at once that must never pass one.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class CoroutineLockingTest {

	private val contexts = mutableListOf<ConfigurableApplicationContext>()

	private lateinit var first: LockedWork

	private lateinit var second: LockedWork

	@BeforeEach
	fun startTwoInstances() {
		Inside.reset()
		LockedWork.counter = 0
		first = start(LockedWorkApplication::class.java).getBean(LockedWork::class.java)
		second = start(LockedWorkApplication::class.java).getBean(LockedWork::class.java)
	}

	@AfterEach
	fun closeInstances() = contexts.forEach { it.close() }

	private fun start(vararg sources: Class<*>): ConfigurableApplicationContext =
		SpringApplicationBuilder(*sources)
			.web(WebApplicationType.NONE)
			.properties("spring.data.redis.port=${redis.port()}", "distlock.restart-grace=0",
				"spring.main.banner-mode=off")
			.run()
			.also { contexts += it }

	private fun registry(instance: Int): LockRegistry = contexts[instance].getBean(LockRegistry::class.java)

	@Test
	fun aThousandCoroutinesOnTwoInstancesAddOneEachUnderTheLock(): Unit = runBlocking {
		withContext(Dispatchers.Default) {
			(0 until 1000).map { i -> async { (if (i % 2 == 0) first else second).add() } }.awaitAll()
		}
		assertThat(LockedWork.counter).isEqualTo(1000)
		assertThat(Inside.of("ledger").max.get()).`as`("bodies inside at once, across two instances").isEqualTo(1)
	}

	@Test
	fun withoutTheLockTheSameCoroutinesLoseUpdates(): Unit = runBlocking {
		withContext(Dispatchers.Default) {
			(0 until 1000).map { i -> async { (if (i % 2 == 0) first else second).addUnlocked() } }.awaitAll()
		}
		assertThat(LockedWork.counter).`as`("the counter the locked test relies on breaks without the lock")
			.isLessThan(1000)
		assertThat(Inside.of("ledger").max.get()).isGreaterThan(1)
	}

	@Test
	fun cancellingTheCoroutineReleasesItsLock(): Unit = runBlocking {
		val other: DistLock = registry(1).getLock("hang")
		val entered = CompletableDeferred<Unit>()
		val job = launch(Dispatchers.Default) { first.hang(entered) }
		withTimeout(30.seconds) { entered.await() }
		assertThat(other.tryLock()).`as`("held while the coroutine runs").isFalse()
		job.cancelAndJoin()
		await().pollInSameThread().atMost(Duration.ofSeconds(10)).until(other::tryLock)
		other.unlock()
	}

	@Test
	fun aCoroutineCancelledWhileWaitingNeverRunsItsBody(): Unit = runBlocking {
		val other: DistLock = registry(1).getLock("hang")
		assertThat(other.tryLock()).isTrue()
		val entered = CompletableDeferred<Unit>()
		val job = launch(Dispatchers.Default) { first.hang(entered) }
		await().atMost(Duration.ofSeconds(10)).until { (registry(0) as LockRegistryStats).waitingThreads() > 0 }
		job.cancelAndJoin()
		other.unlock()
		// Were the cancelled wait still alive it would take the free lock now; another instance takes it.
		await().pollInSameThread().atMost(Duration.ofSeconds(10)).until(other::tryLock)
		other.unlock()
		assertThat(entered.isCompleted).isFalse()
		assertThat(Inside.of("hang").runs.get()).isZero()
	}

	@Test
	fun aCancelledSuspendFunctionKeepsItsLockUntilItHasStopped(): Unit = runBlocking {
		val entered = CompletableDeferred<Unit>()
		val stopped = AtomicBoolean()
		val token = AtomicLong()
		val job = launch(Dispatchers.Default) { first.stopSlowly(entered, stopped, token) }
		withTimeout(30.seconds) { entered.await() }
		assertThat(token.get()).`as`("LockContext's fencing token inside the suspend function").isPositive()
		val other: DistLock = registry(1).getLock("slow-stop")
		job.cancel()
		await().pollInSameThread().atMost(Duration.ofSeconds(10)).until(other::tryLock)
		assertThat(stopped.get()).`as`("the cancelled body had stopped before another instance got its lock").isTrue()
		other.unlock()
	}

	@Test
	fun aSuspendFunctionThatFindsItsLockBusyThrows(): Unit = runBlocking {
		val other: DistLock = registry(1).getLock("busy")
		assertThat(other.tryLock()).isTrue()
		try {
			assertThatThrownBy { runBlocking { first.busy() } }.isInstanceOf(LockAcquisitionException::class.java)
				.hasMessageContaining("busy")
		}
		finally {
			other.unlock()
		}
		assertThat(first.busy()).isEqualTo(1)
	}

	@Test
	fun aSuspendFunctionReturningAFlowKeepsItsLockUntilTheFlowCompletes(): Unit = runBlocking {
		val elements = withContext(Dispatchers.Default) {
			(0 until 4).map { i -> async { (if (i % 2 == 0) first else second).streamLater().toList() } }.awaitAll()
		}
		assertThat(elements.flatten()).hasSize(12)
		assertThat(Inside.of("stream").max.get()).`as`("flows emitting at once, across two instances").isEqualTo(1)
	}

	@Test
	fun flowsKeepTheirLockUntilTheyComplete(): Unit = runBlocking {
		val elements = withContext(Dispatchers.Default) {
			(0 until 6).map { i -> async { (if (i % 2 == 0) first else second).stream().toList() } }.awaitAll()
		}
		assertThat(elements.flatten()).hasSize(18)
		assertThat(Inside.of("stream").max.get()).`as`("flows emitting at once, across two instances").isEqualTo(1)
	}

	@Test
	fun aFlowCollectedOnlyInPartReleasesItsLock(): Unit = runBlocking {
		assertThat(first.stream().take(1).toList()).containsExactly(0)
		val other: DistLock = registry(1).getLock("stream")
		await().pollInSameThread().atMost(Duration.ofSeconds(10)).until(other::tryLock)
		other.unlock()
	}

	@Test
	fun rxJavaAndMutinyTypesKeepTheirLockUntilTheyComplete() {
		val singles = Flux.merge((0 until 6).map { i -> (if (i % 2 == 0) first else second).single().toFlowable() })
		val flowables = Flux.merge((0 until 4).map { i -> (if (i % 2 == 0) first else second).flowable() })
		val unis = Flux.merge((0 until 6).map { i ->
			Mono.fromCompletionStage { (if (i % 2 == 0) first else second).uni().subscribeAsCompletionStage() }
		})
		assertThat(singles.collectList().block(Duration.ofSeconds(60))).hasSize(6)
		assertThat(flowables.collectList().block(Duration.ofSeconds(60))).hasSize(12)
		assertThat(unis.collectList().block(Duration.ofSeconds(60))).hasSize(6)
		for (key in listOf("single", "flowable", "uni")) {
			assertThat(Inside.of(key).max.get()).`as`("$key bodies inside at once").isEqualTo(1)
			assertThat(Inside.of(key).runs.get()).`as`("$key bodies run").isPositive()
		}
	}

	@Test
	fun withLockRunsCoroutinesOneAtATimeAcrossInstances(): Unit = runBlocking {
		val locks = listOf(ReactiveLocks.of(registry(0)), ReactiveLocks.of(registry(1)))
		val inside = Inside.of("with-lock")
		// Read and written apart, on purpose: only the lock keeps the two from interleaving.
		val counter = AtomicInteger()
		val results = withContext(Dispatchers.Default) {
			(0 until 200).map { i ->
				async {
					locks[i % 2].withLock("with-lock", 60.seconds) {
						inside.enter()
						try {
							val seen = counter.get()
							delay(1)
							counter.set(seen + 1)
							i
						}
						finally {
							inside.leave()
						}
					}
				}
			}.awaitAll()
		}
		assertThat(results).hasSize(200)
		assertThat(counter.get()).isEqualTo(200)
		assertThat(inside.max.get()).isEqualTo(1)
	}

	@Test
	fun withLockReleasesWhenItsBlockIsCancelled(): Unit = runBlocking {
		val entered = CompletableDeferred<Unit>()
		val job = launch(Dispatchers.Default) {
			registry(0).withLock("with-lock-cancel", 10.seconds) {
				entered.complete(Unit)
				kotlinx.coroutines.awaitCancellation()
			}
		}
		withTimeout(30.seconds) { entered.await() }
		val other: DistLock = registry(1).getLock("with-lock-cancel")
		assertThat(other.tryLock()).isFalse()
		job.cancelAndJoin()
		await().pollInSameThread().atMost(Duration.ofSeconds(10)).until(other::tryLock)
		other.unlock()
	}

	@Test
	fun withLockReleasesOnlyAfterItsCancelledBlockHasStopped(): Unit = runBlocking {
		val entered = CompletableDeferred<Unit>()
		val stopped = AtomicBoolean()
		val job = launch(Dispatchers.Default) {
			registry(0).withLock("with-lock-slow-stop", 10.seconds) {
				entered.complete(Unit)
				try {
					kotlinx.coroutines.awaitCancellation()
				}
				finally {
					withContext(NonCancellable) {
						delay(300)
						stopped.set(true)
					}
				}
			}
		}
		withTimeout(30.seconds) { entered.await() }
		val other: DistLock = registry(1).getLock("with-lock-slow-stop")
		job.cancel()
		await().pollInSameThread().atMost(Duration.ofSeconds(10)).until(other::tryLock)
		assertThat(stopped.get()).`as`("the cancelled block had stopped before another instance got the lock").isTrue()
		other.unlock()
	}

	@Test
	fun aSuspendFunctionReturningRunningWorkIsRefusedAtStartUp() {
		assertThatThrownBy { start(LockedWorkApplication::class.java, SuspendedFutureWork::class.java) }
			.rootCause()
			.hasMessageContaining("SuspendedFutureWork.started")
			.hasMessageContaining("CompletableFuture from a suspend function")
	}

	@Test
	fun aSkippedSuspendFunctionThatCannotReturnNullStopsStartUp() {
		assertThatThrownBy { start(LockedWorkApplication::class.java, NonNullSkippedWork::class.java) }
			.rootCause()
			.hasMessageContaining("NonNullSkippedWork.count")
			.hasMessageContaining("is not nullable")
	}

	@Test
	fun aSkippedSuspendFunctionThatMayReturnNullAnswersNullWhenBusy(): Unit = runBlocking {
		val work = start(LockedWorkApplication::class.java, NullableSkippedWork::class.java)
			.getBean(NullableSkippedWork::class.java)
		val other: DistLock = registry(1).getLock("skipped")
		assertThat(other.tryLock()).isTrue()
		try {
			assertThat(work.count()).isNull()
		}
		finally {
			other.unlock()
		}
		assertThat(work.count()).isEqualTo(1)
	}

	@Test
	fun aDeferredResultIsRefusedAtStartUpNamingTheMethod() {
		assertThatThrownBy { start(LockedWorkApplication::class.java, DeferredWork::class.java) }
			.rootCause()
			.hasMessageContaining("DeferredWork.started")
			.hasMessageContaining("Deferred")
	}

	companion object {
		private lateinit var redis: RedisServerProcess

		@JvmStatic
		@BeforeAll
		fun startRedis() {
			redis = RedisServerProcess.start()
		}

		@JvmStatic
		@AfterAll
		fun stopRedis() = redis.close()
	}
}
