package io.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.ScriptOutputType;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.serializer.RedisSerializer;

import io.distlock.HoldKind;
import io.distlock.core.LockBackend;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.HoldRef;
import io.distlock.core.LockBackend.Release;

/**
 * The calls that read and change locks on one Redis deployment, each script with its keys and
 * arguments, and its reply read: what {@link RedisLockBackend} and {@link RedisNode} (Redlock's
 * calls on one master) both send. Scripts go straight to the factory's shared Lettuce connection
 * where there is one, else through the template.
 */
final class RedisLockCalls {

	/**
	 * A queue place in ms: how long a waiter mostly stays queued without calling again, and at most
	 * how long a hold handed to a queued owner lasts before that owner extends it.
	 */
	private static final byte[] QUEUE_PLACE_MILLIS = ScriptArguments.number(LockBackend.QUEUE_PLACE.toMillis());

	private static final byte[] RELEASE = ScriptArguments.text("");

	private static final byte[] LEAVE = ScriptArguments.text("leave");

	private static final byte[] DEQUEUE = ScriptArguments.text("dequeue");

	/** How long leaving a queue waits for Redis to confirm; the command is sent either way. */
	private static final Duration LEAVE_REPLY_WAIT = Duration.ofMillis(100);

	/**
	 * How long a replica acknowledgement may take at least, whatever the caller's wait: the engine's
	 * deadline guard gives every timed call a second, and the acquisition itself takes some of it.
	 */
	private static final Duration SHORTEST_ACK_BOUND = Duration.ofMillis(700);

	/** How long giving back an unacknowledged hold is waited for; it is sent either way. */
	private static final Duration GIVE_BACK_WAIT = Duration.ofSeconds(2);

	private static final byte[] WAKE_UNQUEUED = ScriptArguments.text("1");

	private static final byte[] QUEUED_ONLY = ScriptArguments.text("");

	private static final byte[] HELD_HERE = ScriptArguments.text("1");

	/**
	 * How long a release marker lives at least: a release that Lettuce re-sends after a reconnect
	 * finds it within this time (release.lua). Shorter-lived, the copy would report the hold lost.
	 */
	private static final long MARKER_MIN_MILLIS = 15_000;

	/**
	 * How long a release marker that keeps its hold's expiry may live at most: the watchdog's default
	 * lease. One that lives longer only takes memory, one key per owner and name (a renamed hold
	 * takes about 1.6 times what the attempt id alone did).
	 */
	private static final long MARKER_MAX_MILLIS = 30_000;

	/** release.lua's ARGV[9] for a marker that keeps what its hold had left of its lease. */
	private static final byte[] MARKER_KEEPS_LEASE = ScriptArguments.text("");

	/** release.lua's ARGV[9] for a marker given its own life. */
	private static final byte[] MARKER_MILLIS = ScriptArguments.number(MARKER_MIN_MILLIS);

	private static final byte[] NOT_HELD_HERE = ScriptArguments.text("0");

	private final StringRedisTemplate redis;

	/** Runs the scripts where they do not go straight to the connection, with keys and arguments as bytes. */
	private final RedisTemplate<byte[], byte[]> scripts;

	private final RedisKeys keys;

	private final EncodedKeys encodedKeys;

	private final ScriptArguments arguments = new ScriptArguments();

	private final String description;

	/** The restart grace in ms, as acquire.lua takes it. */
	private final byte[] restartGrace;

	/**
	 * Whether this client has held a lock on this server: it then knows that a fencing counter found
	 * missing was lost with the server's data, not never written (acquire.lua's ARGV[7]).
	 */
	private volatile boolean heldHere;

	/** The start of every client's hand-off channel (see {@code release.lua}). */
	private final byte[] grantChannelPrefix;

	/** Runs the lock scripts straight on the shared Lettuce connection, where there is one. */
	private final LettuceScripts direct;

