package io.distlock.autoconfigure;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Redis URIs as they may appear in an error message: the password replaced by {@code ****}, the
 * user name kept (it helps to find the wrong entry and is no secret).
 */
final class RedisUriText {

	/**
	 * {@code scheme://} then user info up to the token's last '@' (greedy, so that an unencoded '@'
	 * or '/' in a password is still covered); tokens end at white space, commas, brackets and quotes.
	 */
	private static final Pattern USER_INFO = Pattern.compile("(?i)(redis(?:s|-sentinel|s-sentinel|-socket)?://)([^\\s,\\[\\]']*)@");

	private RedisUriText() {
	}

	/**
	 * @param text a URI, or a message that may contain URIs
	 * @return the text with every password replaced
	 */
	static String redact(String text) {
		if (text == null) {
			return null;
		}
		return USER_INFO.matcher(text).replaceAll(match -> {
			String userInfo = match.group(2);
			int colon = userInfo.indexOf(':');
			// redis://secret@host is a password alone, redis://user:secret@host a user and a password.
			String kept = (colon >= 0) ? userInfo.substring(0, colon) + ":****" : "****";
			return Matcher.quoteReplacement(match.group(1) + kept + "@");
		});
	}

	/**
	 * @param uris URIs
	 * @return each redacted
	 */
	static List<String> redact(List<String> uris) {
		return uris.stream().map(RedisUriText::redact).toList();
	}

}
