package io.distlock.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import io.distlock.LockRegistryStats;
import io.distlock.LockRegistryStats.BackendHealth;

/**
 * Whether the lock backend answers: a PING to the Redis server, or to each Redlock node with the
 * quorum state. Takes no lock, so it can never collide with a real one.
 *
 * <p>It answers within {@code distlock.health.timeout}: a frozen server would otherwise hold the
 * health endpoint for the client's command timeout (23 s with Lettuce's defaults and a Redlock
 * retry), longer than any probe waits. A check that has not answered is not started again while it
 * hangs, so a frozen backend costs one thread, not one per probe.
 */
class DistLockHealthIndicator extends BootHealthIndicator {

	private final LockRegistries registries;

	private final Duration timeout;

	private final Executor executor;

	/** The check running now, or {@code null}: every probe meanwhile waits on it instead of starting one. */
	private final AtomicReference<CompletableFuture<BackendHealth>> running = new AtomicReference<>();

	DistLockHealthIndicator(LockRegistries registries, Duration timeout) {
		this(registries, timeout, DistLockHealthIndicator::daemon);
	}

	DistLockHealthIndicator(LockRegistries registries, Duration timeout, Executor executor) {
		super("distlock backend health check failed");
		if (timeout == null || timeout.isNegative() || timeout.isZero()) {
			throw new InvalidDistLockPropertyException("distlock.health.timeout", timeout, "must be positive",
					"Set distlock.health.timeout to a duration below your probes' timeout, such as 1s.");
		}
		this.registries = registries;
		this.timeout = timeout;
		this.executor = executor;
	}

	private static void daemon(Runnable check) {
		Thread thread = new Thread(check, "distlock-health");
		thread.setDaemon(true);
		thread.start();
	}

	@Override
	BackendHealth backendHealth() {
		CompletableFuture<BackendHealth> check = runningCheck();
		try {
			return check.get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			return down("the lock backend did not answer within " + text(this.timeout));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return down("interrupted while waiting for the lock backend");
		}
		catch (ExecutionException ex) {
			// As Spring Boot's Health.Builder.down(Throwable) words it.
			return down(ex.getCause().getClass().getName() + ": " + ex.getCause().getMessage());
		}
	}

	private static BackendHealth down(String error) {
		return new BackendHealth(false, Map.of("error", error));
	}

	/**
	 * @return the check in progress, or a new one: claimed before it starts, so that probes arriving
	 * together (liveness, readiness, the health endpoint) share one check and one thread
	 */
	private CompletableFuture<BackendHealth> runningCheck() {
		while (true) {
			CompletableFuture<BackendHealth> current = this.running.get();
			if (current != null) {
				return current;
			}
			CompletableFuture<BackendHealth> check = new CompletableFuture<>();
			if (this.running.compareAndSet(null, check)) {
				check.whenComplete((health, failure) -> this.running.compareAndSet(check, null));
				try {
					this.executor.execute(() -> {
						try {
							check.complete(check());
						}
						catch (Throwable failure) {
							check.completeExceptionally(failure);
						}
					});
				}
				catch (RuntimeException | Error ex) {
					check.completeExceptionally(ex);
				}
				return check;
			}
		}
	}

	private static String text(Duration duration) {
		return (duration.toMillis() % 1000 == 0) ? duration.toSeconds() + "s" : duration.toMillis() + "ms";
	}

	private BackendHealth check() {
		Map<String, LockRegistryStats> all = this.registries.all();
		if (all.size() == 1) {
			return all.values().iterator().next().backendHealth();
		}
		// With several registries every one is needed by some method: up only if all are.
		boolean up = true;
		Map<String, Object> registries = new LinkedHashMap<>();
		for (Map.Entry<String, LockRegistryStats> registry : all.entrySet()) {
			BackendHealth health = registry.getValue().backendHealth();
			up &= health.up();
			Map<String, Object> details = new LinkedHashMap<>(health.details());
			details.put("status", health.up() ? "UP" : "DOWN");
			registries.put(registry.getKey(), details);
		}
		return new BackendHealth(up, registries);
	}

}