	/** Whether releases and hand-offs go out by sharded pub/sub (a Redis 7+ Cluster). */
	private final ShardedPubSubCheck shardedPubSub;

	/** Sends acquisitions that replicas must acknowledge, or {@code null} where none is asked for. */
	private final ReplicaAcknowledgements replicaAcks;

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

	/**
	 * @param connectionFactory the application's Redis connection factory; not closed here
	 * @param keyPrefix the namespace of all keys and channels
	 * @param restartGrace see {@link RedisLockBackend#RedisLockBackend(RedisConnectionFactory, String, Duration)};
	 * none on a Cluster
	 */
	RedisLockCalls(RedisConnectionFactory connectionFactory, String keyPrefix, Duration restartGrace) {
		this(connectionFactory, keyPrefix, restartGrace, RedisReplicaAcks.NONE);
	}

	/**
	 * @param replicaAcks how many replicas must have a first acquisition before it counts
	 * @throws IllegalStateException where acknowledgements cannot be asked for (see {@link ReplicaAcknowledgements})
	 */
	RedisLockCalls(RedisConnectionFactory connectionFactory, String keyPrefix, Duration restartGrace,
			RedisReplicaAcks replicaAcks) {
		this.keys = new RedisKeys(keyPrefix,
				connectionFactory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware());
		long graceMillis = this.keys.cluster() ? 0 : Math.max(0, restartGrace.toMillis());
		this.encodedKeys = new EncodedKeys(this.keys, graceMillis > 0);
		this.grantChannelPrefix = ScriptArguments.text(this.keys.grantChannelPrefix());
		this.restartGrace = ScriptArguments.number(graceMillis);
		this.redis = new StringRedisTemplate(connectionFactory);
		// Otherwise every call through a template wraps the connection in a close-suppressing JDK proxy.
		this.redis.setExposeConnection(true);
		this.scripts = new RedisTemplate<>();
		this.scripts.setConnectionFactory(connectionFactory);
		this.scripts.setDefaultSerializer(RedisSerializer.byteArray());
		this.scripts.setExposeConnection(true);
		this.scripts.afterPropertiesSet();
		this.description = RedisDiagnostics.describe(connectionFactory);
		this.direct = new LettuceScripts(connectionFactory, !this.keys.cluster(), this.description);
		this.shardedPubSub = new ShardedPubSubCheck(connectionFactory, this.keys.cluster(), this.description);
		this.replicaAcks = replicaAcks.enabled()
				? new ReplicaAcknowledgements(connectionFactory, replicaAcks, this.description) : null;
	}

	/** @return whether first acquisitions wait for replicas (see {@link RedisReplicaAcks}) */
	boolean acknowledgedByReplicas() {
		return this.replicaAcks != null;
	}

	RedisKeys keys() {
		return this.keys;
	}

	/**
	 * @return whether the scripts announce releases and hand-offs by sharded pub/sub, on channels in
	 * each lock's slot (see {@code announce.lua}); asks the Cluster once
	 */
	boolean shardedPubSub() {
		return this.shardedPubSub.sharded();
	}

	/** @return whether {@link #shardedPubSub()} has come to an answer that holds from now on */
	boolean pubSubDecided() {
		return this.shardedPubSub.decided();
	}

	/** @return the template the calls go through where they do not go straight to the connection */
	StringRedisTemplate template() {
		return this.redis;
	}

	/** @return where the locks are kept, for messages */
	String description() {
		return this.description;
	}

	/**
	 * Looks up the factory's shared Lettuce connection, which the {@code *Async} methods use. This may
	 * connect, so call it where blocking is fine. Commands sent through one shared connection reach
	 * the server in the order they were sent, however many threads are waiting for replies.
	 * @return whether the {@code *Async} methods are available (a shared Lettuce connection to a
	 * single server)
	 */
	boolean prepareAsync() {
		return this.direct.prepare();
	}

	/** @return whether {@link #prepareAsync()} succeeded */
	boolean asyncReady() {
		return this.direct.ready();
	}

