package io.distlock.redis;

import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.HoldKind;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend;
import io.distlock.core.LockNotice;
import io.distlock.core.ReleaseRequest;

/**
 * Keeps locks in one Redis deployment (a single server, a Sentinel-managed master, or a Cluster)
 * through Spring Data Redis: one hash per lock, every state change one Lua script. The lock logic
 * is in the scripts; {@link RedisLockCalls} sends them, {@link RedisRenewals} renews,
 * {@link RedisReleaseSubscriber} listens for releases and {@link RedisDiagnostics} explains failures.
 *
 * <p>Read-write locks and semaphores (one state hash per lock with a field per holder, see
 * {@code shared-common.lua}) are kept on every topology without replica acknowledgement; see
 * {@link #supportedKinds()}. On a Cluster all keys of one of them share its state hash's slot (see
 * {@link RedisKeys#shared}), and so do its channels, like a lock's.
 *
 * <p>On a Redis Cluster whose masters all run Redis 7.0 or later (or Valkey), releases and hand-offs
 * go out by sharded pub/sub: SPUBLISH on channels in the lock's slot, heard on the shard that owns
 * the slot only ({@link ShardedReleaseSubscriber}, which opens one connection per shard it listens
 * on). Elsewhere, and on older Clusters, by classic pub/sub ({@link RedisReleaseSubscriber}, one
 * connection).
 */
public final class RedisLockBackend implements LockBackend {

	private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

	private final RedisLockCalls calls;

	private final RedisRenewals renewals;

	private final RedisReleaseSubscriber subscriber;

	/** Where releases go out by sharded pub/sub (a Redis 7+ Cluster); {@code null} where they never do. */
	private final ShardedReleaseSubscriber shardedSubscriber;

	private final RedisDiagnostics diagnostics;

