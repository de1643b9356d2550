package io.distlock.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts of the Redis backend, read once from {@code io/distlock/redis/*.lua}. Spring's
 * script executor runs them with EVALSHA and falls back to EVAL (which reloads them) on NOSCRIPT, so
 * a {@code SCRIPT FLUSH} or a server restart is survived without our help.
 */
final class LockScripts {

	@SuppressWarnings("rawtypes")
	static final RedisScript<List> ACQUIRE = load("acquire.lua", List.class);

	static final RedisScript<Long> RELEASE = load("release.lua", Long.class);

	static final RedisScript<Long> TOKEN = load("token.lua", Long.class);

	static final RedisScript<Long> ABANDON = load("abandon.lua", Long.class);

	@SuppressWarnings("rawtypes")
	static final RedisScript<List> RENEW = load("renew.lua", List.class);

	private LockScripts() {
	}

	/**
	 * Reads the script once into a string. A resource-backed script would be checked for
	 * modification (a file system call) under a lock on every execution.
	 */
	private static <T> RedisScript<T> load(String file, Class<T> resultType) {
		try {
			return RedisScript.of(new ClassPathResource("io/distlock/redis/" + file).getContentAsString(StandardCharsets.UTF_8),
					resultType);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Missing Lua script io/distlock/redis/" + file, ex);
		}
	}

}
