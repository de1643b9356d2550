package io.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.RedisClusterPubSubAdapter;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.codec.ByteArrayCodec;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.core.LockNotice;

/**
 * Listens for releases and hand-offs by sharded pub/sub on a Redis 7+ Cluster: SSUBSCRIBE to a
 * lock's shard channel, and to this client's hand-off channel of that lock, both in the lock's slot
 * (see {@link RedisKeys#shardChannel}), while some thread waits for that lock. Spring Data Redis has
 * no sharded subscribe, so this uses Lettuce's cluster pub/sub connection of the factory's client:
 * it sends SSUBSCRIBE to the master that owns the channel's slot (by the channel, which it takes
 * for a key), following a MOVED reply, and re-sends a node's shard subscriptions when it reconnects
 * to that node.
 *
 * <p><b>Connections:</b> one cluster pub/sub connection per client, opened at the first wait, which
 * holds one idle connection to some node, plus one connection to each master that owns the slot of
 * a lock this client has waited for: at most one per shard, however many locks and threads wait.
 *
 * <p><b>Resharding:</b> when a slot leaves a node, the server ends its shard subscriptions with a
 * SUNSUBSCRIBE of its own; a channel that still has listeners is then subscribed again, in the
 * background, where the slot lives now. A message published meanwhile is missed, which costs only
 * time: a queued waiter asks Redis again within half its queue place (2 s) however quiet its
 * channel. A master that fails over to a replica (a dead node sends no SUNSUBSCRIBE) is found at
 * the latest when its locks had no waiter here for {@link #LINGER} and a new one subscribes.
 *
 * <p><b>Lingering:</b> a lock's channels stay subscribed for {@link #LINGER} after its last waiter
 * left (at most 10 s more, the sweep's period). A hand-off is published on a channel of the lock,
 * not on one the client keeps for good as with classic pub/sub, so one announced before the channel
 * is subscribed is missed (its waiter finds it by its next check, within 2 s); a lock contended
 * again and again (a new waiting room whenever a waiter arrives to an empty one) would run into
 * that each time. Subscriptions stay bounded by the locks waited for in the last 30-40 s.
 *
 * <p>As in {@link RedisReleaseSubscriber}, SSUBSCRIBE and SUNSUBSCRIBE are sent under one lock and
 * waited for, so for any channel the server sees them in the order they were asked for, and a
 * subscription is confirmed before the waiter relies on it.
 */
final class ShardedReleaseSubscriber extends RedisClusterPubSubAdapter<byte[], byte[]> implements AutoCloseable {

	private static final Logger log = LoggerFactory.getLogger(ShardedReleaseSubscriber.class);

	/** How long a lock's channels stay subscribed with no waiter, at least. */
	static final Duration LINGER = Duration.ofSeconds(30);

	private static final Duration SWEEP_PERIOD = Duration.ofSeconds(10);

	private final LettuceConnectionFactory connectionFactory;

	/** A lock's shard channel -> its listeners and this client's hand-off channels of that lock. */
	private final Map<String, Listening> channels = new ConcurrentHashMap<>();

	/** A hand-off channel -> the shard channel of its lock. */
	private final Map<String, String> handOffs = new ConcurrentHashMap<>();

	/** Interruptible, as {@link RedisReleaseSubscriber}'s: a stalled SSUBSCRIBE must not hold other waiters. */
	private final ReentrantLock lock = new ReentrantLock();

	/**
	 * Subscribes again, off Lettuce's event loop, to channels the server ended, and unsubscribes
	 * from channels that lingered long enough.
	 */
	private final ScheduledExecutorService housekeeping = Executors
		.newSingleThreadScheduledExecutor(RedisLockCalls.daemon("distlock-shard-subscriptions"));

	private boolean sweeping;

	private StatefulRedisClusterPubSubConnection<byte[], byte[]> connection;

	private boolean closed;

