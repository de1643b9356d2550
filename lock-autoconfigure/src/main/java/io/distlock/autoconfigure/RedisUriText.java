package io.distlock.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisURI;

import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Redis URIs as they may appear in an error message: rebuilt from the parsed URI with the password
 * replaced by {@code ****} and the user name kept (it helps to find the wrong entry and is no
 * secret). The raw text is never echoed: a password may hold any character, so no pattern over
 * the text can be trusted to find its end.
 */
final class RedisUriText {

	private RedisUriText() {
	}

	/**
	 * @param uri one configured node
	 * @param position its place in the list, counted from 1, for an entry that does not parse
	 * @return e.g. {@code rediss://locks:****@redis-1:6380/2}, or {@code entry 3 (not a Redis URI)}
	 */
	static String redact(String uri, int position) {
		RedisURI parsed;
		try {
			parsed = RedisURI.create(uri);
		}
		catch (RuntimeException ex) {
			return "entry " + position + " (not a Redis URI)";
		}
		StringBuilder text = new StringBuilder(parsed.isSsl() ? "rediss://" : "redis://");
		RedisConfiguration configuration = LettuceConnectionFactory.createRedisConfiguration(parsed);
		if (configuration instanceof RedisConfiguration.WithAuthentication credentials) {
			if (credentials.getUsername() != null) {
				text.append(credentials.getUsername()).append(":****@");
			}
			else if (credentials.getPassword().isPresent()) {
				text.append("****@");
			}
		}
		text.append(parsed.getHost()).append(':').append(parsed.getPort());
		if (parsed.getDatabase() != 0) {
			text.append('/').append(parsed.getDatabase());
		}
		return text.toString();
	}

	/**
	 * @param uris configured nodes
	 * @return each redacted
	 */
	static List<String> redact(List<String> uris) {
		List<String> redacted = new ArrayList<>(uris.size());
		for (int i = 0; i < uris.size(); i++) {
			redacted.add(redact(uris.get(i), i + 1));
		}
		return redacted;
	}

}
