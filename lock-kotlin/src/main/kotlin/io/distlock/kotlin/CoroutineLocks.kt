/**
 * Kotlin coroutines for distlock: run a suspending block under a distributed lock, without blocking
 * a thread while waiting for it or while holding it.
 *
 * The hold belongs to the block's work, not to a thread (a distlock work hold), so the block may
 * suspend and resume on any thread of its dispatcher. Cancelling the calling coroutine while it
 * waits ends the wait; cancelling it while the block runs cancels the block and releases the lock.
 */
@file:JvmName("CoroutineLocks")

package io.distlock.kotlin

import io.distlock.LockRegistry
import io.distlock.reactor.ReactiveLocks
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.reactor.awaitSingleOrNull
import kotlinx.coroutines.reactor.mono
import java.time.Duration
import kotlin.coroutines.coroutineContext
import kotlin.time.toJavaDuration

/**
 * Runs [block] under the lock [name]: waits up to [waitTime] for it without blocking a thread, runs
 * the block in the caller's coroutine context (its dispatcher, its context elements), and releases
 * the lock when the block returns, throws or is cancelled.
 *
 * ```
 * val locks = ReactiveLocks.of(registry)
 * val shipped = locks.withLock("order:$id", Duration.ofSeconds(2)) { ship(id) }
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
suspend fun <T> ReactiveLocks.withLock(
	name: String,
	waitTime: Duration,
	leaseTime: Duration? = null,
	block: suspend CoroutineScope.() -> T,
): T {
	// The block runs as a child of no job of the caller's: the Mono's subscription is what ties it to
	// the caller, so cancelling the caller cancels the subscription, which cancels the block and then
	// releases the lock, in that order.
	val context = coroutineContext.minusKey(Job)
	@Suppress("UNCHECKED_CAST")
	return withLock(name, waitTime, leaseTime, mono(context) { block() }).awaitSingleOrNull() as T
}

/** As [ReactiveLocks.withLock], with Kotlin's durations. */
suspend fun <T> ReactiveLocks.withLock(
	name: String,
	waitTime: kotlin.time.Duration,
	leaseTime: kotlin.time.Duration? = null,
	block: suspend CoroutineScope.() -> T,
): T = withLock(name, waitTime.toJavaDuration(), leaseTime?.toJavaDuration(), block)

/** As [ReactiveLocks.withLock], on this registry's reactive face. */
suspend fun <T> LockRegistry.withLock(
	name: String,
	waitTime: kotlin.time.Duration,
	leaseTime: kotlin.time.Duration? = null,
	block: suspend CoroutineScope.() -> T,
): T = ReactiveLocks.of(this).withLock(name, waitTime, leaseTime, block)
