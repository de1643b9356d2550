package io.distlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

/**
 * {@link LockRegistry#executeLocked(java.util.Collection, Duration, LockRegistry.LockedWork)} gives
 * back every lock it took, whatever one of the unlocks throws: a unit-level edge case (no backend
 * makes {@code unlock()} throw an {@link Error} on demand), so the registry and its locks are stand-ins
 * that only record the calls.
 */
class ExecuteLockedReleaseTest {

	private final List<String> unlocked = new ArrayList<>();

	@Test
	void anErrorFromOneUnlockDoesNotKeepTheOthersLocked() {
		LockRegistry registry = registry("b", new StackOverflowError("unlock of b"));

		assertThatThrownBy(() -> registry.executeLocked(Set.of("a", "b", "c"), Duration.ZERO, () -> "done"))
			.isInstanceOf(StackOverflowError.class)
			.hasMessage("unlock of b");
		assertThat(this.unlocked).containsExactly("c", "b", "a");
	}

	@Test
	void anErrorFromAnUnlockIsAddedToTheWorksFailure() {
		LockRegistry registry = registry("a", new StackOverflowError("unlock of a"));

		assertThatThrownBy(() -> registry.executeLocked(Set.of("a", "b"), Duration.ZERO, () -> {
			throw new IllegalStateException("work failed");
		})).isInstanceOf(IllegalStateException.class)
			.satisfies(failure -> assertThat(failure.getSuppressed()).singleElement()
				.isInstanceOf(StackOverflowError.class));
		assertThat(this.unlocked).containsExactly("b", "a");
	}

	/** Every lock is free; {@code failing}'s unlock throws {@code failure} after it is recorded. */
	private LockRegistry registry(String failing, Throwable failure) {
		InvocationHandler registry = (proxy, method, args) -> {
			if (method.getName().equals("getLock")) {
				return lock((String) args[0], failing, failure);
			}
			if (method.isDefault()) {
				return InvocationHandler.invokeDefault(proxy, method, args);
			}
			throw new UnsupportedOperationException(method.getName());
		};
		return (LockRegistry) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { LockRegistry.class },
				registry);
	}

	private DistLock lock(String name, String failing, Throwable failure) {
		InvocationHandler lock = (proxy, method, args) -> switch (method.getName()) {
			case "tryLock" -> true;
			case "unlock" -> {
				this.unlocked.add(name);
				if (name.equals(failing)) {
					throw failure;
				}
				yield null;
			}
			default -> throw new UnsupportedOperationException(method.getName());
		};
		return (DistLock) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { DistLock.class }, lock);
	}

}