	ShardedReleaseSubscriber(LettuceConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	/**
	 * Passes every notice on {@code channel}, and every hand-off announced on {@code handOffChannel},
	 * to {@code onNotice} until the returned handle is closed. Returns once the server has confirmed
	 * the subscription.
	 * @param channel the lock's shard channel
	 * @param handOffChannel the waiting client's hand-off channel of the lock, or {@code null}
	 */
	AutoCloseable subscribe(String channel, String handOffChannel, Consumer<LockNotice> onNotice) {
		lockInterruptibly();
		try {
			if (this.closed) {
				throw new IllegalStateException("Release subscriber is closed");
			}
			Listening listening = this.channels.computeIfAbsent(channel, key -> new Listening());
			boolean first = !listening.subscribed;
			listening.listeners.add(onNotice);
			// Known before SSUBSCRIBE is sent, so that a hand-off arriving at once is read as one.
			boolean newHandOff = handOffChannel != null && listening.handOffs.add(handOffChannel);
			if (newHandOff) {
				this.handOffs.put(handOffChannel, channel);
			}
			List<String> subscribing = new ArrayList<>(2);
			if (first) {
				subscribing.add(channel);
			}
			if (newHandOff) {
				subscribing.add(handOffChannel);
			}
			if (!subscribing.isEmpty()) {
				try {
					// One SSUBSCRIBE for both: they share a slot, so one node.
					await(connection().async().ssubscribe(bytes(subscribing)), "SSUBSCRIBE " + subscribing);
					listening.subscribed = true;
					startSweeping();
				}
				catch (RuntimeException ex) {
					if (newHandOff) {
						listening.handOffs.remove(handOffChannel);
						this.handOffs.remove(handOffChannel);
					}
					listening.listeners.remove(onNotice);
					if (!listening.subscribed && listening.listeners.isEmpty()) {
						this.channels.remove(channel);
						listening.handOffs.forEach(this.handOffs::remove);
					}
					else if (listening.listeners.isEmpty()) {
						listening.idleSince = System.nanoTime();
					}
					throw ex;
				}
			}
		}
		finally {
			this.lock.unlock();
		}
		return () -> unsubscribe(channel, onNotice);
	}

	private void unsubscribe(String channel, Consumer<LockNotice> onNotice) {
		this.lock.lock();
		try {
			Listening listening = this.channels.get(channel);
			if (listening != null && listening.listeners.remove(onNotice) && listening.listeners.isEmpty()) {
				// Left subscribed for LINGER: the sweep unsubscribes it unless a waiter comes back.
				listening.idleSince = System.nanoTime();
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	private void startSweeping() {
		if (!this.sweeping) {
			this.sweeping = true;
			this.housekeeping.scheduleWithFixedDelay(this::sweep, SWEEP_PERIOD.toMillis(), SWEEP_PERIOD.toMillis(),
					TimeUnit.MILLISECONDS);
		}
	}

	/** Unsubscribes from the channels of locks nobody here has waited for in {@link #LINGER}. */
	private void sweep() {
		this.lock.lock();
		try {
			long now = System.nanoTime();
			for (Map.Entry<String, Listening> entry : this.channels.entrySet()) {
				Listening listening = entry.getValue();
				if (!listening.listeners.isEmpty() || now - listening.idleSince < LINGER.toNanos()) {
					continue;
				}
				// Forgotten first: the server's confirmation must not read as a subscription it ended.
				this.channels.remove(entry.getKey());
				List<String> leaving = new ArrayList<>();
				leaving.add(entry.getKey());
				for (String handOff : listening.handOffs) {
					this.handOffs.remove(handOff);
					leaving.add(handOff);
				}
				if (this.connection != null && this.connection.isOpen()) {
					try {
						await(this.connection.async().sunsubscribe(bytes(leaving)), "SUNSUBSCRIBE " + leaving);
					}
					catch (RuntimeException ex) {
						// Left subscribed: its messages find no listener, and a wait for the lock subscribes anew.
						log.debug("Could not unsubscribe from {}", leaving, ex);
					}
				}
			}
		}
		catch (RuntimeException ex) {
			log.debug("Sweeping shard subscriptions failed; trying again in {}", SWEEP_PERIOD, ex);
		}
		finally {
			this.lock.unlock();
		}
	}

	private StatefulRedisClusterPubSubConnection<byte[], byte[]> connection() {
		if (this.connection == null || !this.connection.isOpen()) {
			if (this.connection != null) {
				closeQuietly(this.connection);
			}
			AbstractRedisClient client = this.connectionFactory.getRequiredNativeClient();
			if (!(client instanceof RedisClusterClient cluster)) {
				throw new IllegalStateException("Sharded pub/sub needs Lettuce's RedisClusterClient, not " + client);
			}
			StatefulRedisClusterPubSubConnection<byte[], byte[]> opened = cluster.connectPubSub(ByteArrayCodec.INSTANCE);
			opened.addListener(this);
			this.connection = opened;
		}
		return this.connection;
	}

	private void await(RedisFuture<?> reply, String what) {
		Duration timeout = this.connectionFactory.getClientConfiguration().getCommandTimeout();
		try {
			reply.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for Redis to confirm " + what, ex);
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof RuntimeException cause) ? cause
					: new IllegalStateException("Redis refused " + what, ex.getCause());
		}
		catch (TimeoutException ex) {
			throw new IllegalStateException("Redis did not confirm " + what + " within " + timeout, ex);
		}
	}

	private void lockInterruptibly() {
		try {
			this.lock.lockInterruptibly();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting to subscribe to lock releases", ex);
		}
	}

	@Override
	public void smessage(RedisClusterNode node, byte[] shardChannel, byte[] message) {
		String channel = new String(shardChannel, StandardCharsets.UTF_8);
		String body = new String(message, StandardCharsets.UTF_8);
		LockNotice notice;
		String lockChannel = this.handOffs.get(channel);
		if (lockChannel != null) {
			Map.Entry<String, LockNotice> grant = RedisReleaseSubscriber.grant(body);
			if (grant == null) {
				log.debug("Unreadable hand-off message on {}: {}", channel, body);
				return;
			}
			notice = grant.getValue();
		}
		else {
			lockChannel = channel;
			notice = RedisReleaseSubscriber.notice(body);
		}
		// No listeners: the waiter is gone, and its leaving passes the hold on (LockBackend#leaveQueue).
		Listening listening = this.channels.get(lockChannel);
		if (listening != null) {
			listening.listeners.forEach(listener -> listener.accept(notice));
		}
	}

	/**
	 * The server ended a subscription (its slot moved to another node), or confirms one this
	 * subscriber ended; a channel still listened to is subscribed again where its slot is now.
	 */
	@Override
	public void sunsubscribed(RedisClusterNode node, byte[] shardChannel, long count) {
		String channel = new String(shardChannel, StandardCharsets.UTF_8);
		if (!listenedTo(channel)) {
			return;
		}
		try {
			this.housekeeping.execute(() -> resubscribe(channel));
		}
		catch (RejectedExecutionException closing) {
			// Closed meanwhile: nothing to listen for any more.
		}
	}

	private boolean listenedTo(String channel) {
		return this.channels.containsKey(channel) || this.handOffs.containsKey(channel);
	}

	private void resubscribe(String channel) {
		this.lock.lock();
		try {
			if (this.closed || !listenedTo(channel)) {
				return;
			}
			log.info("distlock: the server ended the subscription to {} (its slot moved); subscribing again", channel);
			await(connection().async().ssubscribe(bytes(List.of(channel))), "SSUBSCRIBE " + channel);
		}
		catch (RuntimeException ex) {
			// Its waiters re-check within half their queue place, and the next wait subscribes anew.
			log.warn("distlock: could not subscribe to {} again after its slot moved: {}", channel, ex.toString());
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void close() {
		this.lock.lock();
		try {
			this.closed = true;
			this.channels.clear();
			this.handOffs.clear();
			this.housekeeping.shutdownNow();
			if (this.connection != null) {
				closeQuietly(this.connection);
				this.connection = null;
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	private static void closeQuietly(StatefulRedisClusterPubSubConnection<byte[], byte[]> connection) {
		try {
			connection.close();
		}
		catch (RuntimeException ex) {
			log.debug("Could not close the sharded release subscription connection", ex);
		}
	}

	private static byte[][] bytes(List<String> channels) {
		byte[][] bytes = new byte[channels.size()][];
		for (int i = 0; i < bytes.length; i++) {
			bytes[i] = channels.get(i).getBytes(StandardCharsets.UTF_8);
		}
		return bytes;
	}

	/**
	 * The listeners of one lock's shard channel and this client's hand-off channels of that lock;
	 * {@link #subscribed} and {@link #idleSince} only under the subscriber's lock.
	 */
	private static final class Listening {

		final Set<Consumer<LockNotice>> listeners = new CopyOnWriteArraySet<>();

		final Set<String> handOffs = ConcurrentHashMap.newKeySet();

		boolean subscribed;

		long idleSince;

	}

}
