package io.distlock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import io.distlock.DistLock;
import io.distlock.LockRegistry;

/**
 * For a backend that keeps exclusive locks only: it says so ({@link LockRegistry#offersReadWriteLocks()},
 * {@link LockRegistry#offersSemaphores()}), and refuses read-write locks and semaphores at once
 * instead of handing out handles that fail later. Redlock for good (a semaphore over a majority of
 * independent masters can admit more holders than permits); other backends until their phase of
 * issue #29 gives them {@link ReadWriteLockContract} and {@link SemaphoreContract} instead.
 */
public interface ExclusiveLocksOnlyContract extends ContractFixture {

	@Test
	default void readWriteLocksAndSemaphoresAreRefused() throws Exception {
		LockRegistry client = contractClient();
		assertThat(client.offersReadWriteLocks()).isFalse();
		assertThat(client.offersSemaphores()).isFalse();
		assertThatThrownBy(() -> client.getReadWriteLock("x")).isInstanceOf(UnsupportedOperationException.class)
			.hasMessageContaining("exclusive locks only");
		assertThatThrownBy(() -> client.getSemaphore("x", 3)).isInstanceOf(UnsupportedOperationException.class)
			.hasMessageContaining("exclusive locks only");
		// The refusals touched nothing: the lock of that name works as before.
		DistLock lock = client.getLock("x");
		assertThat(lock.tryLock()).isTrue();
		lock.unlock();
	}

}
