package io.distlock.chaos;

import java.time.Duration;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The thing the soak's locks protect: two counters per lock key and phase in a Redis of its own
 * (never faulted), one written plainly, as most applications write, and one through a check of the
 * fencing token, as a resource that keeps the highest token it has seen for a key would. A section
 * {@linkplain #read reads} both (which also shows the resource its token), waits, and writes each
 * as what it read plus one: two holders at once lose an update on the plain counter, and on the
 * fenced one only if the tokens let a stale holder through.
 */
final class FencedResource implements AutoCloseable {

	/** The key that names the current phase; the orchestrator sets it. */
	static final String PHASE_KEY = "chaos:phase";

	// Keys are built inside the scripts from the phase they read, so that a section's counters and
	// its phase come from one atomic step; this Redis is a single server, where that is allowed.
	private static final String READ = """
			local phase = redis.call('GET', KEYS[1]) or 'none'
			local plain = redis.call('GET', 'plain:' .. phase .. ':' .. ARGV[1]) or '0'
			local fenced = redis.call('GET', 'fenced:' .. phase .. ':' .. ARGV[1]) or '0'
			local token = tonumber(ARGV[2])
			local admitted = 1
			if token >= 0 then
			  local highest = tonumber(redis.call('GET', 'highest-token:' .. ARGV[1]) or '-1')
			  if token < highest then
			    admitted = 0
			  else
			    redis.call('SET', 'highest-token:' .. ARGV[1], ARGV[2])
			  end
			end
			return {phase, plain, fenced, admitted}
			""";

	private static final String FENCED_WRITE = """
			local highest = tonumber(redis.call('GET', 'highest-token:' .. ARGV[1]) or '-1')
			local token = tonumber(ARGV[3])
			if token < highest then
			  return 0
			end
			redis.call('SET', 'highest-token:' .. ARGV[1], ARGV[3])
			redis.call('SET', 'fenced:' .. ARGV[2] .. ':' .. ARGV[1], ARGV[4])
			return 1
			""";

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private final RedisCommands<String, String> commands;

	FencedResource(int port) {
		this.client = RedisClient.create(RedisURI.builder().withHost("127.0.0.1").withPort(port)
			.withTimeout(Duration.ofSeconds(10)).build());
		this.connection = this.client.connect();
		this.commands = this.connection.sync();
	}

	/**
	 * What a section sees when it starts.
	 * @param phase the current phase
	 * @param plain the plain counter
	 * @param fenced the fenced counter
	 * @param admitted whether the token is not below the highest the resource has seen for the key
	 */
	record Snapshot(String phase, long plain, long fenced, boolean admitted) {
	}

	/**
	 * Reads the key's counters in the current phase and shows the resource the section's token.
	 * @param key the lock key
	 * @param token the fencing token, or a negative number for none
	 * @return what the section sees
	 */
	Snapshot read(String key, long token) {
		List<Object> reply = this.commands.eval(READ, ScriptOutputType.MULTI, new String[] { PHASE_KEY }, key,
				Long.toString(token));
		return new Snapshot((String) reply.get(0), Long.parseLong((String) reply.get(1)),
				Long.parseLong((String) reply.get(2)), ((Long) reply.get(3)) == 1L);
	}

	/** Writes the plain counter, unconditionally. */
	void writePlain(String phase, String key, long value) {
		this.commands.set("plain:" + phase + ":" + key, Long.toString(value));
	}

	/**
	 * Writes the fenced counter unless a higher token has been seen for the key.
	 * @return whether the write was accepted
	 */
	boolean writeFenced(String phase, String key, long token, long value) {
		Long accepted = this.commands.eval(FENCED_WRITE, ScriptOutputType.INTEGER, new String[0], key, phase,
				Long.toString(token), Long.toString(value));
		return accepted == 1L;
	}

	@Override
	public void close() {
		this.connection.close();
		this.client.shutdown();
	}

}
