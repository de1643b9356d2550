package io.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.Subscription;

import io.distlock.core.LockNotice;

/**
 * One pub/sub connection per client, shared by the waiters of every lock: channels are subscribed
 * while some thread waits for that lock and unsubscribed when the last one stops.
 *
 * <p>SUBSCRIBE and UNSUBSCRIBE are sent under one lock, so for any channel the server sees them in
 * the order the callbacks were added and removed; otherwise a late UNSUBSCRIBE of a finished wait
 * could cancel the SUBSCRIBE of a new one. An anchor channel stays subscribed so the connection
 * is not closed whenever no lock has waiters.
 *
 * <p>Hand-offs arrive on the client's own channel (release.lua publishes each on the channel of the
 * client whose owner it is for), naming the lock's channel; they are passed to that lock's
 * listeners. A client's hand-off channel stays subscribed once its first waiter subscribed.
 */
final class RedisReleaseSubscriber implements MessageListener, AutoCloseable {

	private static final Logger log = LoggerFactory.getLogger(RedisReleaseSubscriber.class);

	private final RedisConnectionFactory connectionFactory;

	private final byte[] anchorChannel;

	/** What release.lua publishes for an ordinary release. */
	private static final String RELEASED = "released";

	/** What starts release.lua's hand-off message. */
	private static final String GRANT_PREFIX = "grant ";

	private final Map<String, Set<Consumer<LockNotice>>> callbacks = new ConcurrentHashMap<>();

	/** The hand-off channels of this backend's clients, subscribed for good. */
	private final Set<String> grantChannels = ConcurrentHashMap.newKeySet();

	/**
	 * Interruptible, unlike a monitor: a SUBSCRIBE stalled on an unresponsive server must not keep
	 * other waiters past the deadline at which their acquisition is cut off.
	 */
	private final ReentrantLock lock = new ReentrantLock();

	private RedisConnection connection;

	private boolean closed;

