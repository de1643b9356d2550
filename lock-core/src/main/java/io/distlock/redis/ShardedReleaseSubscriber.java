package io.distlock.redis;

import java.net.SocketAddress;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisChannelWriter;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.RedisClusterPubSubAdapter;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.pubsub.PubSubEndpoint;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;

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
 * for a key), following a MOVED reply.
 *
 * <p><b>Reconnects:</b> Lettuce re-sends all of a node connection's shard channels in one SSUBSCRIBE
 * when it reconnects, which the server refuses with CROSSSLOT as soon as they span two slots, so
 * this does not rely on it. When a node connection drops, the locks whose channels it held count as
 * not subscribed (a wait for one of them sends SSUBSCRIBE again and waits for its confirmation), and
 * when a pub/sub connection of the client connects, each such lock is subscribed again in the
 * background, one SSUBSCRIBE per lock (its channels share its slot).
 *
 * <p><b>Connections:</b> one cluster pub/sub connection per client, opened at the first wait, which
 * holds one idle connection to some node, plus one connection to each master that owns the slot of
 * a lock this client has waited for: at most one per shard, however many locks and threads wait.
 *
 * <p><b>Resharding:</b> when a slot leaves a node, the server ends its shard subscriptions with a
 * SUNSUBSCRIBE of its own; a lock still listened to is then subscribed again, in the background,
 * where the slot lives now. A message published meanwhile is missed, which costs only time: a queued
 * waiter asks Redis again within half its queue place (2 s) however quiet its channel. A background
 * SSUBSCRIBE that fails leaves the lock not subscribed, so the next wait for it tries itself, and is
 * tried again after 1 s, then twice as long each time up to {@link #MAX_RETRY}. A master that fails
 * over to a replica drops its connection, so its locks count as not subscribed from then: the next
 * wait for one subscribes where Lettuce's topology sends it.
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

	private static final Duration FIRST_RETRY = Duration.ofSeconds(1);

	/**
	 * How long a background pass waits for one lock's SSUBSCRIBE (an unanswered one stays queued in
	 * Lettuce and may still land; the lock then counts as not subscribed until the next pass).
	 */
	private static final Duration BACKGROUND_WAIT = Duration.ofSeconds(5);

	/** The longest pause between background attempts to subscribe a lock again. */
	static final Duration MAX_RETRY = Duration.ofSeconds(30);

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

	/**
	 * Counts the events that may have ended subscriptions (a node connection dropped, the server
	 * ended a subscription). A subscription confirmed while one happened is not trusted: the event
	 * may have undone it, and it has scheduled a pass that subscribes again.
	 */
	private final AtomicLong losses = new AtomicLong();

	/** Under {@link #lock}: the pause before the next background attempt after a failed one. */
	private Duration retryDelay = FIRST_RETRY;

	private boolean retryScheduled;

	private final RedisConnectionStateListener nodeConnections = new NodeConnections();

	private AbstractRedisClient client;

	private StatefulRedisClusterPubSubConnection<byte[], byte[]> connection;

	private volatile boolean closed;

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
			// Not subscribed: new, or lost with a node connection or to a slot move (then all its channels).
			boolean whole = !listening.subscribed;
			listening.listeners.add(onNotice);
			// Known before SSUBSCRIBE is sent, so that a hand-off arriving at once is read as one.
			boolean newHandOff = handOffChannel != null && listening.handOffs.add(handOffChannel);
			if (newHandOff) {
				this.handOffs.put(handOffChannel, channel);
			}
			List<String> subscribing = whole ? listening.all(channel)
					: newHandOff ? List.of(handOffChannel) : List.of();
			if (!subscribing.isEmpty()) {
				try {
					long lossesBefore = this.losses.get();
					// One SSUBSCRIBE for all: they share a slot, so one node.
					await(connection().async().ssubscribe(bytes(subscribing)), "SSUBSCRIBE " + subscribing);
					if (whole) {
						markSubscribed(listening, lossesBefore);
					}
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

	/**
	 * Opened once and kept: Lettuce reconnects it and its node connections (see {@link NodeConnections}).
	 * Replacing it would drop every lock's subscriptions at once.
	 */
	private StatefulRedisClusterPubSubConnection<byte[], byte[]> connection() {
		if (this.connection == null) {
			AbstractRedisClient client = this.connectionFactory.getRequiredNativeClient();
			if (!(client instanceof RedisClusterClient cluster)) {
				throw new IllegalStateException("Sharded pub/sub needs Lettuce's RedisClusterClient, not " + client);
			}
			cluster.addListener(this.nodeConnections);
			this.client = cluster;
			try {
				StatefulRedisClusterPubSubConnection<byte[], byte[]> opened = cluster.connectPubSub(ByteArrayCodec.INSTANCE);
				opened.addListener(this);
				this.connection = opened;
			}
			catch (RuntimeException ex) {
				cluster.removeListener(this.nodeConnections);
				this.client = null;
				throw ex;
			}
		}
		return this.connection;
	}

	private void await(RedisFuture<?> reply, String what) {
		await(reply, what, this.connectionFactory.getClientConfiguration().getCommandTimeout());
	}

	private void await(RedisFuture<?> reply, String what, Duration longest) {
		Duration timeout = min(longest, this.connectionFactory.getClientConfiguration().getCommandTimeout());
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
		if (lost(channel)) {
			log.info("distlock: the server ended the subscription to {} (its slot moved); subscribing again", channel);
			resubscribeLater(Duration.ZERO);
		}
	}

	/**
	 * Counts a lock as not subscribed, on Lettuce's event loop, which must not wait for {@link #lock}
	 * (its holder may wait for a reply from that loop).
	 * @return whether {@code channel} is a channel of a lock listened to
	 */
	private boolean lost(String channel) {
		String lockChannel = this.handOffs.getOrDefault(channel, channel);
		Listening listening = this.channels.get(lockChannel);
		if (listening == null) {
			// Not listened to, or its unsubscribe confirmed: the sweep forgets a lock before it unsubscribes.
			return false;
		}
		this.losses.incrementAndGet();
		listening.subscribed = false;
		return true;
	}

	private void resubscribeLater(Duration delay) {
		try {
			this.housekeeping.schedule(this::resubscribeLost, delay.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException closing) {
			// Closed meanwhile: nothing to listen for any more.
		}
	}

	/**
	 * Subscribes again, one SSUBSCRIBE per lock, every lock not subscribed (including those lingering),
	 * and on a failure stops and tries again after {@link #retryDelay}.
	 */
	private void resubscribeLost() {
		this.lock.lock();
		try {
			RuntimeException failure = null;
			for (Map.Entry<String, Listening> entry : this.channels.entrySet()) {
				Listening listening = entry.getValue();
				if (this.closed || listening.subscribed) {
					continue;
				}
				List<String> subscribing = listening.all(entry.getKey());
				long lossesBefore = this.losses.get();
				try {
					// A lock whose shard is still away must not keep the others waiting for the whole command timeout.
					await(connection().async().ssubscribe(bytes(subscribing)), "SSUBSCRIBE " + subscribing,
							BACKGROUND_WAIT);
					markSubscribed(listening, lossesBefore);
				}
				catch (RuntimeException ex) {
					failure = ex;
				}
			}
			if (failure != null) {
				throw failure;
			}
			this.retryDelay = FIRST_RETRY;
		}
		catch (RuntimeException ex) {
			// Its waiters re-check within half their queue place, and the next wait for it subscribes itself.
			log.warn("distlock: could not subscribe to lock releases again (after a slot moved or a reconnect); "
					+ "trying again in {}: {}", this.retryDelay, ex.toString());
			if (!this.retryScheduled) {
				this.retryScheduled = true;
				Duration delay = this.retryDelay;
				this.retryDelay = min(this.retryDelay.multipliedBy(2), MAX_RETRY);
				try {
					this.housekeeping.schedule(() -> {
						this.lock.lock();
						try {
							this.retryScheduled = false;
						}
						finally {
							this.lock.unlock();
						}
						resubscribeLost();
					}, delay.toMillis(), TimeUnit.MILLISECONDS);
				}
				catch (RejectedExecutionException closing) {
					// Closed meanwhile.
				}
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Counts {@code listening} as subscribed unless a subscription was lost since {@code lossesBefore}:
	 * set first and checked after, as {@link #lost} counts first and clears after, so that a loss
	 * between the check and the set cannot be overwritten.
	 */
	private void markSubscribed(Listening listening, long lossesBefore) {
		listening.subscribed = true;
		if (this.losses.get() != lossesBefore) {
			listening.subscribed = false;
		}
	}

	private static Duration min(Duration a, Duration b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

	/**
	 * Follows the client's pub/sub node connections: Lettuce's own re-subscribe after a reconnect
	 * sends one SSUBSCRIBE for all of a node's shard channels, refused with CROSSSLOT when they span
	 * several slots, so this subscribes again itself, lock by lock. Called on Lettuce's event loop.
	 */
	private final class NodeConnections implements RedisConnectionStateListener {

		@Override
		public void onRedisDisconnected(RedisChannelHandler<?, ?> handler) {
			PubSubEndpoint<?, ?> endpoint = shardEndpoint(handler);
			if (endpoint == null) {
				return;
			}
			// Lettuce keeps the node's channels for its re-subscribe: those are the locks on that node.
			boolean any = false;
			for (Object channel : endpoint.getShardChannels()) {
				if (channel instanceof byte[] name) {
					any |= lost(new String(name, StandardCharsets.UTF_8));
				}
			}
			if (any) {
				log.info("distlock: a connection for shard subscriptions dropped; its locks are subscribed again "
						+ "when it is back");
				// Also when it never is (its master failed over, or the topology dropped the node): the pass
				// follows the slots to where they are now, retrying with its back-off.
				resubscribeLater(FIRST_RETRY);
			}
		}

		@Override
		public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
			if (shardEndpoint(handler) != null && !ShardedReleaseSubscriber.this.closed) {
				// Commands sent before the connection is ready wait for it in Lettuce's queue.
				resubscribeLater(Duration.ZERO);
			}
		}

		/** @return the endpoint of a node connection of a cluster pub/sub connection, else {@code null} */
		private PubSubEndpoint<?, ?> shardEndpoint(RedisChannelHandler<?, ?> handler) {
			if (!(handler instanceof StatefulRedisPubSubConnection<?, ?>)
					|| handler instanceof StatefulRedisClusterPubSubConnection<?, ?>) {
				return null;
			}
			RedisChannelWriter writer = handler.getChannelWriter();
			// Lettuce wraps the endpoint in writers (command expiry, listeners) that hand out their delegate
			// through getDelegate(); read reflectively, as the interface declaring it is Lettuce 7's (Boot 4.0
			// and 3.5 bring Lettuce 6). Where it cannot be read, drops are not followed and Lettuce's own
			// re-subscribe is all there is.
			for (int depth = 0; depth < 8 && writer != null && !(writer instanceof PubSubEndpoint<?, ?>); depth++) {
				writer = delegateOf(writer);
			}
			return (writer instanceof PubSubEndpoint<?, ?> endpoint) ? endpoint : null;
		}

		private static RedisChannelWriter delegateOf(RedisChannelWriter writer) {
			try {
				java.lang.reflect.Method getDelegate = writer.getClass().getMethod("getDelegate");
				getDelegate.setAccessible(true);
				return (getDelegate.invoke(writer) instanceof RedisChannelWriter delegate) ? delegate : null;
			}
			catch (ReflectiveOperationException | RuntimeException ex) {
				return null;
			}
		}

	}

	@Override
	public void close() {
		// Before the lock: a pass holding it waits for a reply, and is interrupted rather than waited for.
		this.closed = true;
		this.housekeeping.shutdownNow();
		this.lock.lock();
		try {
			this.channels.clear();
			this.handOffs.clear();
			if (this.client != null) {
				this.client.removeListener(this.nodeConnections);
				this.client = null;
			}
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
	 * {@link #subscribed} set and {@link #idleSince} only under the subscriber's lock.
	 */
	private static final class Listening {

		final Set<Consumer<LockNotice>> listeners = new CopyOnWriteArraySet<>();

		final Set<String> handOffs = ConcurrentHashMap.newKeySet();

		/** Cleared also on Lettuce's event loop (see {@link ShardedReleaseSubscriber#lost}). */
		volatile boolean subscribed;

		long idleSince;

		/** @return the lock's channel and its hand-off channels, all in one slot */
		List<String> all(String channel) {
			List<String> all = new ArrayList<>(1 + this.handOffs.size());
			all.add(channel);
			all.addAll(this.handOffs);
			return all;
		}

	}

}
