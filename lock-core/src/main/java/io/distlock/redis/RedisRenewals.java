package io.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;

import io.distlock.core.LockBackend.HoldRef;

/**
 * Renews holds of any kinds on one Redis deployment in as few scripts as it allows (one on a single server, one
 * per slot on a Cluster), giving up once the caller's time is out.
 */
final class RedisRenewals {

	private final RedisLockCalls calls;

	/** Renews where scripts go through the template: the watchdog waits only as long as the lease allows. */
	private final ExecutorService renewals = Executors.newCachedThreadPool(RedisLockCalls.daemon("distlock-renewal"));

	RedisRenewals(RedisLockCalls calls) {
		this.calls = calls;
	}

	/**
	 * Gives up after {@code within}: a renewal that would land after the lease it extends has run out
	 * is worth nothing, and the holder must learn of the loss then, not at the connection's command
	 * timeout. Through the template (a Cluster, a pool) the calls run on a renewal thread, which goes
	 * on waiting for them in the background.
	 * @param within how long the caller can wait, or {@code null} for the connection's command timeout
	 */
	List<Boolean> renew(List<HoldRef> holds, Duration lease, Duration within) {
		if (within != null && !this.calls.keys().cluster() && this.calls.direct()) {
			return this.calls.renewInOneScript(holds, lease, within);
		}
		if (within == null) {
			return renewPerSlot(holds, lease);
		}
		CompletableFuture<List<Boolean>> renewal = new CompletableFuture<>();
		try {
			this.renewals.execute(() -> {
				try {
					renewal.complete(renewPerSlot(holds, lease));
				}
				catch (RuntimeException ex) {
					renewal.completeExceptionally(ex);
				}
			});
			return renewal.get(within.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			throw new RedisCommandTimeoutException("Redis (" + this.calls.description() + ") did not confirm the renewal of "
					+ holds.size() + " lock(s) within " + within.toMillis() + " ms");
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof RuntimeException runtime) ? runtime : new IllegalStateException(ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RedisCommandInterruptedException(ex);
		}
		catch (RejectedExecutionException ex) {
			throw new IllegalStateException("Lock backend for " + this.calls.description() + " is closed", ex);
		}
	}

	private List<Boolean> renewPerSlot(List<HoldRef> holds, Duration lease) {
		if (!this.calls.keys().cluster()) {
			return this.calls.renewInOneScript(holds, lease, null);
		}
		// A script may only touch keys of one slot: one call per slot.
		Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
		for (int i = 0; i < holds.size(); i++) {
			bySlot.computeIfAbsent(this.calls.slot(holds.get(i)), slot -> new ArrayList<>()).add(i);
		}
		Boolean[] renewed = new Boolean[holds.size()];
		for (List<Integer> indexes : bySlot.values()) {
			List<Boolean> slotResult = this.calls.renewInOneScript(indexes.stream().map(holds::get).toList(), lease, null);
			for (int j = 0; j < indexes.size(); j++) {
				renewed[indexes.get(j)] = slotResult.get(j);
			}
		}
		return List.of(renewed);
	}

	void close() {
		this.renewals.shutdown();
	}

}
