package io.distlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/** Who stops which threads, and what registries still attached are told. */
class LockWatchdogTest {

	@Test
	void closingAWatchdogOnTheApplicationsThreadsLeavesThemRunningAndTellsItsRegistries() {
		ScheduledExecutorService applications = Executors.newSingleThreadScheduledExecutor();
		try {
			LockWatchdog watchdog = LockWatchdog.on(applications);
			AtomicInteger told = new AtomicInteger();
			watchdog.attach(told::incrementAndGet);
			Runnable detached = watchdog.attach(told::incrementAndGet);
			detached.run();
			watchdog.close();
			assertThat(told).as("only the registry still attached").hasValue(1);
			assertThat(applications.isShutdown()).isFalse();
			assertThatThrownBy(() -> watchdog.attach(() -> {
			})).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
		}
		finally {
			applications.shutdownNow();
		}
	}

	@Test
	void closingAWatchdogStopsTheThreadsItStarted() {
		LockWatchdog watchdog = LockWatchdog.create();
		watchdog.close();
		assertThat(watchdog.timer().isShutdown()).isTrue();
		assertThat(((ExecutorService) watchdog.workers()).isShutdown()).isTrue();
	}

}
