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
	static final RedisScript<List> ACQUIRE = load(List.class, "acquire-free.lua", "grace.lua", "acquire.lua");

	/**
	 * Announces on classic or shard channels (announce.lua), and draws a hand-off's token (fencing.lua):
	 * both after the part of release.lua that frees a hold nobody queued for, so that an uncontended
	 * release does not create their functions.
	 */
	static final RedisScript<Long> RELEASE = load(Long.class, "release.lua", "announce.lua", "fencing.lua",
			"release-handoff.lua");

	static final RedisScript<Long> TOKEN = load(Long.class, "fencing.lua", "token.lua");

	static final RedisScript<Long> ABANDON = load("abandon.lua", Long.class);

	/** Renews holds of every kind in one batch, so it reads shared holds as the shared scripts write them. */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> RENEW = shared(List.class, "renew.lua");

	@SuppressWarnings("rawtypes")
	static final RedisScript<List> ACQUIRE_SHARED = shared(List.class, "acquire-shared.lua");

	static final RedisScript<Long> RELEASE_SHARED = shared(Long.class, "release-shared.lua");

	static final RedisScript<Long> TOKEN_SHARED = shared(Long.class, "token-shared.lua");

	/** Writes nothing; sent as EVAL/EVALSHA rather than EVAL_RO, which needs Redis 7. */
	static final RedisScript<Long> QUERY_SHARED = shared(Long.class, "query-shared.lua");

	private LockScripts() {
	}

	/**
	 * A script of the read-write locks and semaphores: their state's functions ({@code shared-common.lua})
	 * call {@code announce}, {@code nextToken} and the restart grace, so those go first.
	 */
	private static <T> RedisScript<T> shared(Class<T> resultType, String file) {
		return load(resultType, "announce.lua", "fencing.lua", "grace.lua", "shared-common.lua", file);
	}

	private static <T> RedisScript<T> load(String file, Class<T> resultType) {
		return load(resultType, file);
	}

	/**
	 * Reads the script once into a string, made of {@code files} in order: a shared part (a Lua
	 * function two scripts need) goes before the script that calls it. A resource-backed script would
	 * be checked for modification (a file system call) under a lock on every execution.
	 */
	private static <T> RedisScript<T> load(Class<T> resultType, String... files) {
		StringBuilder script = new StringBuilder();
		for (String file : files) {
			try {
				script.append(new ClassPathResource("io/distlock/redis/" + file).getContentAsString(StandardCharsets.UTF_8))
					.append('\n');
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Missing Lua script io/distlock/redis/" + file, ex);
			}
		}
		return RedisScript.of(script.toString(), resultType);
	}

}