	/** @return whether scripts go straight to the shared connection, looking it up on the first call */
	boolean direct() {
		return this.direct.ready() || this.direct.prepareOnce();
	}

	/**
	 * Runs a lock script and waits for its reply: straight on the shared Lettuce connection where
	 * there is one (a lock decision is on every critical section's path; the template's connection
	 * wrapper, serializers and translation cost about as much client time as the call itself), else
	 * through the template. Waits at most {@code within} on the shared connection, or its command
	 * timeout if {@code null}; through the template, the connection's command timeout bounds it.
	 */
	@SuppressWarnings("unchecked")
	private <T> T eval(RedisScript<?> script, ScriptOutputType type, byte[][] keys, Duration within, byte[]... args) {
		if (!this.direct.ready() && !this.direct.prepareOnce()) {
			return (T) throughTemplate(script, keys, args);
		}
		return (within != null) ? this.direct.callUninterruptibly(script, type, keys, within, args)
				: this.direct.call(script, type, keys, args);
	}

	/** Replies of numbers only, or lists of them: no result serializer has anything to read. */
	@SuppressWarnings({ "unchecked", "rawtypes" })
	private Object throughTemplate(RedisScript<?> script, byte[][] keys, byte[]... args) {
		return this.scripts.execute((RedisScript) script, RedisSerializer.byteArray(), RedisSerializer.byteArray(),
				Arrays.asList(keys), (Object[]) args);
	}

	/**
	 * @param attemptId Redlock's id of the attempt, or empty
	 * @param ticket the engine's id of the attempt, or empty: either is the hold's id
	 */
	Acquisition acquire(String name, String owner, int heldCount, Duration lease, String attemptId,
			Duration queueFor, String ticket) {
		String attempt = (attemptId != null && !attemptId.isEmpty()) ? attemptId : (ticket != null) ? ticket : "";
		byte[][] keys = this.encodedKeys.acquireKeys(name);
		byte[][] args = { this.arguments.owner(owner), this.arguments.lease(lease), ScriptArguments.number(heldCount),
				this.arguments.attempt(attempt), queueTime(queueFor.toMillis()), this.restartGrace, heldHere() };
		if (this.replicaAcks != null) {
			return heardOf(acquireAcknowledged(name, owner, heldCount, lease, queueFor, attempt, keys, args));
		}
		List<?> reply = eval(LockScripts.ACQUIRE, ScriptOutputType.MULTI, keys, null, args);
		return heardOf(RedisReplies.acquisition(reply, name, lease, attempt));
	}

	/**
	 * A first acquisition (or the take-up of a hold handed over) counts once the replicas have it; a
	 * re-entry changes no owner and is not waited for. Unacknowledged, the hold is given back (only
	 * if it is still this attempt's) and the caller fails. The wait is bounded by the caller's own wait
	 * where it has one ({@code queueFor}) and by half the lease, so that the hold is still young when
	 * its holder starts.
	 */
	private Acquisition acquireAcknowledged(String name, String owner, int heldCount, Duration lease,
			Duration queueFor, String attempt, byte[][] keys, byte[][] args) {
		long started = System.nanoTime();
		ReplicaAcknowledgements.Sent sent = this.replicaAcks.acquire(LockScripts.ACQUIRE, keys, args);
		Acquisition acquisition = RedisReplies.acquisition(sent.reply(), name, lease, attempt);
		if (acquisition.status() != Acquisition.Status.ACQUIRED || heldCount > 0) {
			return acquisition;
		}
		// Every timed call gets at least a second for its backend calls (the engine's deadline guard), a
		// short wait as much as none; what the acquisition (and opening the connection) took is off it.
		Duration bound = (queueFor.compareTo(SHORTEST_ACK_BOUND) < 0 ? SHORTEST_ACK_BOUND : queueFor)
			.minusNanos(System.nanoTime() - started);
		if (lease.dividedBy(2).compareTo(bound) < 0) {
			bound = lease.dividedBy(2);
		}
		if (bound.toMillis() < 1) {
			bound = Duration.ofMillis(1);
		}
		try {
			this.replicaAcks.acknowledge(sent, name, bound);
			return acquisition;
		}
		catch (RuntimeException ex) {
			giveBackUnacknowledged(name, owner, attempt, ex);
			throw ex;
		}
	}

