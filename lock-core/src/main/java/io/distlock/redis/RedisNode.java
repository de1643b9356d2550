package io.distlock.redis;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.Health;
import io.distlock.core.LockBackend.HoldRef;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.LockNotice;

/**
 * The per-node calls of Redlock ({@link io.distlock.redlock.RedlockBackend}) on one independent
 * Redis master. Each master keeps its locks exactly as a single-Redis {@link RedisLockBackend} does,
 * same scripts and same re-send safety; on top of that Redlock needs to name the attempt that took a
 * hold so that it can undo exactly that attempt, to send without blocking, and to know which server
 * the node reaches. Public only because Redlock lives in another package; not a lock backend itself.
 */
public final class RedisNode implements AutoCloseable {

	private final RedisLockBackend backend;

	private final RedisLockCalls calls;

	private final RedisConnectionFactory connectionFactory;

	/** Removes the connection listeners registered by {@link #onConnected(Runnable)}; run on close. */
	private final List<Runnable> connectionListeners = new CopyOnWriteArrayList<>();

	/**
	 * @param connectionFactory the master's connection factory; not closed by this node
	 * @param keyPrefix the namespace of all keys and channels, e.g. {@code distlock}
	 * @param restartGrace see {@link RedisLockBackend#RedisLockBackend(RedisConnectionFactory, String, Duration)}
	 */
	public RedisNode(RedisConnectionFactory connectionFactory, String keyPrefix, Duration restartGrace) {
		this.backend = new RedisLockBackend(connectionFactory, keyPrefix, restartGrace);
		this.calls = this.backend.calls();
		this.connectionFactory = connectionFactory;
	}

	/** @return where this node keeps its locks, e.g. {@code 10.0.0.1:6379}, for messages */
	public String description() {
		return this.backend.description();
	}

	/**
	 * Which server this is, by its {@code run_id}: two addresses (or two database numbers) that reach
	 * one server answer the same. A restarted server answers a new one.
	 * @return the server's run id
	 */
	public String serverId() {
		return this.backend.diagnostics().serverId();
	}

	/**
	 * Runs {@code action} each time one of this node's Lettuce connections (re)connects, on
	 * Lettuce's I/O thread (hand real work to another thread). Does nothing for other clients.
	 * @param action what to run
	 */
	public void onConnected(Runnable action) {
		if (this.connectionFactory instanceof LettuceConnectionFactory lettuce && lettuce.isRunning()) {
			AbstractRedisClient client = lettuce.getNativeClient();
			RedisConnectionStateListener listener = new RedisConnectionStateListener() {
				@Override
				public void onRedisConnected(RedisChannelHandler<?, ?> connection, SocketAddress address) {
					action.run();
				}
			};
			client.addListener(listener);
			this.connectionListeners.add(() -> client.removeListener(listener));
		}
	}

	/**
	 * Looks up the factory's shared Lettuce connection, which the {@code *Async} methods use. This may
	 * connect, so call it where blocking is fine. Commands sent through one shared connection reach
	 * the server in the order they were sent, however many threads are waiting for replies.
	 * @return whether the {@code *Async} methods are available (a shared Lettuce connection to a
	 * single server)
	 */
	public boolean prepareAsync() {
		return this.calls.prepareAsync();
	}

	/** @return whether {@link #prepareAsync()} succeeded */
	public boolean asyncReady() {
		return this.calls.asyncReady();
	}

	/**
	 * Acquires or re-enters as {@link RedisLockBackend#acquire} without queueing, remembering which
	 * attempt it was, so that {@link #abandon} can later undo exactly this attempt.
	 * @param attemptId the attempt's id, which becomes the hold's id; {@code null} for none
	 * @return the outcome
	 */
	public Acquisition acquire(String name, String owner, int heldCount, Duration lease, String attemptId) {
		return this.calls.acquire(name, owner, heldCount, lease, attemptId, Duration.ZERO, "");
	}

	/**
	 * {@link #acquire} without blocking the calling thread; needs {@link #prepareAsync()}.
	 * @return the outcome, when Redis answers
	 */
	public CompletableFuture<Acquisition> acquireAsync(String name, String owner, int heldCount, Duration lease,
			String attemptId) {
		return this.calls.acquireAsync(name, owner, heldCount, lease, attemptId);
	}

	/**
	 * Releases one hold, but only the hold the given attempt took.
	 * @param attemptId the attempt id given to {@link #acquire}, or {@code null}/empty for whatever hold
	 * the owner has
	 * @return the outcome
	 */
	public Release release(String name, String owner, int heldCount, String attemptId) {
		return this.calls.release(name, owner, heldCount, attemptId, null, true, 0);
	}

	/**
	 * {@link #release} without blocking the calling thread; needs {@link #prepareAsync()}.
	 * @return the outcome, when Redis answers
	 */
	public CompletableFuture<Release> releaseAsync(String name, String owner, int heldCount, String attemptId) {
		return this.calls.releaseAsync(name, owner, heldCount, attemptId);
	}

	/**
	 * Undoes one acquisition attempt if, and only if, the hold still belongs to that attempt.
	 * @param name the lock's name
	 * @param owner the owner id
	 * @param attemptId the id given to the attempt's {@link #acquire}
	 * @return whether a hold was deleted
	 */
	public boolean abandon(String name, String owner, String attemptId) {
		return this.calls.abandon(name, owner, attemptId);
	}

	/**
	 * {@link #abandon} without blocking the calling thread; needs {@link #prepareAsync()}.
	 * @return whether a hold was deleted, when Redis answers
	 */
	public CompletableFuture<Boolean> abandonAsync(String name, String owner, String attemptId) {
		return this.calls.abandonAsync(name, owner, attemptId);
	}

	/**
	 * @return for each hold, in order, whether it was still held here and is now renewed
	 * @see RedisLockBackend#renew
	 */
	public List<Boolean> renew(List<HoldRef> holds, Duration lease) {
		return this.backend.renew(holds, lease, null);
	}

	/** @return whether the owner holds the lock on this node now */
	public boolean isHeldBy(String name, String owner) {
		return this.backend.isHeldBy(name, owner);
	}

	/** @return the lock's remaining lease on this node, {@link Duration#ZERO} if it is free here */
	public Duration remainingLease(String name) {
		return this.backend.remainingLease(name);
	}

	/**
	 * @return the subscription to this node's notices of the lock, to close when no longer waiting
	 * @see RedisLockBackend#subscribe
	 */
	public AutoCloseable subscribe(String name, Consumer<LockNotice> onNotice) {
		// No client id: Redlock does not queue, so there is no hand-off channel to listen to.
		return this.backend.subscribe(name, null, onNotice);
	}

	/** @return whether this node answers a PING, with details */
	public Health health() {
		return this.backend.health();
	}

	/** @return what this node's server is set to do that can lose holds, e.g. evict lock keys */
	public List<String> serverWarnings() {
		return this.backend.serverWarnings();
	}

	/** Releases this node's own resources, not the connection factory. */
	@Override
	public void close() {
		this.connectionListeners.forEach(Runnable::run);
		this.backend.close();
	}

}
