package io.distlock.redis;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.ScriptOutputType;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import io.distlock.core.LockBackend;
import io.distlock.core.LockNotice;

/**
 * Keeps locks in one Redis deployment (a single server, a Sentinel-managed master, or a Cluster)
 * through Spring Data Redis: one hash per lock, every state change one Lua script.
 *
 * <p>Over 300 lines because it adapts every backend operation, blocking and asynchronous, to its script
 * and explains Redis's failures; the lock logic itself is in the scripts.
 */
public final class RedisLockBackend implements LockBackend {

	private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

	private final StringRedisTemplate redis;

	private final RedisKeys keys;

	private final RedisReleaseSubscriber subscriber;

	private final RedisDiagnostics diagnostics;

	private final String description;

	/** The restart grace in ms, as acquire.lua takes it. */
	private final String restartGrace;

	/** The start of every client's hand-off channel (see {@code release.lua}). */
	private final String grantChannelPrefix;

	/** At most how long a hold handed to a queued owner lasts before that owner extends it. */
	private static final String HAND_OFF_LEASE = String.valueOf(QUEUE_PLACE.toMillis());

	/** How long leaving a queue waits for Redis to confirm; the command is sent either way. */
	private static final Duration LEAVE_REPLY_WAIT = Duration.ofMillis(100);

	/** Runs the lock scripts straight on the shared Lettuce connection, where there is one. */
	private final LettuceScripts direct;

	private final RedisConnectionFactory connectionFactory;

	/** Removes the connection listeners registered by {@link #onConnected(Runnable)}; run on close. */
	private final List<Runnable> connectionListeners = new CopyOnWriteArrayList<>();

