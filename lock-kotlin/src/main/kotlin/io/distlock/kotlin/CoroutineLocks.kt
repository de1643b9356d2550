/**
 * Kotlin coroutines for distlock: run a suspending block under a distributed lock, without blocking
 * a thread while waiting for it or while holding it.
 *
 * The hold belongs to the block's work, not to a thread (a distlock work hold), so the block may
 * suspend and resume on any thread of its dispatcher. Cancelling the calling coroutine while it
 * waits ends the wait; cancelling it while the block runs cancels the block, and the lock is released
 * only once the block and its children have ended.
 */
@file:JvmName("CoroutineLocks")

package io.distlock.kotlin

import io.distlock.LockRegistry
import io.distlock.WorkHold
import io.distlock.reactor.ReactiveLocks
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.future.await
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withContext
import java.time.Duration
import java.util.concurrent.CompletionException
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlin.time.toJavaDuration

/**
 * Runs [block] under the lock [name]: waits up to [waitTime] for it without blocking a thread, runs
 * the block in the caller's coroutine, and releases the lock after the block has returned, thrown
 * or been cancelled, and its children have ended.
 *
 * ```
 * val receipt = registry.withLock("order:$id", 2.seconds) { ship(id) }
 * ```
 *
 * @param leaseTime the lease, or `null` for the watchdog, which renews it while the block runs
 * @return what the block returned
 * @throws io.distlock.LockNotAcquiredException if another holder kept the lock for the whole wait;
 * the block did not run
 * @throws io.distlock.LockBackendException if the backend did not answer; the block did not run
 * @throws io.distlock.LockLostException if the hold was lost before the release, so the block may
 * have run while another held the lock
 */
suspend fun <T> LockRegistry.withLock(
	name: String,
	waitTime: Duration,
	leaseTime: Duration? = null,
	block: suspend CoroutineScope.() -> T,
): T {
	val start = System.nanoTime()
	val hold = awaitHold(name, waitTime, leaseTime)
		?: throw notAcquired(name, Duration.ofNanos(System.nanoTime() - start))
	val result = try {
		coroutineScope(block)
	}
	catch (failure: Throwable) {
		// The block's own failure (or cancel) stands; a release that fails too is attached to it.
		withContext(NonCancellable) {
			runCatching { hold.releaseAsync().await() }.exceptionOrNull()?.let { failure.addSuppressed(unwrap(it)) }
		}
		throw failure
	}
	try {
		withContext(NonCancellable) { hold.releaseAsync().await() }
	}
	catch (failure: CompletionException) {
		throw unwrap(failure)
	}
	return result
}

/** As [LockRegistry.withLock], with Kotlin's durations. */
suspend fun <T> LockRegistry.withLock(
	name: String,
	waitTime: kotlin.time.Duration,
	leaseTime: kotlin.time.Duration? = null,
	block: suspend CoroutineScope.() -> T,
): T = withLock(name, waitTime.toJavaDuration(), leaseTime?.toJavaDuration(), block)

/** As [LockRegistry.withLock], on the registry of this reactive face. */
suspend fun <T> ReactiveLocks.withLock(
	name: String,
	waitTime: Duration,
	leaseTime: Duration? = null,
	block: suspend CoroutineScope.() -> T,
): T = lockRegistry().withLock(name, waitTime, leaseTime, block)

/** As [LockRegistry.withLock], on the registry of this reactive face, with Kotlin's durations. */
suspend fun <T> ReactiveLocks.withLock(
	name: String,
	waitTime: kotlin.time.Duration,
	leaseTime: kotlin.time.Duration? = null,
	block: suspend CoroutineScope.() -> T,
): T = lockRegistry().withLock(name, waitTime.toJavaDuration(), leaseTime?.toJavaDuration(), block)

/**
 * Waits for the hold without a thread. A cancel while waiting cancels the acquisition, which gives
 * back a hold won at that moment; a hold that arrives as the caller is cancelled is given back here.
 */
private suspend fun LockRegistry.awaitHold(name: String, waitTime: Duration, leaseTime: Duration?): WorkHold? {
	val acquisition = tryLockForWorkAsync(name, waitTime, leaseTime)
	return suspendCancellableCoroutine { waiter ->
		waiter.invokeOnCancellation { acquisition.cancel(false) }
		acquisition.whenComplete { taken, error ->
			if (error != null) {
				waiter.resumeWithException(unwrap(error))
			}
			else {
				val hold = taken.orElse(null)
				waiter.resume(hold) { _, _, _ -> hold?.releaseAsync() }
			}
		}
	}
}

private fun unwrap(error: Throwable): Throwable =
	if (error is CompletionException && error.cause != null) error.cause!! else error
