package io.distlock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns distlock's starter on the wrong Spring Boot generation into a start-up report naming the
 * starter to use instead.
 */
class WrongSpringBootGenerationFailureAnalyzer extends AbstractFailureAnalyzer<WrongSpringBootGenerationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, WrongSpringBootGenerationException cause) {
		return new FailureAnalysis(cause.getMessage(), cause.getAction() + " See docs/spring-boot-generations.md.", cause);
	}

}
