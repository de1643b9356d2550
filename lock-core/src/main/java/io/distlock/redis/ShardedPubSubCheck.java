package io.distlock.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Decides once per backend whether releases and hand-offs go out by sharded pub/sub (SPUBLISH and
 * SSUBSCRIBE, see {@code announce.lua}): on a Redis Cluster whose masters all run Redis 7.0 or later
 * (Valkey reports a {@code redis_version} of 7.2.4 or later).
 * Every instance of one Cluster comes to the same answer, which they must share: a message sent one
 * way is not heard by a subscriber listening the other way (it then only re-checks, see
 * {@code docs/redis.md}).
 *
 * <p>Asked lazily, as the first lock call may come before the Cluster answers: until a check has
 * succeeded, calls use classic pub/sub and subscriptions are refused (their waiters poll, rather
 * than listen one way while messages go out the other once a check succeeds), and a failed check
 * is tried again at most every 10 s. A check refused with NOPERM (an ACL user without {@code +info})
 * would be refused forever, so it settles on classic pub/sub for good instead.
 */
final class ShardedPubSubCheck {

	private static final Logger log = LoggerFactory.getLogger(ShardedPubSubCheck.class);

	private static final long RETRY_NANOS = 10_000_000_000L;

	private final RedisConnectionFactory connectionFactory;

	private final String description;

	/** {@code null} until decided. */
	private volatile Boolean sharded;

	/** Before this {@link System#nanoTime()}, a failed check is not tried again. */
	private volatile long nextAttempt = System.nanoTime();

	/**
	 * @param cluster whether the factory's connections go to a Redis Cluster; without one (also behind a
	 * proxy that hides the cluster's topology), never sharded
	 */
	ShardedPubSubCheck(RedisConnectionFactory connectionFactory, boolean cluster, String description) {
		this.connectionFactory = connectionFactory;
		this.description = description;
		this.sharded = cluster ? null : Boolean.FALSE;
	}

	/**
	 * @return whether to announce by sharded pub/sub; asks the Cluster if nobody has yet (other
	 * callers wait for that answer), and answers {@code false} for 10 s after a check failed
	 */
	boolean sharded() {
		Boolean decided = this.sharded;
		if (decided != null) {
			return decided;
		}
		if (System.nanoTime() - this.nextAttempt < 0) {
			return false;
		}
		synchronized (this) {
			if (this.sharded != null) {
				return this.sharded;
			}
			if (System.nanoTime() - this.nextAttempt < 0) {
				return false;
			}
			try {
				List<String> old = mastersBefore7();
				if (old.isEmpty()) {
					log.info("distlock: releases and hand-offs on the Redis Cluster ({}) go out by sharded pub/sub, "
							+ "on the shard of each lock's slot", this.description);
				}
				else {
					log.info("distlock: classic pub/sub on the Redis Cluster ({}): sharded pub/sub needs Redis 7.0 on "
							+ "every master, and {} run older versions", this.description, old);
				}
				this.sharded = old.isEmpty();
				return this.sharded;
			}
			catch (RuntimeException ex) {
				if (noPermission(ex)) {
					// Retrying would not help, and would keep waiters polling instead of listening.
					log.warn("distlock: the Redis user may not ask the Cluster's masters ({}) for their versions ({}), so "
							+ "releases and hand-offs go out by classic pub/sub for good; grant +info to use sharded "
							+ "pub/sub (see docs/redis.md, ACL)", this.description, ex.toString());
					this.sharded = Boolean.FALSE;
					return false;
				}
				this.nextAttempt = System.nanoTime() + RETRY_NANOS;
				log.warn("distlock: could not ask the Redis Cluster's masters ({}) for their versions, so releases go out by "
						+ "classic pub/sub for now and waiters poll: {}", this.description, ex.toString());
				return false;
			}
		}
	}

	/** @return whether {@link #sharded()} has come to an answer that holds from now on */
	boolean decided() {
		return this.sharded != null;
	}

	/** @return {@code host:port version} of every master older than 7.0 */
	private List<String> mastersBefore7() {
		List<String> old = new ArrayList<>();
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			if (!(connection instanceof RedisClusterConnection cluster)) {
				old.add("(not a cluster connection)");
				return old;
			}
			for (RedisClusterNode node : cluster.clusterGetNodes()) {
				if (!node.isMaster() || node.getSlotRange().getSlots().isEmpty()) {
					continue;
				}
				Properties info = cluster.serverCommands().info(node, "server");
				String version = (info != null) ? info.getProperty("redis_version", "") : "";
				if (major(version) < 7) {
					old.add(node.getHost() + ":" + node.getPort() + " " + version);
				}
			}
		}
		return old;
	}

	/** @return whether Redis refused a command for the user's ACL (its error starts with NOPERM) */
	static boolean noPermission(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			String message = cause.getMessage();
			if (message != null && message.contains("NOPERM")) {
				return true;
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return false;
	}

	private static int major(String version) {
		int dot = version.indexOf('.');
		try {
			return Integer.parseInt((dot < 0) ? version : version.substring(0, dot));
		}
		catch (NumberFormatException ex) {
			return 0;
		}
	}

}
