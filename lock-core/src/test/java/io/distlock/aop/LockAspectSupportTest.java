package io.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The one release loop: every hold is tried, in reverse order, whatever the others threw, and one
 * exception object failing several holds (a registry's shared "closed") is reported once rather
 * than suppressed in itself, which Java refuses with an exception of its own that used to stop the
 * loop with holds still taken.
 */
class LockAspectSupportTest {

	@Test
	void everyHoldIsTriedInReverseOrderAndASharedFailureIsReportedOnce() {
		IllegalStateException closed = new IllegalStateException("registry closed");
		List<String> tried = new ArrayList<>();
		LockAspectSupport.HoldRelease<String> failing = (hold, keep) -> {
			tried.add(hold);
			throw closed;
		};
		RuntimeException failure = LockAspectSupport.releaseAll(List.of("a", "b", "c"), failing, null, 0);
		assertThat(failure).isSameAs(closed);
		assertThat(failure.getSuppressed()).isEmpty();
		assertThat(tried).containsExactly("c", "b", "a");
		assertThatCode(() -> LockAspectSupport.releaseQuietly(List.of("a", "b"), failing, hold -> hold, null, 0,
				"Jobs.run()")).doesNotThrowAnyException();
	}

	@Test
	void differentFailuresAreKeptTogether() {
		LockAspectSupport.HoldRelease<String> failing = (hold, keep) -> {
			throw new IllegalStateException(hold);
		};
		RuntimeException failure = LockAspectSupport.releaseAll(List.of("a", "b"), failing, null, 0);
		assertThat(failure).hasMessage("b");
		assertThat(failure.getSuppressed()).extracting(Throwable::getMessage).containsExactly("a");
	}

}
