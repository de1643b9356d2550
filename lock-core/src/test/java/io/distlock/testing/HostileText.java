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

	/** @return edits for {@link #lookalike(String, String)} */
	public static Arbitrary<String> lookalikeEdits() {
		return Arbitraries.of("?", "\uFFFD", " ", "upper", "lower", "drop-last", "x", "}", ":", "\u0000");
	}

	/**
	 * @param edit one of {@link #lookalikeEdits()}
	 * @return a name that differs from the given one in a way an encoding or a collation may not tell
	 */
	public static String lookalike(String name, String edit) {
		StringBuilder out = new StringBuilder();
		switch (edit) {
			case "upper" -> out.append(name.toUpperCase(java.util.Locale.ROOT));
			case "lower" -> out.append(name.toLowerCase(java.util.Locale.ROOT));
			case "drop-last" -> out.append(name, 0, name.length() - 1);
			case "?", "\uFFFD" -> {
				// What a UTF-8 encoder writes for an unpaired surrogate.
				for (int i = 0; i < name.length(); i++) {
					char c = name.charAt(i);
					boolean paired = Character.isHighSurrogate(c) && i + 1 < name.length()
							&& Character.isLowSurrogate(name.charAt(i + 1));
					if (paired) {
						out.append(c).append(name.charAt(++i));
					}
					else {
						out.append(Character.isSurrogate(c) ? edit : String.valueOf(c));
					}
				}
				if (out.toString().equals(name)) {
					out.append(edit);
				}
			}
			default -> out.append(name).append(edit);
		}
		return out.toString();
	}

}
