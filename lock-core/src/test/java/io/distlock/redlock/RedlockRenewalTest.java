package io.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.HoldRef;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.ReleaseRequest;
import io.distlock.embedded.RedisServerProcess;

/**
 * Redlock's renewals, called on the backend directly against three real masters: a renewal renews
 * the hold it was sent for on every node, never a later hold of the same owner that a renewal
 * reaching a node late would otherwise stretch to the watchdog's lease.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedlockRenewalTest {

	private static final Duration WATCHDOG_LEASE = Duration.ofSeconds(30);

	private static final Duration SHORT_LEASE = Duration.ofSeconds(2);

	private static RedlockNodes nodes;

	@BeforeAll
	static void startNodes() {
		nodes = new RedlockNodes(3);
	}

	@AfterAll
	static void stopNodes() throws Exception {
		nodes.close();
	}

	@BeforeEach
	void freshNodes() {
		nodes.flushAll();
	}

	@AfterEach
	void closeClients() throws Exception {
		nodes.closeClients();
	}

	@Test
	void aRenewalOfAReleasedHoldDoesNotStretchTheOwnersNextHoldOnAnyNode() {
		RedlockBackend backend = nodes.backend();
		Acquisition first = backend.acquire(new AcquireRequest("stale", "a:1", 0, WATCHDOG_LEASE, Duration.ZERO, "ticket-1"));
		assertThat(first.status()).isEqualTo(Acquisition.Status.ACQUIRED);
		HoldRef renewal = new HoldRef("stale", "a:1", first.attemptId());
		assertThat(backend.release(new ReleaseRequest("stale", "a:1", 1, first.attemptId(), Acquisition.NO_TOKEN, null)))
			.isEqualTo(Release.RELEASED);
		Acquisition second = backend.acquire(new AcquireRequest("stale", "a:1", 0, SHORT_LEASE, Duration.ZERO, "ticket-2"));
		assertThat(second.status()).isEqualTo(Acquisition.Status.ACQUIRED);

		assertThat(backend.renew(List.of(renewal), WATCHDOG_LEASE, null)).as("the renewal of the released hold")
			.containsExactly(false);
		for (RedisServerProcess server : nodes.servers()) {
			assertThat(leaseMillis(server, "stale")).as("the second hold's lease on the node at port %d", server.port())
				.isBetween(1L, SHORT_LEASE.toMillis());
		}
		assertThat(backend.renew(List.of(new HoldRef("stale", "a:1", second.attemptId())), WATCHDOG_LEASE, null))
			.as("the second hold's own renewal").containsExactly(true);
		for (RedisServerProcess server : nodes.servers()) {
			assertThat(leaseMillis(server, "stale")).as("the renewed lease on the node at port %d", server.port())
				.isGreaterThan(SHORT_LEASE.toMillis());
		}
	}

	/** The lock key's PTTL on one node. */
	private static long leaseMillis(RedisServerProcess server, String name) {
		return Long.parseLong(server.command("PTTL", "distlock:{" + name + "}").substring(1));
	}

}
