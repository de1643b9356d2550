package io.distlock.redlock;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import io.lettuce.core.RedisURI;

import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.InvalidLockSettingException;
import io.distlock.LockSettings;

/**
 * Redlock's masters as configured, parsed once: at least {@value LockSettings#MIN_REDLOCK_MASTERS},
 * each a Redis URI, none twice, each a TLS URI where the connections use TLS. What connects them
 * takes the parsed URIs from here instead of parsing the text again.
 *
 * <p>Every failure, and {@link #shown()}, carries the nodes as an error message may print them: rebuilt
 * from the parsed URI with the password replaced by {@code ****} and the user name kept (it helps to
 * find the wrong entry and is no secret). The raw text is never echoed: a password may hold any
 * character, so no pattern over the text can be trusted to find its end.
 *
 * @param uris the parsed URIs, in the order listed
 * @param shown the same nodes as messages print them, with passwords masked
 */
public record RedlockUris(List<RedisURI> uris, List<String> shown) {

	/**
	 * @param uris the parsed URIs, in the order listed
	 * @param shown the same nodes, passwords masked
	 */
	public RedlockUris {
		uris = List.copyOf(uris);
		shown = List.copyOf(shown);
	}

	/**
	 * @param nodes the masters' URIs ({@code redis://host:port}, {@code rediss://user:password@host:port})
	 * @param tls whether the connections use TLS, so that every node must be a {@code rediss://} URI
	 * @return the parsed nodes
	 * @throws InvalidLockSettingException naming {@code nodes} if there are fewer than three, an entry is
	 * no Redis URI or a master is listed twice; naming {@code ssl} if {@code tls} and a node is no TLS URI
	 */
	public static RedlockUris parse(List<String> nodes, boolean tls) {
		List<String> shown = redact(nodes);
		try {
			LockSettings.redlockMasters(nodes.size());
		}
		catch (InvalidLockSettingException ex) {
			// The list, not the count: it shows which entries were read.
			throw new InvalidLockSettingException(ex.getSetting(), shown, ex.getProblem(), ex.getAdvice());
		}
		List<RedisURI> uris = new ArrayList<>(nodes.size());
		Set<String> seen = new HashSet<>();
		for (int i = 0; i < nodes.size(); i++) {
			RedisURI uri;
			try {
				uri = RedisURI.create(nodes.get(i));
			}
			catch (RuntimeException ex) {
				// Not chained: the parser's message quotes the raw entry, password and all.
				throw new InvalidLockSettingException("nodes", shown,
						"entry " + (i + 1) + " is not a Redis URI (" + ex.getClass().getSimpleName() + ")",
						"to Redis URIs: redis://host:port, or rediss://user:password@host:port for TLS; "
								+ "percent-encode special characters in the password");
			}
			String address = uri.getHost().toLowerCase(Locale.ROOT) + ":" + uri.getPort() + "/" + uri.getDatabase();
			if (!seen.add(address)) {
				throw new InvalidLockSettingException("nodes", shown,
						"lists " + shown.get(i) + " twice; a duplicate would count twice towards the majority",
						"to every independent master once");
			}
			if (tls && !uri.isSsl()) {
				throw new InvalidLockSettingException("ssl", shown.get(i),
						"asks for TLS, but node " + shown.get(i) + " is not a TLS URI",
						"only with every node written as rediss://host:port (the server's tls-port), or remove it");
			}
			uris.add(uri);
		}
		return new RedlockUris(uris, shown);
	}

	/** @return how many masters there are */
	public int size() {
		return this.uris.size();
	}

	/**
	 * @param uris configured nodes
	 * @return each as {@link #redact(String, int)} shows it
	 */
	public static List<String> redact(List<String> uris) {
		List<String> redacted = new ArrayList<>(uris.size());
		for (int i = 0; i < uris.size(); i++) {
			redacted.add(redact(uris.get(i), i + 1));
		}
		return redacted;
	}

	/**
	 * @param uri one configured node
	 * @param position its place in the list, counted from 1, for an entry that does not parse
	 * @return e.g. {@code rediss://locks:****@redis-1:6380/2}, or {@code entry 3 (not a Redis URI)}
	 */
	public static String redact(String uri, int position) {
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

}
