package io.distlock.redis;

import java.net.SocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Says when {@code acquire.lua} should ask the server whether it is a replica promoted since anyone
 * last looked (ARGV[8]): on the first acquisition after each connection, since a failover moves
 * every client to the new master through a new connection. The question costs an
 * {@code INFO replication} inside the script, so it is not asked on every call. Where connections
 * cannot be watched (another client than Lettuce, or a factory not started yet) it is asked at most
 * once a second.
 */
final class PromotionChecks implements AutoCloseable {

	private static final long UNWATCHED_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

	/** Connections made so far; starts at 1 so that the first acquisition asks. */
	private final AtomicLong connections = new AtomicLong(1);

	/** The count of {@link #connections} the last answered question was asked under. */
	private final AtomicLong asked = new AtomicLong();

	private final AtomicLong lastAskedNanos = new AtomicLong(System.nanoTime() - UNWATCHED_INTERVAL_NANOS);

	private final Runnable unwatch;

	PromotionChecks(RedisConnectionFactory connectionFactory) {
		if (connectionFactory instanceof LettuceConnectionFactory lettuce && lettuce.isRunning()) {
			AbstractRedisClient client = lettuce.getNativeClient();
			RedisConnectionStateListener listener = new RedisConnectionStateListener() {
				@Override
				public void onRedisConnected(RedisChannelHandler<?, ?> connection, SocketAddress address) {
					PromotionChecks.this.connections.incrementAndGet();
				}
			};
			client.addListener(listener);
			this.unwatch = () -> client.removeListener(listener);
		}
		else {
			this.unwatch = null;
		}
	}

	/**
	 * @return the connection count to pass to {@link #answered(long)} if this acquisition is to ask,
	 * else -1
	 */
	long due() {
		long now = this.connections.get();
		if (this.unwatch == null) {
			long last = this.lastAskedNanos.get();
			return (System.nanoTime() - last >= UNWATCHED_INTERVAL_NANOS) ? now : -1;
		}
		return (now != this.asked.get()) ? now : -1;
	}

	/**
	 * The script asked and Redis answered: later acquisitions on the same connections need not ask.
	 * @param connection what {@link #due()} returned
	 */
	void answered(long connection) {
		this.asked.accumulateAndGet(connection, Math::max);
		this.lastAskedNanos.set(System.nanoTime());
	}

	@Override
	public void close() {
		if (this.unwatch != null) {
			this.unwatch.run();
		}
	}

}
