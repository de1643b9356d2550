package io.distlock.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;


import io.distlock.LockBackendException;
import io.distlock.LockSettings;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend;
import io.distlock.core.LockNotice;
import io.distlock.core.ReleaseRequest;
import io.distlock.redis.RedisFailures;
import io.distlock.redis.RedisNode;
import io.distlock.redlock.RedlockFanOut.Reply;

/**
 * One lock over N independent Redis masters (Redlock). Each node keeps the lock exactly as a single
 * Redis does (same scripts, same re-send safety); this class sends every operation to all nodes in
 * parallel, waits at most the node timeout, and decides by majority.
 *
 * <p>Acquired means: a quorum (N/2 + 1) of nodes granted it and the validity left
 * ({@code lease - elapsed - drift}) is positive. Otherwise the attempt is undone on every node,
 * including those that did not answer (their connection delivers the release after the late
 * acquisition), and the caller backs off for a random moment.
 *
 * <p>Acquire, release and undo are sent from the calling thread through each node's shared Lettuce
 * connection without blocking (where the node's factory shares its connection, as the
 * auto-configuration's do): no thread hop per node, and one owner's commands reach every node in
 * the order they were made, so a release answered late cannot overtake the owner's next acquisition.
 * Reaching the nodes (the fan-out, nodes skipped after a failure, two entries for one server, the
 * connections at start) is {@link RedlockFanOut}'s; the majority rules are here.
 */
public final class RedlockBackend implements LockBackend {

	private final RedlockFanOut nodes;

	private final RedlockSettings settings;

	private final int quorum;

	/** Numbers this client's acquisition attempts; with the owner id they are unique. */
	private final AtomicLong attempts = new AtomicLong();

	/** The least time subscribing to a lock's releases on all nodes may take. */
	private static final Duration SUBSCRIBE_TIMEOUT = Duration.ofSeconds(1);

