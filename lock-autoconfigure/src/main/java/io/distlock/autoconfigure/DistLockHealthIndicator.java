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

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.distlock.LockRegistryStats;

/**
 * Whether the lock backend answers: a PING to the Redis server, or to each Redlock node with the
 * quorum state. Takes no lock, so it can never collide with a real one.
 *
 * <p>It answers within {@code distlock.health.timeout}: a frozen server would otherwise hold the
 * health endpoint for the client's command timeout (23 s with Lettuce's defaults and a Redlock
 * retry), longer than any probe waits. A check that has not answered is not started again while it
 * hangs, so a frozen backend costs one thread, not one per probe.
 */
class DistLockHealthIndicator extends AbstractHealthIndicator {

	private final LockRegistries registries;

	private final Duration timeout;

	private final Executor executor;

	/** The check running now, or {@code null}: every probe meanwhile waits on it instead of starting one. */
	private final AtomicReference<CompletableFuture<Health>> running = new AtomicReference<>();

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
	protected void doHealthCheck(Health.Builder builder) throws Exception {
		CompletableFuture<Health> check = runningCheck();
		try {
			Health health = check.get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
			builder.status(health.getStatus()).withDetails(health.getDetails());
		}
		catch (TimeoutException ex) {
			builder.down().withDetail("error", "the lock backend did not answer within " + text(this.timeout));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			builder.down().withDetail("error", "interrupted while waiting for the lock backend");
		}
		catch (ExecutionException ex) {
			builder.down(ex.getCause());
		}
	}

	/**
	 * @return the check in progress, or a new one: claimed before it starts, so that probes arriving
	 * together (liveness, readiness, the health endpoint) share one check and one thread
	 */
	private CompletableFuture<Health> runningCheck() {
		while (true) {
			CompletableFuture<Health> current = this.running.get();
			if (current != null) {
				return current;
			}
			CompletableFuture<Health> check = new CompletableFuture<>();
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

	private Health check() {
		Health.Builder builder = new Health.Builder();
		Map<String, LockRegistryStats> all = this.registries.all();
		if (all.size() == 1) {
			LockRegistryStats.BackendHealth health = all.values().iterator().next().backendHealth();
			return (health.up() ? builder.up() : builder.down()).withDetails(health.details()).build();
		}
		// With several registries every one is needed by some method: up only if all are.
		boolean up = true;
		for (Map.Entry<String, LockRegistryStats> registry : all.entrySet()) {
			LockRegistryStats.BackendHealth health = registry.getValue().backendHealth();
			up &= health.up();
			Map<String, Object> details = new LinkedHashMap<>(health.details());
			details.put("status", health.up() ? "UP" : "DOWN");
			builder.withDetail(registry.getKey(), details);
		}
		return (up ? builder.up() : builder.down()).build();
	}

}