	private final Set<HoldKind> kinds;

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
		this(connectionFactory, keyPrefix, restartGrace, RedisReplicaAcks.NONE);
	}

	/**
	 * @param connectionFactory the application's Redis connection factory; not closed by this backend
	 * @param keyPrefix the namespace of all keys and channels, e.g. {@code distlock}
	 * @param restartGrace see {@link #RedisLockBackend(RedisConnectionFactory, String, Duration)}
	 * @param replicaAcks how many replicas must have a hold before its holder goes on
	 * @throws IllegalStateException if acknowledgements are asked for where they cannot be given (a
	 * Cluster, a factory that is not Lettuce's)
	 */
	public RedisLockBackend(RedisConnectionFactory connectionFactory, String keyPrefix, Duration restartGrace,
			RedisReplicaAcks replicaAcks) {
		this.calls = new RedisLockCalls(connectionFactory, keyPrefix, restartGrace, replicaAcks);
		if (this.calls.keys().cluster() && !restartGrace.isZero()) {
			// One fencing counter per slot: every slot's first lock would look like lost data.
			log.info("distlock: no restart grace on Redis Cluster (a slot's first lock cannot be told from lost "
					+ "data); run the cluster with persistence");
		}
		this.subscriber = new RedisReleaseSubscriber(connectionFactory, this.calls.keys().anchorChannel());
		this.shardedSubscriber = (this.calls.keys().cluster() && connectionFactory instanceof LettuceConnectionFactory lettuce)
				? new ShardedReleaseSubscriber(lettuce) : null;
		this.diagnostics = new RedisDiagnostics(this.calls.template(), this.calls.description());
		this.renewals = new RedisRenewals(this.calls);
		this.kinds = Collections.unmodifiableSet(this.calls.acknowledgedByReplicas() ? EnumSet.of(HoldKind.EXCLUSIVE)
				: EnumSet.allOf(HoldKind.class));
	}

	/** @return the scripts' calls, which {@link RedisNode} makes for Redlock */
	RedisLockCalls calls() {
		return this.calls;
	}

	/** @return what {@link RedisNode} asks of this deployment besides locks (which server it is) */
	RedisDiagnostics diagnostics() {
		return this.diagnostics;
	}

	/** @return where this backend keeps its locks, e.g. {@code 10.0.0.1:6379}, for diagnostics */
	@Override
	public String description() {
		return this.diagnostics.description();
	}

	@Override
	public String explain(RuntimeException failure) {
		return this.diagnostics.explain(failure);
	}

	@Override
	public Health health() {
		return this.diagnostics.health();
	}

	/** Names an eviction policy that may evict lock keys (see {@link RedisDiagnostics#serverWarnings()}). */
	@Override
	public List<String> serverWarnings() {
		return this.diagnostics.serverWarnings();
	}

	/** Queues waiters: a release hands the lock to the first live one (see {@code release.lua}). */
	@Override
	public boolean queuesWaiters() {
		return true;
	}

	/**
	 * Every kind on a single server, a Sentinel-managed master or a Redis Cluster; exclusive locks
	 * only where replica acknowledgement is configured ({@link RedisReplicaAcks} with
	 * {@code replica-acks > 0}: the shared scripts do not wait for replicas yet; it is refused on a
	 * Cluster anyway).
	 */
	@Override
	public Set<HoldKind> supportedKinds() {
		return this.kinds;
	}

	/** Every supported kind queues: a release or a leave grants the queue's head, and those after it that may enter too. */
	@Override
	public boolean queuesWaiters(HoldKind kind) {
		return this.kinds.contains(kind);
	}

	/** Where replicas must acknowledge a hold, also a hold handed over: its new holder waits for them. */
	@Override
	public boolean confirmsHandOffs() {
		return this.calls.acknowledgedByReplicas();
	}

	/**
	 * Acquires, and if the lock is taken queues the owner for {@code queueFor}: a release then hands
	 * the lock to the first live queued owner instead of freeing it, and publishes
	 * {@code grant <token> <owner> <ticket> <lock channel>}. A read, write or permit hold goes to
	 * {@code acquire-shared.lua}, which also answers {@link Acquisition.Status#PERMITS_DIFFER} (an
	 * upgrade never gets there: the engine refuses it).
	 */
	@Override
	public Acquisition acquire(AcquireRequest request) {
		HoldKind kind = kindOf(request.kind());
		if (kind == HoldKind.EXCLUSIVE) {
			return this.calls.acquire(request.name(), request.owner(), request.heldCount(), request.lease(), "",
					request.queueFor(), request.ticket());
		}
		return this.calls.acquireShared(request.name(), kind, request.owner(), request.heldCount(), request.lease(),
				request.queueFor(), request.ticket(), request.permits());
	}

	/**
	 * Releases only the hold the given attempt took (the engine's ticket, or Redlock's attempt id), or
	 * with no {@code attemptId} whatever hold the owner has; a copy of this release re-sent after a
	 * reconnect, finding the hold gone, is answered {@link Release#RELEASED} rather than
	 * {@link Release#NOT_HELD} (see {@code release.lua}'s release marker, which {@code release-shared.lua}
	 * keeps too).
	 */
	@Override
	public Release release(ReleaseRequest request) {
		HoldKind kind = kindOf(request.kind());
		if (kind == HoldKind.EXCLUSIVE) {
			return this.calls.release(request.name(), request.owner(), request.heldCount(), request.attemptId(),
					request.within(), false, request.leaseLeftMillis());
		}
		return this.calls.releaseShared(request.name(), kind, request.owner(), request.heldCount(), request.attemptId(),
				request.within());
	}

	/** @return the kind, known to be supported ({@code null}: an exclusive lock) */
	private HoldKind kindOf(HoldKind kind) {
		if (kind == null || kind == HoldKind.EXCLUSIVE) {
			return HoldKind.EXCLUSIVE;
		}
		if (!this.kinds.contains(kind)) {
			throw new UnsupportedOperationException(description() + " keeps " + this.kinds + " holds only, not " + kind
					+ " (replica acknowledgement is configured)");
		}
		return kind;
	}

	/** Issues the token with {@code token.lua}, on the hold's first request for it. */
	@Override
	public long issueToken(String name, String owner, String attemptId) {
		return this.calls.issueToken(name, owner, attemptId);
	}

	/** Issues the token with {@code token.lua} or {@code token-shared.lua}, on the hold's first request for it. */
	@Override
	public long issueToken(String name, HoldKind kind, String owner, String attemptId) {
		HoldKind known = kindOf(kind);
		return (known == HoldKind.EXCLUSIVE) ? this.calls.issueToken(name, owner, attemptId)
				: this.calls.issueSharedToken(name, known, owner, attemptId);
	}

	/** Leaves without waiting long for Redis's answer (see {@link RedisLockCalls#leaveQueue}). */
	@Override
	public void leaveQueue(String name, String owner, String ticket, boolean passOnHandOff) {
		this.calls.leaveQueue(name, owner, ticket, passOnHandOff);
	}

	/**
	 * Leaves without waiting long for Redis's answer; a read-write lock's or semaphore's queue then
	 * grants those behind the leaver that may enter now (readers behind a writer that gave up).
	 */
	@Override
	public void leaveQueue(String name, HoldKind kind, String owner, String ticket, boolean passOnHandOff) {
		HoldKind known = kindOf(kind);
		if (known == HoldKind.EXCLUSIVE) {
			this.calls.leaveQueue(name, owner, ticket, passOnHandOff);
			return;
		}
		this.calls.leaveSharedQueue(name, known, owner, ticket, passOnHandOff);
	}

	/** Renews holds of any kinds, in one script, giving up after {@code within} (see {@link RedisRenewals}). */
	@Override
	public List<Boolean> renew(List<HoldRef> holds, Duration lease, Duration within) {
		return this.renewals.renew(holds, lease, within);
	}

	@Override
	public boolean isHeldBy(String name, String owner) {
		return this.calls.isHeldBy(name, owner);
	}

	/** A read, write or permit hold counts while its own lease lasts, whether or not a script has dropped it yet. */
	@Override
	public boolean isHeldBy(String name, HoldKind kind, String owner) {
		HoldKind known = kindOf(kind);
		return (known == HoldKind.EXCLUSIVE) ? this.calls.isHeldBy(name, owner)
				: this.calls.isHeldShared(name, known, owner);
	}

	@Override
	public Duration remainingLease(String name) {
		return this.calls.remainingLease(name);
	}

	/** For a read, write or permit hold: the longest lease left among the holds of that kind. */
	@Override
	public Duration remainingLease(String name, HoldKind kind) {
		HoldKind known = kindOf(kind);
		return (known == HoldKind.EXCLUSIVE) ? this.calls.remainingLease(name)
				: this.calls.remainingSharedLease(name, known);
	}

	/**
	 * The permits minus the live holders, counted against the semaphore's stored permits while it has
	 * state, else against {@code permits}.
	 */
	@Override
	public int availablePermits(String name, int permits) {
		kindOf(HoldKind.PERMIT);
		return this.calls.availablePermits(name, permits);
	}

	/**
	 * Subscribes to the lock's channel, and with a {@code clientId} to the client's own hand-off
	 * channel, on which release.lua announces a hand-off to one of the client's owners: with many
	 * clients waiting for one lock, each hand-off wakes only the client it is for.
	 */
	@Override
	public AutoCloseable subscribe(String name, String clientId, Consumer<LockNotice> onNotice) {
		if (sharded()) {
			String channel = this.calls.keys().shardChannel(name);
			return this.shardedSubscriber.subscribe(channel, handOffChannel(channel, clientId), onNotice);
		}
		return this.subscriber.subscribe(this.calls.keys().releaseChannel(name), grantChannel(clientId), onNotice);
	}

	/**
	 * {@link #subscribe(String, String, Consumer)} for a family: a read-write lock's or semaphore's
	 * channel is its state hash's, and its grants name that channel, so they reach these listeners.
	 */
	@Override
	public AutoCloseable subscribe(String name, HoldKind.Family family, String clientId, Consumer<LockNotice> onNotice) {
		if (family == null || family == HoldKind.Family.LOCK) {
			return subscribe(name, clientId, onNotice);
		}
		kindOf((family == HoldKind.Family.SEMAPHORE) ? HoldKind.PERMIT : HoldKind.READ);
		RedisKeys.SharedKeys keys = this.calls.keys().shared(family, name);
		if (sharded()) {
			return this.shardedSubscriber.subscribe(keys.shardChannel(), handOffChannel(keys.shardChannel(), clientId),
					onNotice);
		}
		return this.subscriber.subscribe(keys.channel(), grantChannel(clientId), onNotice);
	}

	/**
	 * @return whether the scripts announce by sharded pub/sub, so that waiters must listen that way
	 * @throws IllegalStateException while that is not known (the Cluster did not answer): a waiter
	 * that listened one way would not hear the messages once they go out the other, so it polls
	 */
	private boolean sharded() {
		if (this.shardedSubscriber == null) {
			return false;
		}
		boolean sharded = this.calls.shardedPubSub();
		if (!sharded && !this.calls.pubSubDecided()) {
			throw new IllegalStateException("Not known yet whether " + description()
					+ " takes sharded pub/sub: its masters did not tell their versions");
		}
		return sharded;
	}

	private String grantChannel(String clientId) {
		return (clientId != null) ? this.calls.keys().grantChannelPrefix() + clientId : null;
	}

	private static String handOffChannel(String shardChannel, String clientId) {
		return (clientId != null) ? RedisKeys.handOffShardChannel(shardChannel, clientId) : null;
	}

	@Override
	public void close() {
		try {
			this.subscriber.close();
			if (this.shardedSubscriber != null) {
				this.shardedSubscriber.close();
			}
		}
		finally {
			try {
				this.calls.close();
			}
			finally {
				this.renewals.close();
			}
		}
	}

}
