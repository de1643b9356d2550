package io.distlock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns an invalid {@code distlock.*} property into a start-up report naming the property and the fix.
 */
class InvalidDistLockPropertyFailureAnalyzer extends AbstractFailureAnalyzer<InvalidDistLockPropertyException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidDistLockPropertyException cause) {
		return new FailureAnalysis(cause.getMessage(), cause.getAction() + " Every property: docs/configuration.md.", cause);
	}

}