	/**
	 * Gives back what an unacknowledged acquisition took, as a waiter leaving the queue does: release.lua
	 * frees it or hands it to the next queued waiter, only if it is still this attempt's. On the own
	 * connection, behind the acquisition; where that connection is gone (the registry closing), on the
	 * shared one, since nothing more runs on the closed one.
	 */
	private void giveBackUnacknowledged(String name, String owner, String attempt, RuntimeException failure) {
		byte[] ownerBytes = this.arguments.owner(owner);
		byte[][] keys = this.encodedKeys.releaseKeys(name, ownerBytes);
		byte[][] args = releaseArguments(name, ownerBytes, 0, LEAVE, attempt, false, MARKER_MILLIS);
		try {
			this.replicaAcks.giveBack(LockScripts.RELEASE, keys, GIVE_BACK_WAIT, args);
			return;
		}
		catch (RuntimeException ownConnectionFailed) {
			failure.addSuppressed(ownConnectionFailed);
		}
		try {
			eval(LockScripts.RELEASE, ScriptOutputType.INTEGER, keys, GIVE_BACK_WAIT, args);
		}
		catch (RuntimeException sharedConnectionFailed) {
			// It expires within its lease.
			failure.addSuppressed(sharedConnectionFailed);
		}
	}

	private byte[] heldHere() {
		return this.heldHere ? HELD_HERE : NOT_HELD_HERE;
	}

	private Acquisition heardOf(Acquisition acquisition) {
		if (!this.heldHere && acquisition.status() == Acquisition.Status.ACQUIRED) {
			this.heldHere = true;
		}
		return acquisition;
	}

	/**
	 * {@link #acquire} without queueing and without blocking the calling thread; needs
	 * {@link #prepareAsync()}.
	 * @return the outcome, when Redis answers
	 */
	CompletableFuture<Acquisition> acquireAsync(String name, String owner, int heldCount, Duration lease,
			String attemptId) {
		String attempt = (attemptId != null) ? attemptId : "";
		return this.direct.<List<?>>callAsync(LockScripts.ACQUIRE, ScriptOutputType.MULTI,
				this.encodedKeys.acquireKeys(name), this.arguments.owner(owner), this.arguments.lease(lease),
				ScriptArguments.number(heldCount), this.arguments.attempt(attempt), ScriptArguments.number(0), this.restartGrace,
				heldHere())
			.thenApply(reply -> heardOf(RedisReplies.acquisition(reply, name, lease, attempt)));
	}

	/**
	 * @param attemptId the hold's id, or {@code null}/empty for whatever hold the owner has
	 * @param within how long to wait on the shared connection, or {@code null} for its command timeout
	 * @param wakeUnqueued whether to announce the release when nobody is queued (see {@link #releaseArguments})
	 * @param leaseLeftMillis how long Redis is known to keep the hold, 0 if not known (see {@link #marker})
	 */
	Release release(String name, String owner, int heldCount, String attemptId, Duration within,
			boolean wakeUnqueued, long leaseLeftMillis) {
		byte[] ownerBytes = this.arguments.owner(owner);
		Long reply = eval(LockScripts.RELEASE, ScriptOutputType.INTEGER, this.encodedKeys.releaseKeys(name, ownerBytes),
				within, releaseArguments(name, ownerBytes, heldCount, RELEASE, attemptId, wakeUnqueued,
						marker(leaseLeftMillis)));
		return RedisReplies.release(reply, name);
	}

