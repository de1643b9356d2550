package io.distlock.aop;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses the duration texts of {@code @DistributedLock}: {@code 500ms}, {@code 2s}, {@code 1m},
 * {@code 1h}, {@code 1d}, a bare number of milliseconds, or ISO-8601 ({@code PT2S}); the same forms
 * Spring Boot accepts in properties.
 */
final class DurationText {

	private static final Pattern SIMPLE = Pattern.compile("^([+-]?\\d+)(ns|us|ms|s|m|h|d)?$");

	private DurationText() {
	}

	static Duration parse(String text) {
		String trimmed = text.trim();
		Matcher matcher = SIMPLE.matcher(trimmed.toLowerCase(Locale.ROOT));
		if (matcher.matches()) {
			long amount = Long.parseLong(matcher.group(1));
			String unit = (matcher.group(2) != null) ? matcher.group(2) : "ms";
			return switch (unit) {
				case "ns" -> Duration.ofNanos(amount);
				case "us" -> Duration.ofNanos(amount * 1000);
				case "ms" -> Duration.ofMillis(amount);
				case "s" -> Duration.ofSeconds(amount);
				case "m" -> Duration.ofMinutes(amount);
				case "h" -> Duration.ofHours(amount);
				default -> Duration.ofDays(amount);
			};
		}
		try {
			return Duration.parse(trimmed);
		}
		catch (DateTimeParseException ex) {
			throw new IllegalArgumentException("'" + text + "' is not a duration; write e.g. 500ms, 2s, 1m or PT2S", ex);
		}
	}

}
