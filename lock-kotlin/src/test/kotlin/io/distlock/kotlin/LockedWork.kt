package io.distlock.kotlin

import io.distlock.annotation.DistributedLock
import io.reactivex.rxjava3.core.Flowable
import io.reactivex.rxjava3.core.Single
import io.smallrye.mutiny.Uni
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.withContext
import io.distlock.annotation.LockContext
import io.distlock.annotation.OnLockFailure
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicLong
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.context.annotation.Configuration
import org.springframework.context.annotation.Import
import org.springframework.stereotype.Service
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/** One application instance: distlock's auto-configuration on the test's own Redis, and [LockedWork]. */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
@Import(LockedWork::class)
class LockedWorkApplication

/** Counts the bodies inside one critical section at once; more than one means the lock failed. */
class Inside {
	private val now = AtomicInteger()
	val max = AtomicInteger()
	val runs = AtomicInteger()

	fun enter() {
		runs.incrementAndGet()
		max.accumulateAndGet(now.incrementAndGet(), ::maxOf)
	}

	fun leave() {
		now.decrementAndGet()
	}

	companion object {
		private val byKey = ConcurrentHashMap<String, Inside>()

		fun of(key: String): Inside = byKey.computeIfAbsent(key) { Inside() }

		fun reset() = byKey.clear()
	}
}

/**
 * Suspending and reactive methods under `@DistributedLock`, as a Kotlin service writes them. Two
 * application contexts in one JVM stand for two instances: they share [counter] and [Inside], as two
 * instances share a database row.
 */
@Service
class LockedWork {

	@DistributedLock(key = ["'ledger'"], waitTime = "120s")
	suspend fun add() = addUnlocked()

	/** The same read-suspend-write, without the lock: shows the counter breaks without it. */
	suspend fun addUnlocked() {
		val inside = Inside.of("ledger")
		inside.enter()
		try {
			val seen = counter
			delay(1)
			counter = seen + 1
		}
		finally {
			inside.leave()
		}
	}

	@DistributedLock(key = ["'hang'"], waitTime = "30s")
	suspend fun hang(entered: CompletableDeferred<Unit>) {
		Inside.of("hang").enter()
		entered.complete(Unit)
		awaitCancellation()
	}

	/** Cancelled, it takes a while to stop: its lock must be held until it has. */
	@DistributedLock(key = ["'slow-stop'"], waitTime = "30s")
	suspend fun stopSlowly(entered: CompletableDeferred<Unit>, stopped: AtomicBoolean, token: AtomicLong) {
		token.set(LockContext.fencingToken())
		entered.complete(Unit)
		try {
			awaitCancellation()
		}
		finally {
			withContext(NonCancellable) {
				delay(300)
				stopped.set(true)
			}
		}
	}

	@DistributedLock(key = ["'busy'"], waitTime = "100ms")
	suspend fun busy(): Int = 1

	@DistributedLock(key = ["'suspend-flow'"], waitTime = "60s")
	suspend fun streamLater(): Flow<Int> {
		delay(1)
		return stream()
	}

	@DistributedLock(key = ["'stream'"], waitTime = "60s")
	fun stream(): Flow<Int> = flow {
		val inside = Inside.of("stream")
		inside.enter()
		try {
			repeat(3) {
				delay(2)
				emit(it)
			}
		}
		finally {
			inside.leave()
		}
	}

	@DistributedLock(key = ["'single'"], waitTime = "60s")
	fun single(): Single<Int> = Single.defer {
		val inside = Inside.of("single")
		inside.enter()
		Single.timer(3, TimeUnit.MILLISECONDS).map { inside.leave(); 1 }
	}

	@DistributedLock(key = ["'flowable'"], waitTime = "60s")
	fun flowable(): Flowable<Long> = Flowable.defer {
		val inside = Inside.of("flowable")
		inside.enter()
		// Before the last signal, not after it (doFinally), which is when the lock is released.
		Flowable.intervalRange(0, 3, 0, 2, TimeUnit.MILLISECONDS).doOnTerminate { inside.leave() }.doOnCancel { inside.leave() }
	}

	@DistributedLock(key = ["'uni'"], waitTime = "60s")
	fun uni(): Uni<Int> = Uni.createFrom().deferred {
		val inside = Inside.of("uni")
		inside.enter()
		Uni.createFrom().item(1).onItem().delayIt().by(Duration.ofMillis(3)).onTermination().invoke { _, _, _ -> inside.leave() }
	}

	companion object {
		@Volatile
		var counter = 0
	}
}

/** A suspend function that hands back work still running: its lock would end before the work. */
@Service
class SuspendedFutureWork {
	@DistributedLock(key = ["'suspended-future'"])
	suspend fun started(): java.util.concurrent.CompletableFuture<Int> = java.util.concurrent.CompletableFuture.completedFuture(1)
}

/** Skipped, a suspend function answers null: this one may. */
@Service
class NullableSkippedWork {
	@DistributedLock(key = ["'skipped'"], waitTime = "50ms", onFailure = OnLockFailure.SKIP)
	suspend fun count(): Int? = 1
}

/** Skipped, a suspend function answers null: this one must not. */
@Service
class NonNullSkippedWork {
	@DistributedLock(key = ["'skipped'"], onFailure = OnLockFailure.SKIP)
	suspend fun count(): Int = 1
}

/** A Deferred's work starts before anyone could subscribe, so no lock taken on subscription covers it. */
@Service
class DeferredWork {
	@DistributedLock(key = ["'deferred'"])
	fun started(): Deferred<Int> = CompletableDeferred(1)
}