	/**
	 * {@link #release} without blocking the calling thread, announced even with nobody queued (Redlock's
	 * waiters do not queue); needs {@link #prepareAsync()}.
	 * @return the outcome, when Redis answers
	 */
	CompletableFuture<Release> releaseAsync(String name, String owner, int heldCount, String attemptId) {
		byte[] ownerBytes = this.arguments.owner(owner);
		return this.direct.<Long>callAsync(LockScripts.RELEASE, ScriptOutputType.INTEGER,
				this.encodedKeys.releaseKeys(name, ownerBytes),
				releaseArguments(name, ownerBytes, heldCount, RELEASE, attemptId, true, MARKER_MILLIS))
			.thenApply(reply -> RedisReplies.release(reply, name));
	}

	/**
	 * How long the marker of a release lives (release.lua's ARGV[9]). It is the released hold itself,
	 * renamed, and keeps the hold's expiry where that is known to be neither too short for a re-sent
	 * release to find it nor longer than it is needed (the watchdog's default lease of 30 s, renewed
	 * every 10 s, leaves 20 to 30 s); otherwise it is given {@link #MARKER_MIN_MILLIS}, one command more.
	 * @param leaseLeftMillis how long Redis is known to keep the hold, 0 if not known
	 */
	private static byte[] marker(long leaseLeftMillis) {
		return (leaseLeftMillis >= MARKER_MIN_MILLIS && leaseLeftMillis <= MARKER_MAX_MILLIS) ? MARKER_KEEPS_LEASE
				: MARKER_MILLIS;
	}

	/**
	 * The ARGV of {@code release.lua}, in its order.
	 * @param wakeUnqueued whether to announce a release that nobody queued for: Redlock's waiters do
	 * not queue, and wait for that message; the engine's on a single deployment always queue
	 * @param marker how long the release marker lives (see {@link #marker})
	 */
	private byte[][] releaseArguments(String name, byte[] owner, int heldCount, byte[] mode, String attemptId,
			boolean wakeUnqueued, byte[] marker) {
		byte[] wake = wakeUnqueued ? WAKE_UNQUEUED : QUEUED_ONLY;
		if (shardedPubSub()) {
			return new byte[][] { owner, ScriptArguments.number(heldCount), mode, this.arguments.attempt(attemptId),
					QUEUE_PLACE_MILLIS, this.grantChannelPrefix, this.restartGrace, wake, marker,
					this.encodedKeys.shardChannel(name) };
		}
		// Without ARGV[10]: the very arguments (and so the very messages) of a version without sharded pub/sub.
		return new byte[][] { owner, ScriptArguments.number(heldCount), mode, this.arguments.attempt(attemptId),
				QUEUE_PLACE_MILLIS, this.grantChannelPrefix, this.restartGrace, wake, marker };
	}

	/** How long a waiter stays queued, as bytes: mostly a whole queue place, which is encoded once. */
	private static byte[] queueTime(long millis) {
		return (millis == LockBackend.QUEUE_PLACE.toMillis()) ? QUEUE_PLACE_MILLIS : ScriptArguments.number(millis);
	}