	/**
	 * Leaves queues where scripts go through the template, whose calls block: a caller past its
	 * deadline must not wait for Redis to confirm. In an outage the backlog is bounded (a place left
	 * behind lapses by itself); once the backend is closed, leaves run on the caller's thread.
	 */
	private final ThreadPoolExecutor leaves = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
			new LinkedBlockingQueue<>(1024), daemon("distlock-leave"), (task, executor) -> {
				if (executor.isShutdown()) {
					task.run();
				}
			});

	/** Renews where scripts go through the template: the watchdog waits only as long as the lease allows. */
	private final ExecutorService renewals = Executors.newCachedThreadPool(daemon("distlock-renewal"));

	/**
	 * @param connectionFactory the application's Redis connection factory; not closed by this backend
	 * @param keyPrefix the namespace of all keys and channels, e.g. {@code distlock}
	 */
	public RedisLockBackend(RedisConnectionFactory connectionFactory, String keyPrefix) {
		this(connectionFactory, keyPrefix, Duration.ZERO);
	}

	/**
	 * @param connectionFactory the application's Redis connection factory; not closed by this backend
	 * @param keyPrefix the namespace of all keys and channels, e.g. {@code distlock}
	 * @param restartGrace how long a server found to have lost its data (its fencing counter is gone)
	 * refuses new first acquisitions; zero: not at all (see {@code acquire.lua})
	 */
	public RedisLockBackend(RedisConnectionFactory connectionFactory, String keyPrefix, Duration restartGrace) {
		this.keys = new RedisKeys(keyPrefix, isCluster(connectionFactory));
		if (this.keys.cluster() && !restartGrace.isZero()) {
			// One fencing counter per slot: every slot's first lock would look like lost data.
			log.info("distlock: no restart grace on Redis Cluster (a slot's first lock cannot be told from lost "
					+ "data); run the cluster with persistence");
		}
		this.grantChannelPrefix = this.keys.grantChannelPrefix();
		this.restartGrace = this.keys.cluster() ? "0" : String.valueOf(Math.max(0, restartGrace.toMillis()));
		this.redis = new StringRedisTemplate(connectionFactory);
		// Otherwise every script call wraps the connection in a close-suppressing JDK proxy.
		this.redis.setExposeConnection(true);
		this.subscriber = new RedisReleaseSubscriber(connectionFactory, this.keys.anchorChannel());
		this.diagnostics = new RedisDiagnostics(connectionFactory, this.redis);
		this.description = this.diagnostics.description();
		this.direct = new LettuceScripts(connectionFactory, !this.keys.cluster(), this.description);
		this.connectionFactory = connectionFactory;
	}

	/**
	 * Runs {@code action} each time one of this backend's Lettuce connections (re)connects, on
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
		return this.direct.prepare();
	}

	/** @return whether {@link #prepareAsync()} succeeded */
	public boolean asyncReady() {
		return this.direct.ready();
	}

	/**
	 * {@link #acquire(String, String, int, Duration, String)} without blocking the calling thread;
	 * needs {@link #prepareAsync()}.
	 * @return the outcome, when Redis answers
	 */
	public CompletableFuture<Acquisition> acquireAsync(String name, String owner, int heldCount, Duration lease,
			String attemptId) {
		String attempt = (attemptId != null) ? attemptId : "";
		return this.direct.<List<?>>callAsync(LockScripts.ACQUIRE, ScriptOutputType.MULTI, this.keys.scriptKeys(name),
				owner, String.valueOf(lease.toMillis()), String.valueOf(heldCount), attempt, "0", this.restartGrace)
			.thenApply(reply -> RedisReplies.acquisition(reply, name, lease, attempt));
	}

	/**
	 * {@link #release(String, String, int, String)} without blocking the calling thread; needs
	 * {@link #prepareAsync()}.
	 * @return the outcome, when Redis answers
	 */
	public CompletableFuture<Release> releaseAsync(String name, String owner, int heldCount, String holdId) {
		return this.direct.<Long>callAsync(LockScripts.RELEASE, ScriptOutputType.INTEGER,
				this.keys.releaseKeys(name, owner), owner, String.valueOf(heldCount), this.keys.releaseChannel(name), "",
				(holdId != null) ? holdId : "", HAND_OFF_LEASE, this.grantChannelPrefix, this.restartGrace)
			.thenApply(reply -> RedisReplies.release(reply, name));
	}

	/**
	 * {@link #abandon} without blocking the calling thread; needs {@link #prepareAsync()}.
	 * @return whether a hold was deleted, when Redis answers
	 */
	public CompletableFuture<Boolean> abandonAsync(String name, String owner, String attemptId) {
		return this.direct.<Long>callAsync(LockScripts.ABANDON, ScriptOutputType.INTEGER, List.of(this.keys.lock(name)), owner,
				attemptId, this.keys.releaseChannel(name))
			.thenApply(reply -> reply != null && reply == 1);
	}

	/**
	 * Runs a lock script and waits for its reply: straight on the shared Lettuce connection where
	 * there is one (a lock decision is on every critical section's path; the template's connection
	 * wrapper, serializers and translation cost about as much client time as the call itself), else
	 * through the template.
	 */
	private <T> T eval(RedisScript<?> script, ScriptOutputType type, List<String> keys, String... args) {
		return eval(script, type, keys, null, args);
	}

	/**
	 * {@link #eval(RedisScript, ScriptOutputType, List, String...)}, waiting at most {@code within}
	 * on the shared Lettuce connection; through the template, the connection's command timeout bounds it.
	 */
	@SuppressWarnings("unchecked")
	private <T> T eval(RedisScript<?> script, ScriptOutputType type, List<String> keys, Duration within,
			String... args) {
		if (!this.direct.ready() && !this.direct.prepareOnce()) {
			return (T) this.redis.execute(script, keys, (Object[]) args);
		}
		return (within != null) ? this.direct.callUninterruptibly(script, type, keys, within, args)
				: this.direct.call(script, type, keys, args);
	}

	/** @return where this backend keeps its locks, e.g. {@code 10.0.0.1:6379}, for diagnostics */
	@Override
	public String description() {
		return this.description;
	}

	@Override
	public String explain(RuntimeException failure) {
		return this.diagnostics.explain(failure);
	}

	/**
	 * Which server this is, by its {@code run_id}: two addresses (or two database numbers) that reach
	 * one server answer the same. A restarted server answers a new one.
	 * @return the server's run id
	 */
	public String serverId() {
		return this.diagnostics.serverId();
	}

	@Override
	public Health health() {
		return this.diagnostics.health();
	}

	@Override
	public Acquisition acquire(String name, String owner, int heldCount, Duration lease) {
		return acquire(name, owner, heldCount, lease, "", Duration.ZERO, "");
	}

	/** Queues waiters: a release hands the lock to the first live one (see {@code release.lua}). */
	@Override
	public boolean queuesWaiters() {
		return true;
	}

	/**
	 * Acquires, and if the lock is taken queues the owner for {@code queueFor}: a release then hands
	 * the lock to the first live queued owner instead of freeing it, and publishes
	 * {@code grant <token> <owner> <ticket>}.
	 */
	@Override
	public Acquisition acquire(String name, String owner, int heldCount, Duration lease, Duration queueFor,
			String ticket) {
		return acquire(name, owner, heldCount, lease, "", queueFor, ticket);
	}

	/**
	 * Acquires as {@link #acquire(String, String, int, Duration)}, remembering which attempt it was,
	 * so that {@link #abandon} can later undo exactly this attempt.
	 * @param attemptId the attempt's id
	 * @return the outcome
	 */
	public Acquisition acquire(String name, String owner, int heldCount, Duration lease, String attemptId) {
		return acquire(name, owner, heldCount, lease, attemptId, Duration.ZERO, "");
	}

	/**
	 * @param attemptId Redlock's id of the attempt, or empty
	 * @param ticket the engine's id of the attempt, or empty: either is the hold's id
	 */
	private Acquisition acquire(String name, String owner, int heldCount, Duration lease, String attemptId,
			Duration queueFor, String ticket) {
		String attempt = (attemptId != null && !attemptId.isEmpty()) ? attemptId : (ticket != null) ? ticket : "";
		List<?> reply = eval(LockScripts.ACQUIRE, ScriptOutputType.MULTI, this.keys.scriptKeys(name), owner,
				String.valueOf(lease.toMillis()), String.valueOf(heldCount), attempt, String.valueOf(queueFor.toMillis()),
				this.restartGrace);
		return RedisReplies.acquisition(reply, name, lease, attempt);
	}

	@Override
	public Release release(String name, String owner, int heldCount) {
		return release(name, owner, heldCount, "");
	}

	/**
	 * Releases as {@link #release(String, String, int)}, but only the hold the given attempt took.
	 * @param holdId the attempt id given to {@link #acquire(String, String, int, Duration, String)}, or
	 * {@code null}/empty for whatever hold the owner has
	 */
	@Override
	public Release release(String name, String owner, int heldCount, String holdId) {
		return release(name, owner, heldCount, holdId, Acquisition.NO_TOKEN, null);
	}

	/**
	 * Releases as {@link #release(String, String, int, String)}; a copy of this release re-sent after
	 * a reconnect, finding the hold gone, is answered {@link Release#RELEASED} rather than
	 * {@link Release#NOT_HELD} (see {@code release.lua}'s release marker).
	 */
	@Override
	public Release release(String name, String owner, int heldCount, String holdId, long token, Duration within) {
		Long reply = eval(LockScripts.RELEASE, ScriptOutputType.INTEGER, this.keys.releaseKeys(name, owner), within,
				owner, String.valueOf(heldCount), this.keys.releaseChannel(name), "", (holdId != null) ? holdId : "",
				HAND_OFF_LEASE, this.grantChannelPrefix, this.restartGrace);
		return RedisReplies.release(reply, name);
	}

	/** Issues the token with {@code token.lua}, on the hold's first request for it. */
	@Override
	public long issueToken(String name, String owner, String holdId) {
		Long reply = eval(LockScripts.TOKEN, ScriptOutputType.INTEGER, this.keys.tokenKeys(name), owner,
				(holdId != null) ? holdId : "", this.restartGrace);
		if (reply == null) {
			throw new IllegalStateException("Redis returned no reply to the fencing token request of lock '" + name + "'");
		}
		return (reply < 0) ? Acquisition.NO_TOKEN : reply;
	}

	/**
	 * Sent without waiting long for the answer: an acquisition that gave up at its deadline must not
	 * overrun it because Redis is slow. The script touches only this attempt's place and hand-off, so
	 * it is harmless whenever it lands.
	 */
	@Override
	public void leaveQueue(String name, String owner, String ticket, boolean passOnHandOff) {
		String mode = passOnHandOff ? "leave" : "dequeue";
		if (this.direct.ready()) {
			this.direct.callBriefly(LockScripts.RELEASE, ScriptOutputType.INTEGER, this.keys.releaseKeys(name, owner),
					LEAVE_REPLY_WAIT, owner, "0", this.keys.releaseChannel(name), mode, ticket, HAND_OFF_LEASE, this.grantChannelPrefix, this.restartGrace);
			return;
		}
		this.leaves.execute(() -> this.redis.execute(LockScripts.RELEASE, this.keys.releaseKeys(name, owner), owner, "0",
				this.keys.releaseChannel(name), mode, ticket, HAND_OFF_LEASE, this.grantChannelPrefix, this.restartGrace));
	}

	/**
	 * Undoes one acquisition attempt if, and only if, the hold still belongs to that attempt.
	 * @param name the lock's name
	 * @param owner the owner id
	 * @param attemptId the id given to the attempt's acquire
	 * @return whether a hold was deleted
	 */
	public boolean abandon(String name, String owner, String attemptId) {
		Long reply = this.redis.execute(LockScripts.ABANDON, List.of(this.keys.lock(name)), owner, attemptId,
				this.keys.releaseChannel(name));
		return reply != null && reply == 1;
	}

	@Override
	public List<Boolean> renew(List<HoldRef> holds, Duration lease) {
		return renew(holds, lease, null);
	}

	/**
	 * Renews as {@link #renew(List, Duration)}, giving up after {@code within}: a renewal that would
	 * land after the lease it extends has run out is worth nothing, and the holder must learn of the
	 * loss then, not at the connection's command timeout. Through the template (a Cluster, a pool) the
	 * calls run on a renewal thread, which goes on waiting for them in the background.
	 */
	@Override
	public List<Boolean> renew(List<HoldRef> holds, Duration lease, Duration within) {
		if (within != null && !this.keys.cluster() && (this.direct.ready() || this.direct.prepareOnce())) {
			return renewInOneScript(holds, lease, within);
		}
		if (within == null) {
			return renewPerSlot(holds, lease);
		}
		CompletableFuture<List<Boolean>> renewal = new CompletableFuture<>();
		try {
			this.renewals.execute(() -> {
				try {
					renewal.complete(renewPerSlot(holds, lease));
				}
				catch (RuntimeException ex) {
					renewal.completeExceptionally(ex);
				}
			});
			return renewal.get(within.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			throw new RedisCommandTimeoutException("Redis (" + this.description + ") did not confirm the renewal of "
					+ holds.size() + " lock(s) within " + within.toMillis() + " ms");
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof RuntimeException runtime) ? runtime : new IllegalStateException(ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RedisCommandInterruptedException(ex);
		}
		catch (RejectedExecutionException ex) {
			throw new IllegalStateException("Lock backend for " + this.description + " is closed", ex);
		}
	}

	private List<Boolean> renewPerSlot(List<HoldRef> holds, Duration lease) {
		if (!this.keys.cluster()) {
			return renewInOneScript(holds, lease, null);
		}
		// A script may only touch keys of one slot: one call per slot.
		Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
		for (int i = 0; i < holds.size(); i++) {
			bySlot.computeIfAbsent(this.keys.slot(holds.get(i).name()), slot -> new ArrayList<>()).add(i);
		}
		Boolean[] renewed = new Boolean[holds.size()];
		for (List<Integer> indexes : bySlot.values()) {
			List<Boolean> slotResult = renewInOneScript(indexes.stream().map(holds::get).toList(), lease, null);
			for (int j = 0; j < indexes.size(); j++) {
				renewed[indexes.get(j)] = slotResult.get(j);
			}
		}
		return List.of(renewed);
	}

	private List<Boolean> renewInOneScript(List<HoldRef> holds, Duration lease, Duration within) {
		List<String> lockKeys = new ArrayList<>(holds.size());
		String[] args = new String[holds.size() + 1];
		args[0] = String.valueOf(lease.toMillis());
		for (int i = 0; i < holds.size(); i++) {
			lockKeys.add(this.keys.lock(holds.get(i).name()));
			args[i + 1] = holds.get(i).owner();
		}
		List<?> reply = (within != null) ? eval(LockScripts.RENEW, ScriptOutputType.MULTI, lockKeys, within, args)
				: this.redis.execute(LockScripts.RENEW, lockKeys, (Object[]) args);
		List<Boolean> renewed = new ArrayList<>(holds.size());
		for (int i = 0; i < holds.size(); i++) {
			renewed.add(RedisReplies.number(reply, i, holds.get(i).name()) == 1);
		}
		return renewed;
	}

	@Override
	public boolean isHeldBy(String name, String owner) {
		return this.redis.opsForHash().hasKey(this.keys.lock(name), owner);
	}

	@Override
	public Duration remainingLease(String name) {
		Long millis = this.redis.getExpire(this.keys.lock(name), TimeUnit.MILLISECONDS);
		if (millis == null || millis == -2) {
			return Duration.ZERO;
		}
		// -1: a key without expiry, which our scripts never create; someone else wrote it.
		return (millis == -1) ? Duration.ofMillis(Long.MAX_VALUE) : Duration.ofMillis(millis);
	}

	@Override
	public AutoCloseable subscribe(String name, Consumer<LockNotice> onNotice) {
		return this.subscriber.subscribe(this.keys.releaseChannel(name), null, onNotice);
	}

	/**
	 * Subscribes to the lock's channel, and to the client's own hand-off channel, on which release.lua
	 * announces a hand-off to one of the client's owners: with many clients waiting for one lock,
	 * each hand-off wakes only the client it is for.
	 */
	@Override
	public AutoCloseable subscribe(String name, String clientId, Consumer<LockNotice> onNotice) {
		return this.subscriber.subscribe(this.keys.releaseChannel(name), this.grantChannelPrefix + clientId, onNotice);
	}

	@Override
	public void close() {
		this.connectionListeners.forEach(Runnable::run);
		this.subscriber.close();
		// Queued leaves still go out; the threads end when they are done.
		this.leaves.shutdown();
		this.renewals.shutdown();
	}

	private static ThreadFactory daemon(String name) {
		return runnable -> {
			Thread thread = new Thread(runnable, name);
			thread.setDaemon(true);
			return thread;
		};
	}

	private static boolean isCluster(RedisConnectionFactory connectionFactory) {
		return connectionFactory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware();
	}

}
