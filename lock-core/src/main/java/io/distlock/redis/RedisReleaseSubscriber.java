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
	 * Passes the body of every message on {@code channel} to {@code onMessage} until the returned handle is
	 * closed. Returns once the server has confirmed the subscription.
	 */
	AutoCloseable subscribe(String channel, Consumer<LockNotice> onMessage) {
		lockInterruptibly();
		try {
			if (this.closed) {
				throw new IllegalStateException("Release subscriber is closed");
			}
			Set<Consumer<LockNotice>> listeners = this.callbacks.computeIfAbsent(channel, key -> new CopyOnWriteArraySet<>());
			listeners.add(onMessage);
			if (listeners.size() == 1) {
				try {
					subscription().subscribe(bytes(channel));
				}
				catch (RuntimeException ex) {
					this.callbacks.remove(channel);
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
			this.connection.subscribe(this, this.anchorChannel);
		}
		return this.connection.getSubscription();
	}

	/**
	 * Reads what the scripts publish: {@code released} (release.lua), {@code grant <token> <owner>
	 * <ticket>} (release.lua, a hand-off), or the owner id of an abandoned attempt (abandon.lua).
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
		Set<Consumer<LockNotice>> listeners = this.callbacks.get(new String(message.getChannel(), StandardCharsets.UTF_8));
		if (listeners != null) {
			LockNotice notice = notice(new String(message.getBody(), StandardCharsets.UTF_8));
			listeners.forEach(listener -> listener.accept(notice));
		}
	}

	@Override
	public void close() {
		this.lock.lock();
		try {
			this.closed = true;
			this.callbacks.clear();
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