	RedisReleaseSubscriber(RedisConnectionFactory connectionFactory, String anchorChannel) {
		this.connectionFactory = connectionFactory;
		this.anchorChannel = anchorChannel.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Passes every notice on {@code channel}, and every hand-off for it on {@code grantChannel}, to
	 * {@code onMessage} until the returned handle is closed. Returns once the server has confirmed
	 * the subscription.
	 * @param grantChannel the hand-off channel of the waiting client, or {@code null}
	 */
	AutoCloseable subscribe(String channel, String grantChannel, Consumer<LockNotice> onMessage) {
		lockInterruptibly();
		try {
			if (this.closed) {
				throw new IllegalStateException("Release subscriber is closed");
			}
			Set<Consumer<LockNotice>> listeners = this.callbacks.computeIfAbsent(channel, key -> new CopyOnWriteArraySet<>());
			listeners.add(onMessage);
			// Known before SUBSCRIBE is sent, so that a hand-off arriving at once is read as one; kept for good.
			boolean newGrantChannel = grantChannel != null && this.grantChannels.add(grantChannel);
			if (listeners.size() == 1 || newGrantChannel) {
				try {
					// One SUBSCRIBE for both.
					subscription().subscribe(newGrantChannel ? new byte[][] { bytes(channel), bytes(grantChannel) }
							: new byte[][] { bytes(channel) });
				}
				catch (RuntimeException ex) {
					if (newGrantChannel) {
						this.grantChannels.remove(grantChannel);
					}
					listeners.remove(onMessage);
					if (listeners.isEmpty()) {
						this.callbacks.remove(channel);
					}
					throw ex;
				}
			}
		}
		finally {
			this.lock.unlock();
		}
		return () -> unsubscribe(channel, onMessage);
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

	private void unsubscribe(String channel, Consumer<LockNotice> onMessage) {
		this.lock.lock();
		try {
			Set<Consumer<LockNotice>> listeners = this.callbacks.get(channel);
			if (listeners == null || !listeners.remove(onMessage) || !listeners.isEmpty()) {
				return;
			}
			this.callbacks.remove(channel);
			if (this.connection != null && this.connection.isSubscribed()) {
				this.connection.getSubscription().unsubscribe(bytes(channel));
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	private Subscription subscription() {
		if (this.connection == null || this.connection.isClosed() || !this.connection.isSubscribed()) {
			if (this.connection != null) {
				closeQuietly(this.connection);
			}
			this.connection = this.connectionFactory.getConnection();
			byte[][] channels = new byte[this.grantChannels.size() + 1][];
			channels[0] = this.anchorChannel;
			int i = 1;
			for (String grantChannel : this.grantChannels) {
				channels[i++] = bytes(grantChannel);
			}
			this.connection.subscribe(this, channels);
		}
		return this.connection.getSubscription();
	}

	/**
	 * Reads a hand-off published on a client's channel: {@code grant <token> <owner> <ticket> <lock
	 * channel>} (the lock's channel last, as lock names may hold spaces).
	 * @return the lock's channel and the notice, or {@code null} if this version cannot read it
	 */
	static Map.Entry<String, LockNotice> grant(String message) {
		// The lock's channel starts after the fourth space; what comes before is a hand-off as notice() reads it.
		int end = -1;
		for (int spaces = 0; spaces < 4; spaces++) {
			end = message.indexOf(' ', end + 1);
			if (end < 0) {
				return null;
			}
		}
		return message.startsWith(GRANT_PREFIX) ? Map.entry(message.substring(end + 1), notice(message.substring(0, end)))
				: null;
	}

	/**
	 * Reads what the scripts publish: {@code released} (release.lua), {@code grant <token> <owner>
	 * <ticket>} (a hand-off), or the owner id of an abandoned attempt (abandon.lua).
	 */
	static LockNotice notice(String message) {
		if (message.startsWith(GRANT_PREFIX)) {
			String[] parts = message.split(" ");
			if (parts.length == 4 && parts[1].chars().allMatch(Character::isDigit) && !parts[1].isEmpty()) {
				return new LockNotice.Granted(Long.parseLong(parts[1]), parts[2], parts[3]);
			}
			// Not a hand-off this version can read: the head is woken and asks Redis.
			return LockNotice.RELEASED;
		}
		return RELEASED.equals(message) ? LockNotice.RELEASED : new LockNotice.Abandoned(message);
	}

	@Override
	public void onMessage(Message message, byte[] pattern) {
		String channel = new String(message.getChannel(), StandardCharsets.UTF_8);
		String body = new String(message.getBody(), StandardCharsets.UTF_8);
		LockNotice notice;
		if (this.grantChannels.contains(channel)) {
			Map.Entry<String, LockNotice> grant = grant(body);
			if (grant == null) {
				log.debug("Unreadable hand-off message on {}: {}", channel, body);
				return;
			}
			channel = grant.getKey();
			notice = grant.getValue();
		}
		else {
			notice = notice(body);
		}
		// No listeners: the waiter is gone, and its leaving passes the hold on (LockBackend#leaveQueue).
		Set<Consumer<LockNotice>> listeners = this.callbacks.get(channel);
		if (listeners != null) {
			LockNotice delivered = notice;
			listeners.forEach(listener -> listener.accept(delivered));
		}
	}

	@Override
	public void close() {
		this.lock.lock();
		try {
			this.closed = true;
			this.callbacks.clear();
			this.grantChannels.clear();
			if (this.connection != null) {
				closeQuietly(this.connection);
				this.connection = null;
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	private static void closeQuietly(RedisConnection connection) {
		try {
			connection.close();
		}
		catch (RuntimeException ex) {
			log.debug("Could not close the release subscription connection", ex);
		}
	}

	private static byte[] bytes(String channel) {
		return channel.getBytes(StandardCharsets.UTF_8);
	}

}