	/** Issues the token with {@code token.lua}, on the hold's first request for it. */
	long issueToken(String name, String owner, String attemptId) {
		Long reply = eval(LockScripts.TOKEN, ScriptOutputType.INTEGER, this.encodedKeys.tokenKeys(name), null,
				this.arguments.owner(owner), ScriptArguments.text((attemptId != null) ? attemptId : ""), this.restartGrace);
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
	void leaveQueue(String name, String owner, String ticket, boolean passOnHandOff) {
		byte[] ownerBytes = this.arguments.owner(owner);
		byte[][] keys = this.encodedKeys.releaseKeys(name, ownerBytes);
		byte[][] args = releaseArguments(name, ownerBytes, 0, passOnHandOff ? LEAVE : DEQUEUE, ticket, false, MARKER_MILLIS);
		if (this.replicaAcks != null) {
			try {
				// Behind the attempt's own acquisition, which may still wait behind another one's WAIT.
				this.replicaAcks.leave(LockScripts.RELEASE, keys, LEAVE_REPLY_WAIT, args);
				return;
			}
			catch (RuntimeException ownConnectionGone) {
				// The registry closing: nothing more runs on that connection, so the shared one will do.
			}
		}
		if (this.direct.ready()) {
			this.direct.callBriefly(LockScripts.RELEASE, ScriptOutputType.INTEGER, keys, LEAVE_REPLY_WAIT, args);
			return;
		}
		this.leaves.execute(() -> throughTemplate(LockScripts.RELEASE, keys, args));
	}

	/**
	 * Undoes one acquisition attempt if, and only if, the hold still belongs to that attempt.
	 * @param attemptId the id given to the attempt's acquire
	 * @return whether a hold was deleted
	 */
	boolean abandon(String name, String owner, String attemptId) {
		Object reply = throughTemplate(LockScripts.ABANDON, abandonKeys(name), abandonArguments(owner, attemptId, name));
		return reply instanceof Long deleted && deleted == 1;
	}

	/**
	 * {@link #abandon} without blocking the calling thread; needs {@link #prepareAsync()}.
	 * @return whether a hold was deleted, when Redis answers
	 */
	CompletableFuture<Boolean> abandonAsync(String name, String owner, String attemptId) {
		return this.direct.<Long>callAsync(LockScripts.ABANDON, ScriptOutputType.INTEGER, abandonKeys(name),
				abandonArguments(owner, attemptId, name))
			.thenApply(reply -> reply != null && reply == 1);
	}

	private byte[][] abandonKeys(String name) {
		return new byte[][] { this.encodedKeys.lockKey(name) };
	}

	private byte[][] abandonArguments(String owner, String attemptId, String name) {
		return new byte[][] { this.arguments.owner(owner), ScriptArguments.text((attemptId != null) ? attemptId : ""),
				ScriptArguments.text(this.keys.releaseChannel(name)) };
	}

	/**
	 * Renews the holds, of any kinds, with one {@code renew.lua}: on a Cluster, only holds of one slot.
	 * @param within how long to wait on the shared connection; {@code null}: through the template
	 */
	List<Boolean> renewInOneScript(List<HoldRef> holds, Duration lease, Duration within) {
		byte[][] holdKeys = new byte[holds.size()][];
		byte[][] args = new byte[2 * holds.size() + 2][];
		byte[] kinds = new byte[holds.size()];
		args[0] = this.arguments.lease(lease);
		args[1] = kinds;
		for (int i = 0; i < holds.size(); i++) {
			HoldRef hold = holds.get(i);
			HoldKind kind = (hold.kind() != null) ? hold.kind() : HoldKind.EXCLUSIVE;
			kinds[i] = (byte) letter(kind);
			holdKeys[i] = (kind == HoldKind.EXCLUSIVE) ? this.encodedKeys.lockKey(hold.name())
					: ScriptArguments.text(this.keys.shared(kind.family(), hold.name()).state());
			args[2 * i + 2] = this.arguments.owner(hold.owner());
			args[2 * i + 3] = this.arguments.attempt(hold.attemptId());
		}
		List<?> reply = (within != null) ? eval(LockScripts.RENEW, ScriptOutputType.MULTI, holdKeys, within, args)
				: (List<?>) throughTemplate(LockScripts.RENEW, holdKeys, args);
		List<Boolean> renewed = new ArrayList<>(holds.size());
		for (int i = 0; i < holds.size(); i++) {
			renewed.add(RedisReplies.number(reply, i, holds.get(i).name()) == 1);
		}
		return renewed;
	}

	/**
	 * @return the cluster slot of the hold's key: the lock hash's, or the state hash's of a read-write
	 * lock or semaphore
	 */
	int slot(HoldRef hold) {
		HoldKind kind = (hold.kind() != null) ? hold.kind() : HoldKind.EXCLUSIVE;
		return (kind == HoldKind.EXCLUSIVE) ? this.keys.slot(hold.name()) : this.keys.shared(kind.family(), hold.name()).slot();
	}

	/** @return how the scripts name a kind: {@code x}, {@code r}, {@code w} or {@code p} */
	static char letter(HoldKind kind) {
		return switch (kind) {
			case EXCLUSIVE -> 'x';
			case READ -> 'r';
			case WRITE -> 'w';
			case PERMIT -> 'p';
		};
	}

	/**
	 * Acquires or re-enters a read hold, a write hold or a permit with {@code acquire-shared.lua}, queueing
	 * the owner for {@code queueFor} if it cannot enter yet.
	 * @param ticket the engine's id of the attempt, which becomes the hold's id; or {@code null}
	 * @param permits the semaphore's permits as the caller declares them (a {@link HoldKind#PERMIT}), else 0
	 */
	Acquisition acquireShared(String name, HoldKind kind, String owner, int heldCount, Duration lease,
			Duration queueFor, String ticket, int permits) {
		String attempt = (ticket != null) ? ticket : "";
		RedisKeys.SharedKeys shared = this.keys.shared(kind.family(), name);
		byte[][] args = { this.arguments.owner(owner), this.arguments.lease(lease), ScriptArguments.number(heldCount),
				this.arguments.attempt(attempt), queueTime(queueFor.toMillis()), kindArgument(kind),
				ScriptArguments.number(permits), QUEUE_PLACE_MILLIS, this.grantChannelPrefix, this.restartGrace, heldHere() };
		if (shardedPubSub()) {
			args = withShardChannel(args, shared);
		}
		List<?> reply = eval(LockScripts.ACQUIRE_SHARED, ScriptOutputType.MULTI, ScriptArguments.text(shared.acquireKeys()),
				null, args);
		return heardOf(RedisReplies.sharedAcquisition(reply, name, lease, attempt));
	}

	/**
	 * Releases one hold of a read-write lock or semaphore with {@code release-shared.lua}, answering as
	 * {@link #release} does.
	 * @param attemptId the hold's id, or {@code null}/empty for whatever hold of this kind the owner has
	 * @param within how long to wait on the shared connection, or {@code null} for its command timeout
	 */
	Release releaseShared(String name, HoldKind kind, String owner, int heldCount, String attemptId, Duration within) {
		Long reply = eval(LockScripts.RELEASE_SHARED, ScriptOutputType.INTEGER, sharedReleaseKeys(name, kind, owner),
				within, sharedReleaseArguments(name, owner, heldCount, RELEASE, attemptId, kind));
		return RedisReplies.release(reply, name);
	}

	/** {@link #leaveQueue} for a read-write lock or semaphore: briefly, as there. */
	void leaveSharedQueue(String name, HoldKind kind, String owner, String ticket, boolean passOnHandOff) {
		byte[][] keys = sharedReleaseKeys(name, kind, owner);
		byte[][] args = sharedReleaseArguments(name, owner, 0, passOnHandOff ? LEAVE : DEQUEUE, ticket, kind);
		if (this.direct.ready()) {
			this.direct.callBriefly(LockScripts.RELEASE_SHARED, ScriptOutputType.INTEGER, keys, LEAVE_REPLY_WAIT, args);
			return;
		}
		this.leaves.execute(() -> throughTemplate(LockScripts.RELEASE_SHARED, keys, args));
	}

	private byte[][] sharedReleaseKeys(String name, HoldKind kind, String owner) {
		return ScriptArguments.text(this.keys.shared(kind.family(), name).releaseKeys(owner));
	}

	/** The ARGV of {@code release-shared.lua}, in its order. */
	private byte[][] sharedReleaseArguments(String name, String owner, int heldCount, byte[] mode, String attemptId,
			HoldKind kind) {
		byte[][] args = { this.arguments.owner(owner), ScriptArguments.number(heldCount), mode,
				this.arguments.attempt(attemptId), QUEUE_PLACE_MILLIS, this.grantChannelPrefix, this.restartGrace,
				kindArgument(kind), heldHere() };
		return shardedPubSub() ? withShardChannel(args, this.keys.shared(kind.family(), name)) : args;
	}

	/** @return the arguments and, last, the family's shard channel (see {@code announce.lua}) */
	private static byte[][] withShardChannel(byte[][] args, RedisKeys.SharedKeys shared) {
		byte[][] sharded = Arrays.copyOf(args, args.length + 1);
		sharded[args.length] = ScriptArguments.text(shared.shardChannel());
		return sharded;
	}

	/** Issues the token of a read, write or permit hold with {@code token-shared.lua}, on its first request. */
	long issueSharedToken(String name, HoldKind kind, String owner, String attemptId) {
		Long reply = eval(LockScripts.TOKEN_SHARED, ScriptOutputType.INTEGER,
				ScriptArguments.text(this.keys.shared(kind.family(), name).tokenKeys()), null, this.arguments.owner(owner),
				ScriptArguments.text((attemptId != null) ? attemptId : ""), this.restartGrace, kindArgument(kind));
		if (reply == null) {
			throw new IllegalStateException("Redis returned no reply to the fencing token request of " + kind.describe(name));
		}
		return (reply < 0) ? Acquisition.NO_TOKEN : reply;
	}

	/** @return whether the owner has a live hold of this kind (its own deadline not passed) */
	boolean isHeldShared(String name, HoldKind kind, String owner) {
		return querySharedState(name, kind.family(), "held", owner, String.valueOf(letter(kind))) >= 0;
	}

	/** @return the longest lease left among the live holds of this kind, zero if none */
	Duration remainingSharedLease(String name, HoldKind kind) {
		return Duration.ofMillis(Math.max(0, querySharedState(name, kind.family(), "lease", String.valueOf(letter(kind)))));
	}

	/**
	 * @param permits the permits the caller declares, counted against when the semaphore has no state
	 * @return the permits no live holder has
	 */
	int availablePermits(String name, int permits) {
		return (int) querySharedState(name, HoldKind.Family.SEMAPHORE, "available", Integer.toString(permits));
	}

	private long querySharedState(String name, HoldKind.Family family, String... question) {
		Long reply = eval(LockScripts.QUERY_SHARED, ScriptOutputType.INTEGER,
				new byte[][] { ScriptArguments.text(this.keys.shared(family, name).state()) }, null,
				ScriptArguments.text(List.of(question)));
		if (reply == null) {
			throw new IllegalStateException("Redis returned no reply to a question about " + family.displayName(name));
		}
		return reply;
	}

	private static byte[] kindArgument(HoldKind kind) {
		return ScriptArguments.text(String.valueOf(letter(kind)));
	}

	boolean isHeldBy(String name, String owner) {
		return this.redis.opsForHash().hasKey(this.keys.lock(name), owner);
	}

	Duration remainingLease(String name) {
		Long millis = this.redis.getExpire(this.keys.lock(name), TimeUnit.MILLISECONDS);
		if (millis == null || millis == -2) {
			return Duration.ZERO;
		}
		// -1: a key without expiry, which our scripts never create; someone else wrote it.
		return (millis == -1) ? Duration.ofMillis(Long.MAX_VALUE) : Duration.ofMillis(millis);
	}

	/** Queued leaves still go out; the thread ends when they are done. */
	void close() {
		this.leaves.shutdown();
		if (this.replicaAcks != null) {
			this.replicaAcks.close();
		}
	}

	static ThreadFactory daemon(String name) {
		return runnable -> {
			Thread thread = new Thread(runnable, name);
			thread.setDaemon(true);
			return thread;
		};
	}

}
