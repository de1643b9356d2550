package io.distlock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.distlock.aop.InvalidLockAnnotationException;

/**
 * Turns an invalid {@code @DistributedLock} (a key that does not parse, a bad duration) into a
 * start-up report naming the method.
 */
class InvalidLockAnnotationFailureAnalyzer extends AbstractFailureAnalyzer<InvalidLockAnnotationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidLockAnnotationException cause) {
		return new FailureAnalysis(cause.getMessage(),
				"Fix the @DistributedLock attribute named above. Keys are SpEL: arguments as #name or #p0, "
						+ "constants quoted ('my-key'); durations like 500ms, 2s or ${my.property}. "
						+ "See docs/annotation.md.",
				cause);
	}

}
