package io.distlock.sample;

import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * The protected resource: a stock counter per item in Redis (a hash with the stock and the highest
 * fencing token that wrote it). A fenced write carrying a lower token than one already applied is
 * rejected, so a holder that lost its lock (paused, lease expired) cannot overwrite a newer sale.
 */
@Component
public class StockStore {

	private static final RedisScript<Long> FENCED_WRITE = script("io/distlock/sample/fenced-write.lua");

	private final StringRedisTemplate redis;

	public StockStore(StringRedisTemplate redis) {
		this.redis = redis;
	}

	public long read(String item) {
		Object stock = this.redis.opsForHash().get(item, "stock");
		return (stock != null) ? Long.parseLong(stock.toString()) : 0;
	}

	public void reset(String item, long quantity) {
		this.redis.opsForHash().put(item, "stock", Long.toString(quantity));
	}

	/** @return false if a write with a higher fencing token has already been applied */
	public boolean writeFenced(String item, long stock, long fencingToken) {
		Long written = this.redis.execute(FENCED_WRITE, List.of(item), Long.toString(fencingToken), Long.toString(stock));
		return written != null && written == 1;
	}

	/** A plain write, as code without a lock would do it. */
	public void writeUnfenced(String item, long stock) {
		this.redis.opsForHash().put(item, "stock", Long.toString(stock));
	}

	/** Read once: a resource-backed script is stat-ed under a lock on every execution. */
	private static RedisScript<Long> script(String resource) {
		try {
			return RedisScript.of(new ClassPathResource(resource).getContentAsString(java.nio.charset.StandardCharsets.UTF_8),
					Long.class);
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

}