	/**
	 * @param nodes one node per independent master; at least 3
	 * @param settings the algorithm's tuning
	 */
	public RedlockBackend(List<RedisNode> nodes, RedlockSettings settings) {
		LockSettings.redlockMasters(nodes.size());
		this.settings = settings;
		this.quorum = RedlockMath.quorum(nodes.size());
		this.nodes = new RedlockFanOut(nodes, this.quorum, settings.nodeTimeout());
		try {
			this.nodes.warmUp();
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
	}

	/** Each master counts on its own and forgets on restart: no token is sound across them. */
	@Override
	public boolean issuesFencingTokens() {
		return false;
	}

	@Override
	public String description() {
		return "Redlock over " + this.nodes.all().stream().map(RedisNode::description).toList();
	}

	@Override
	public String explain(RuntimeException failure) {
		return (failure instanceof LockBackendException) ? failure.getMessage()
				: RedisFailures.explain(failure, "a Redlock node");
	}

	/** Acquires on a majority of the nodes; nothing is queued. */
	@Override
	public Acquisition acquire(AcquireRequest request) {
		String name = request.name();
		String owner = request.owner();
		int heldCount = request.heldCount();
		Duration lease = request.lease();
		long start = System.nanoTime();
		String attempt = (heldCount == 0) ? Long.toString(this.attempts.incrementAndGet(), 36) : null;
		int mustFailToLose = this.nodes.all().size() - this.quorum + 1;
		List<Reply<Acquisition>> replies = this.nodes.decide(node -> node.acquireAsync(name, owner, heldCount, lease, attempt),
				node -> node.acquire(name, owner, heldCount, lease, attempt),
				received -> received.stream().filter(reply -> reply.is(Acquisition.Status.ACQUIRED)).count() >= this.quorum
						|| received.stream().filter(reply -> !reply.is(Acquisition.Status.ACQUIRED)).count() >= mustFailToLose);
		Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
		long granted = replies.stream().filter(reply -> reply.is(Acquisition.Status.ACQUIRED)).count();
		Duration validity = RedlockMath.validity(lease, elapsed, this.settings.clockDriftFactor());
		if (granted >= this.quorum && !validity.isNegative() && !validity.isZero()) {
			return Acquisition.acquired(Acquisition.NO_TOKEN, validity, attempt);
		}
		long lost = replies.stream().filter(reply -> reply.is(Acquisition.Status.LOST)).count();
		if (heldCount > 0 && granted < this.quorum && lost > 0) {
			// A re-entry that no longer finds a majority: the hold is gone; the engine reports it.
			return Acquisition.lost();
		}
		if (attempt != null) {
			undo(name, owner, attempt);
		}
		long failed = replies.stream().filter(Reply::failed).count();
		if (failed > this.nodes.all().size() - this.quorum) {
			throw new LockBackendException(name, "Lock '" + name + "': " + failed + " of " + this.nodes.all().size()
					+ " Redlock nodes did not answer within " + this.settings.nodeTimeout().toMillis()
					+ " ms, so no quorum of " + this.quorum + " is possible: " + this.nodes.nodeFailures(replies),
					replies.stream().map(Reply::error).filter(error -> error != null).findFirst().orElse(null));
		}
		backOff();
		// The waiter sleeps until a release message, or at most this long; the longest lease another
		// holder reported is when the lock is free everywhere at the latest. None (a split, or the
		// validity ran out): retry soon.
		Duration otherHoldersTtl = replies.stream()
			.filter(reply -> reply.is(Acquisition.Status.HELD_BY_OTHER))
			.map(reply -> reply.value().ttl())
			.max(Comparator.naturalOrder())
			.orElse(Duration.ZERO);
		// Refused only by nodes serving their restart grace (none by another holder): the caller is told so.
		boolean onlyGrace = replies.stream()
			.filter(reply -> reply.is(Acquisition.Status.HELD_BY_OTHER))
			.allMatch(reply -> reply.value().restartGrace())
				&& replies.stream().anyMatch(reply -> reply.is(Acquisition.Status.HELD_BY_OTHER));
		return onlyGrace ? Acquisition.inRestartGrace(otherHoldersTtl, 0) : Acquisition.heldByOther(otherHoldersTtl);
	}

	/**
	 * Releases on every node, but only the hold taken by attempt {@code attemptId}: the release returns
	 * once a majority answered, and the rest may reach their nodes after the owner's next acquisition.
	 * Each node waits at most the node timeout, whatever {@code within} says.
	 */
	@Override
	public Release release(ReleaseRequest request) {
		String name = request.name();
		List<Reply<Release>> replies = this.nodes.decide(
				node -> node.releaseAsync(name, request.owner(), request.heldCount(), request.attemptId()),
				node -> node.release(name, request.owner(), request.heldCount(), request.attemptId()),
				received -> received.stream().filter(Reply::answered).count() >= this.quorum);
		if (replies.stream().noneMatch(Reply::answered)) {
			throw new LockBackendException(name, "Lock '" + name + "': no Redlock node answered the release: "
					+ this.nodes.nodeFailures(replies),
					replies.get(0).error());
		}
		if (replies.stream().anyMatch(reply -> reply.is(Release.DECREMENTED))) {
			return Release.DECREMENTED;
		}
		return replies.stream().anyMatch(reply -> reply.is(Release.RELEASED)) ? Release.RELEASED : Release.NOT_HELD;
	}

	/** As at acquisition: a node's clock may run fast by the drift allowance, and expire the hold that much sooner. */
	@Override
	public Duration renewalValidity(Duration lease) {
		return RedlockMath.validity(lease, Duration.ZERO, this.settings.clockDriftFactor());
	}

	/** Renews on every node, each waiting at most the node timeout, whatever {@code within} says. */
	@Override
	public List<Boolean> renew(List<HoldRef> holds, Duration lease, Duration within) {
		List<Reply<List<Boolean>>> replies = this.nodes.onAllNodes(node -> node.renew(holds, lease));
		long answered = replies.stream().filter(Reply::answered).count();
		if (answered < this.quorum) {
			throw new LockBackendException(holds.isEmpty() ? "" : holds.get(0).name(), "Only " + answered + " of "
					+ this.nodes.all().size() + " Redlock nodes answered the renewal; a quorum of " + this.quorum + " is needed: "
					+ this.nodes.nodeFailures(replies),
					null);
		}
		List<Boolean> renewed = new ArrayList<>(holds.size());
		for (int i = 0; i < holds.size(); i++) {
			int index = i;
			long yes = replies.stream().filter(reply -> reply.answered() && reply.value().get(index)).count();
			renewed.add(yes >= this.quorum);
		}
		return renewed;
	}

	@Override
	public boolean isHeldBy(String name, String owner) {
		int mustSayNo = this.nodes.all().size() - this.quorum + 1;
		return this.nodes.onAllNodes(node -> node.isHeldBy(name, owner),
				received -> received.stream().filter(reply -> reply.answered() && reply.value()).count() >= this.quorum
						|| received.stream().filter(reply -> !(reply.answered() && reply.value())).count() >= mustSayNo)
			.stream()
			.filter(reply -> reply.answered() && reply.value())
			.count() >= this.quorum;
	}

	@Override
	public Duration remainingLease(String name) {
		// The lease a majority still has: the quorum-th longest.
		return this.nodes.onAllNodes(node -> node.remainingLease(name)).stream()
			.filter(Reply::answered)
			.map(Reply::value)
			.sorted(Comparator.reverseOrder())
			.skip(this.quorum - 1L)
			.findFirst()
			.orElse(Duration.ZERO);
	}

	/** Subscribes on every node; nothing is queued, so {@code clientId} is not used. */
	@Override
	public AutoCloseable subscribe(String name, String clientId, Consumer<LockNotice> onNotice) {
		List<AutoCloseable> subscriptions = new ArrayList<>();
		RuntimeException last = null;
		// Connection set-up, not a lock decision: a longer timeout, and no node is marked down for it.
		Duration timeout = this.settings.nodeTimeout().compareTo(SUBSCRIBE_TIMEOUT) > 0 ? this.settings.nodeTimeout()
				: SUBSCRIBE_TIMEOUT;
		for (Reply<AutoCloseable> reply : this.nodes.onAllNodes(node -> node.subscribe(name, onNotice), received -> false,
				timeout, false)) {
			if (reply.answered()) {
				subscriptions.add(reply.value());
			}
			else {
				last = (reply.error() instanceof RuntimeException runtime) ? runtime
						: new IllegalStateException(String.valueOf(reply.error()), reply.error());
			}
		}
		if (subscriptions.isEmpty() && last != null) {
			throw last;
		}
		return () -> {
			for (AutoCloseable subscription : subscriptions) {
				subscription.close();
			}
		};
	}

	@Override
	public Health health() {
		List<Reply<Health>> replies = this.nodes.onAllNodes(RedisNode::health);
		Map<String, Object> nodeStates = new LinkedHashMap<>();
		int reachable = 0;
		for (int i = 0; i < replies.size(); i++) {
			Reply<Health> reply = replies.get(i);
			boolean up = reply.answered() && reply.value().up();
			reachable += (up && this.nodes.whyNotCounted(i) == null) ? 1 : 0;
			nodeStates.put(this.nodes.all().get(i).description(), this.nodes.healthState(i, up));
		}
		return new Health(reachable >= this.quorum,
				Map.of("nodes", nodeStates, "reachable", reachable, "quorum", this.quorum));
	}

	/**
	 * Every answering node's warnings: one node that evicts a hold leaves its quorum a node short,
	 * and a second such node lets another holder in. A node that does not answer is the health's
	 * business, not a warning.
	 */
	@Override
	public List<String> serverWarnings() {
		return this.nodes.onAllNodes(RedisNode::serverWarnings).stream()
			.filter(Reply::answered)
			.flatMap(reply -> reply.value().stream())
			.toList();
	}

	@Override
	public void close() {
		this.nodes.close();
		this.nodes.all().forEach(RedisNode::close);
	}

	private void undo(String name, String owner, String attempt) {
		// Everywhere, also where the attempt timed out. Only this attempt's hold is deleted, so the
		// undo may arrive after the owner's next attempt without breaking that attempt's quorum.
		this.nodes.everywhere(node -> node.abandonAsync(name, owner, attempt), node -> node.abandon(name, owner, attempt),
				"undo a failed Redlock attempt on lock '" + name + "'");
	}

	private void backOff() {
		long jitter = this.settings.retryJitter().toNanos();
		long pause = this.settings.retryDelay().toNanos() + ((jitter > 0) ? ThreadLocalRandom.current().nextLong(jitter) : 0);
		if (pause > 0) {
			try {
				TimeUnit.NANOSECONDS.sleep(pause);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

}
