package io.distlock.testing;

import org.springframework.data.redis.core.StringRedisTemplate;

import io.distlock.contract.SharedCounter;

/**
 * A counter in a Redis string, read and written in two separate commands: the contract suite's
 * resource that loses updates without a lock.
 */
public final class RedisSharedCounter implements SharedCounter {

	private final StringRedisTemplate redis;

	private final String key;

	/**
	 * Creates the counter at 0.
	 * @param redis where it lives
	 * @param name distinguishes counters
	 */
	public RedisSharedCounter(StringRedisTemplate redis, String name) {
		this.redis = redis;
		this.key = "test:counter:" + name;
		redis.opsForValue().set(this.key, "0");
	}

	@Override
	public long get() {
		return Long.parseLong(this.redis.opsForValue().get(this.key));
	}

	@Override
	public void set(long value) {
		this.redis.opsForValue().set(this.key, Long.toString(value));
	}

}
