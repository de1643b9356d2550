package io.distlock.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

import io.distlock.HoldInfo;
import io.distlock.LockRegistry;
import io.distlock.LockRegistryStats;

/**
 * The {@code distlock} Actuator endpoint: the locks this instance holds and the locks its threads
 * wait for. Read-only: force-releasing a hold from outside would break the very exclusion the lock
 * exists for, so it is not offered.
 */
@Endpoint(id = "distlock")
public class DistLockEndpoint {

	private final LockRegistries registries;

	DistLockEndpoint(LockRegistries registries) {
		this.registries = registries;
	}

	/** @return this instance's holds and waiters */
	@ReadOperation
	public LocksDescriptor locks() {
		List<HoldDescriptor> holds = new ArrayList<>();
		Map<String, Integer> waiters = new LinkedHashMap<>();
		Map<String, Instant> restartGrace = new LinkedHashMap<>();
		this.registries.all().forEach((registry, stats) -> {
			if (stats instanceof LockRegistry locks) {
				locks.restartGraceEnds().ifPresent(ends -> restartGrace.put(registry, ends));
			}
			stats.heldLocks().forEach(hold -> holds.add(describe(registry, stats, hold)));
			// The default registry's lock names as they are; another registry's behind its name.
			String prefix = LockRegistries.DEFAULT.equals(registry) ? "" : registry + "/";
			stats.waiters().forEach((lock, count) -> waiters.put(prefix + lock, count));
		});
		return new LocksDescriptor(holds, waiters, restartGrace);
	}

	private HoldDescriptor describe(String registry, LockRegistryStats stats, HoldInfo hold) {
		Duration leaseLeft;
		try {
			leaseLeft = stats.remainingLease(hold.lockName(), hold.kind());
		}
		catch (RuntimeException unreachable) {
			leaseLeft = null;
		}
		return new HoldDescriptor(hold.logicalName(), hold.lockName(), hold.threadName(), hold.origin(), hold.since(), leaseLeft,
				hold.renewals(), (hold.fencingToken() >= 0) ? hold.fencingToken() : null, hold.holdCount(),
				hold.watchdog(), hold.lost(), registry, hold.kind().name().toLowerCase(Locale.ROOT));
	}

	/**
	 * What the endpoint answers.
	 *
	 * @param holds the locks held by this instance's threads
	 * @param waiters per lock name, how many threads wait for it (names of a registry other than the
	 * default one start with its name and {@code /}; a read-write lock's end with {@code  (read-write)},
	 * a semaphore's with {@code  (semaphore)})
	 * @param restartGrace per registry whose lock server refused this instance's last acquisition for
	 * its restart grace (it restarted or lost its data), when that grace ends; empty when none serves one
	 */
	public record LocksDescriptor(List<HoldDescriptor> holds, Map<String, Integer> waiters,
			Map<String, Instant> restartGrace) {
	}

	/**
	 * One hold.
	 *
	 * @param name the lock's logical name (the annotation's name, or Class.method), if known
	 * @param lock the lock's key (the resolved key)
	 * @param thread the owning thread
	 * @param method the code that acquired it, if known
	 * @param heldSince when it was acquired
	 * @param leaseLeft how long the backend keeps it without renewal (for a read hold or a permit, the longest
	 * lease among that lock's holds of its kind); null if the backend did not answer
	 * @param renewals how often the watchdog renewed it
	 * @param fencingToken the hold's token; null for backends without tokens (Redlock)
	 * @param holdCount reentrant holds
	 * @param watchdog whether the watchdog renews it
	 * @param lost whether it is known to be lost
	 * @param registry the registry it is held in: {@code default}, or the registry's bean name
	 * @param kind what the hold is: {@code exclusive} (a lock's), {@code read} or {@code write} (a
	 * read-write lock's), or {@code permit} (a semaphore's)
	 */
	public record HoldDescriptor(String name, String lock, String thread, String method, Instant heldSince, Duration leaseLeft,
			long renewals, Long fencingToken, int holdCount, boolean watchdog, boolean lost, String registry,
			String kind) {
	}

}
