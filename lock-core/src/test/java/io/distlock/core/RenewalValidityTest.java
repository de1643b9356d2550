package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.distlock.DistLock;

/**
 * A renewal confirms a hold for what the backend guarantees of the lease, not the whole lease: a
 * Redlock node whose clock runs fast expires it sooner by the drift allowance that acquisition
 * already subtracts, and the holder must be told within what is guaranteed.
 */
class RenewalValidityTest {

	@Test
	void aRenewalConfirmsOnlyWhatTheBackendGuarantees() throws Exception {
		Duration lease = Duration.ofSeconds(3);
		StubBackend backend = new StubBackend() {
			@Override
			public Duration renewalValidity(Duration renewed) {
				return renewed.dividedBy(3);
			}
		};
		BackendLockRegistry engine = new BackendLockRegistry(backend,
				LockEngineOptions.builder().clientId("c1").watchdogTimeout(lease).build());
		try {
			DistLock lock = engine.getLock("x");
			lock.lock();
			await().atMost(Duration.ofSeconds(10)).until(() -> engine.watchdogRenewals() > 0);
			assertThat(EngineProbe.confirmedLeaseLeft(engine, "x")).as("confirmed after a renewal")
				.isLessThanOrEqualTo(lease.dividedBy(3));
			lock.unlock();
		}
		finally {
			engine.close();
		}
	}

}
