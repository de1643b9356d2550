package io.distlock.testing;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Tuple;

/**
 * Text that users may feed us as lock names and key values, for property-based tests: fragments
 * chosen to break a key layout (Redis Cluster hash tags, the key prefix, the separators of helper
 * keys), to break an encoding (NUL, line breaks, combining marks, right-to-left text, surrogate
 * pairs and lone surrogates), and now and then a huge value.
 */
public final class HostileText {

	private static final String[] FRAGMENTS = { "a", "B", "7", "order", "42", "{", "}", "{}", "}{", ":", "::",
			"distlock", "distlock:", "distlock:{", ":queue", ":queued", ":released", ":released-hold", ":fencing",
			":anchor", "0", "1", "z", "\u0000", "\n", "\r", "\t", " ", "e\u0301", "\u0301", "\u202E", "\u200F",
			"\u05D0\u05D1", "\u0627\u0644", "\uD83D\uDE00", "\uD800", "\uDC00", "?", "%", "*", "[", "]", "\\", "'",
			"\"", ",", "=", "~", "\u00E9", "\u00DF", "\uFEFF", "\u3000" };

	private HostileText() {
	}

	/**
	 * @return short texts (up to a dozen fragments, possibly empty) built from hostile fragments,
	 * including unpaired surrogates
	 */
	public static Arbitrary<String> fragments() {
		return Arbitraries.of(FRAGMENTS).list().ofMaxSize(12).map(parts -> String.join("", parts));
	}

	/** @return hostile fragments, any printable or control character, and sometimes 10,000 characters */
	public static Arbitrary<String> any() {
		return Arbitraries.frequencyOf(Tuple.of(12, fragments()), Tuple.of(3, Arbitraries.strings().all().ofMaxLength(16)),
				Tuple.of(1, huge()));
	}

	/** @return 10,000 characters of one fragment repeated (possibly cut inside a surrogate pair) */
	public static Arbitrary<String> huge() {
		return Arbitraries.of(FRAGMENTS).map(fragment -> fragment.repeat(10_000 / fragment.length() + 1).substring(0, 10_000));
	}

}
