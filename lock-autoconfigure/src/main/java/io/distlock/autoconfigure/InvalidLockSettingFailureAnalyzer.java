package io.distlock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.distlock.InvalidLockSettingException;

/**
 * Turns an invalid setting of a registry the application built itself (a {@code @Bean} with
 * {@code RedisLockRegistry.builder(...)}, for example) into a start-up report naming the setting and
 * the fix. Settings that came from {@code distlock.*} properties are reported under the property
 * instead, by {@link InvalidDistLockPropertyFailureAnalyzer}, which is asked first.
 */
class InvalidLockSettingFailureAnalyzer extends AbstractFailureAnalyzer<InvalidLockSettingException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidLockSettingException cause) {
		return new FailureAnalysis("A lock registry was built with an invalid setting: " + cause.getMessage(),
				"Set " + cause.getSetting() + " " + cause.getAdvice() + " where the application builds the registry "
						+ "(the builder's " + cause.getSetting() + "(...)).",
				cause);
	}

}
