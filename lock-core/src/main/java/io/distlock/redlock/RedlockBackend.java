package io.distlock.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;

import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;

import io.distlock.LockBackendException;
import io.distlock.core.LockBackend;
import io.distlock.core.LockNotice;
import io.distlock.redis.RedisFailures;
import io.distlock.redis.RedisLockBackend;

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
 */
public final class RedlockBackend implements LockBackend {

	private static final Logger log = LoggerFactory.getLogger(RedlockBackend.class);

	private final List<RedisLockBackend> nodes;

	private final RedlockSettings settings;

	private final int quorum;

	private final ExecutorService calls;

	/** Per node: until when (System.nanoTime) it is skipped after failing to answer. */
	private final AtomicLongArray downUntil;

	/** How long a node that failed to answer is skipped before it is probed again. */
	private final Duration downPeriod;

	/** Which server each node reaches; a node that shares one with an earlier-listed node does not count. */
	private final RedlockNodeIdentities identities;

	/** Numbers this client's acquisition attempts; with the owner id they are unique. */
	private final AtomicLong attempts = new AtomicLong();

	/** The least time subscribing to a lock's releases on all nodes may take. */
	private static final Duration SUBSCRIBE_TIMEOUT = Duration.ofSeconds(1);

	/** How long connecting to the nodes may take at start, where the short node timeout is not meant. */
	private static final Duration WARM_UP_TIMEOUT = Duration.ofSeconds(10);

	/**
	 * @param nodes one single-node backend per independent master; at least 3
	 * @param settings the algorithm's tuning
	 */
	public RedlockBackend(List<RedisLockBackend> nodes, RedlockSettings settings) {
		if (nodes.size() < 3) {
			throw new IllegalArgumentException("Redlock needs at least 3 independent nodes, not " + nodes.size());
		}
		this.nodes = List.copyOf(nodes);
		this.settings = settings;
		this.quorum = RedlockMath.quorum(nodes.size());
		this.downUntil = new AtomicLongArray(nodes.size());
		long now = System.nanoTime();
		for (int i = 0; i < nodes.size(); i++) {
			this.downUntil.set(i, now);
		}
		Duration tenTimeouts = settings.nodeTimeout().multipliedBy(10);
		this.downPeriod = tenTimeouts.compareTo(Duration.ofSeconds(1)) > 0 ? tenTimeouts : Duration.ofSeconds(1);
		AtomicInteger count = new AtomicInteger();
		this.calls = Executors.newCachedThreadPool(runnable -> {
			Thread thread = new Thread(runnable, "distlock-redlock-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
		this.identities = new RedlockNodeIdentities(this.nodes, this.quorum, this.calls);
		try {
			warmUp();
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
	}

	/**
	 * Connects to every node, learns which server each one is, and loads the scripts' code paths once.
	 * Connections are otherwise opened by the first command, and on a cold JVM that takes far longer
	 * than the node timeout: a new client would fail its first acquisition for no reason. A node that
	 * rejects the credentials or the TLS handshake, or two entries that reach one server, stop the
	 * start: no retry can mend them. A node that is merely down is reported and counted out until it
	 * answers.
	 */
	private void warmUp() {
		List<CompletableFuture<String>> answers = this.nodes.stream().map(node -> CompletableFuture.supplyAsync(() -> {
			String serverId = node.serverId();
			// Runs a lock script once, so that the first real acquisition does not pay its loading.
			node.isHeldBy("distlock-warm-up", "-");
			if (!node.prepareAsync()) {
				log.debug("Redlock node {} has no shared Lettuce connection; its calls block a pool thread each",
						node.description());
			}
			// Also opens the node's release-subscription connection, which stays open afterwards.
			try (AutoCloseable subscription = node.subscribe("distlock-warm-up", message -> {
			})) {
				return serverId;
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}, this.calls)).toList();
		try {
			CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
				.get(WARM_UP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// Told node by node below.
		}
		List<String> down = new ArrayList<>();
		List<String> answered = new ArrayList<>();
		for (int i = 0; i < this.nodes.size(); i++) {
			CompletableFuture<String> identity = answers.get(i);
			if (identity.isDone() && !identity.isCompletedExceptionally()) {
				answered.add(identity.join());
				continue;
			}
			answered.add(null);
			Throwable error = identity.isDone() ? unwrap(identity.handle((id, failure) -> failure).join())
					: new TimeoutException("no answer within " + WARM_UP_TIMEOUT.toSeconds() + " s");
			String explained = explainNode(i, error);
			if (RedisFailures.causeOf(error).isMisconfiguration()) {
				throw new RedlockNodesException("Redlock node " + (i + 1) + " of " + this.nodes.size() + ": " + explained
						+ ". Fix that entry of distlock.redlock.nodes.", error);
			}
			down.add(explained);
		}
		this.identities.atStart(answered);
		if (!down.isEmpty()) {
			log.warn("{} of {} Redlock nodes did not answer at start; locks need {} of them: {}", down.size(),
					this.nodes.size(), this.quorum, String.join("; ", down));
		}
	}

	private String explainNode(int index, Throwable error) {
		return RedisFailures.explain(error, this.nodes.get(index).description());
	}

	/** Each master counts on its own and forgets on restart: no token is sound across them. */
	@Override
	public boolean issuesFencingTokens() {
		return false;
	}

	@Override
	public String description() {
		return "Redlock over " + this.nodes.stream().map(RedisLockBackend::description).toList();
	}

	@Override
	public String explain(RuntimeException failure) {
		return (failure instanceof LockBackendException) ? failure.getMessage()
				: RedisFailures.explain(failure, "a Redlock node");
	}

	/** @return how many nodes must agree */
	public int quorum() {
		return this.quorum;
	}

	@Override
	public Acquisition acquire(String name, String owner, int heldCount, Duration lease) {
		long start = System.nanoTime();
		String attempt = (heldCount == 0) ? Long.toString(this.attempts.incrementAndGet(), 36) : null;
		int mustFailToLose = this.nodes.size() - this.quorum + 1;
		List<Reply<Acquisition>> replies = onAllNodesAsync(node -> node.asyncReady()
				? node.acquireAsync(name, owner, heldCount, lease, attempt)
				: CompletableFuture.supplyAsync(() -> node.acquire(name, owner, heldCount, lease, attempt), this.calls),
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
		if (failed > this.nodes.size() - this.quorum) {
			throw new LockBackendException(name, "Lock '" + name + "': " + failed + " of " + this.nodes.size()
					+ " Redlock nodes did not answer within " + this.settings.nodeTimeout().toMillis()
					+ " ms, so no quorum of " + this.quorum + " is possible: " + nodeFailures(replies),
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
		return Acquisition.heldByOther(otherHoldersTtl);
	}

	@Override
	public Release release(String name, String owner, int heldCount) {
		return release(name, owner, heldCount, null);
	}

	/**
	 * Releases on every node, but only the hold taken by attempt {@code holdId}: the release returns
	 * once a majority answered, and the rest may reach their nodes after the owner's next acquisition.
	 */
	@Override
	public Release release(String name, String owner, int heldCount, String holdId) {
		List<Reply<Release>> replies = onAllNodesAsync(node -> node.asyncReady()
				? node.releaseAsync(name, owner, heldCount, holdId)
				: CompletableFuture.supplyAsync(() -> node.release(name, owner, heldCount, holdId), this.calls),
				received -> received.stream().filter(Reply::answered).count() >= this.quorum);
		if (replies.stream().noneMatch(Reply::answered)) {
			throw new LockBackendException(name, "Lock '" + name + "': no Redlock node answered the release: "
					+ nodeFailures(replies),
					replies.get(0).error());
		}
		if (replies.stream().anyMatch(reply -> reply.is(Release.DECREMENTED))) {
			return Release.DECREMENTED;
		}
		return replies.stream().anyMatch(reply -> reply.is(Release.RELEASED)) ? Release.RELEASED : Release.NOT_HELD;
	}

	@Override
	public List<Boolean> renew(List<HoldRef> holds, Duration lease) {
		List<Reply<List<Boolean>>> replies = onAllNodes(node -> node.renew(holds, lease));
		long answered = replies.stream().filter(Reply::answered).count();
		if (answered < this.quorum) {
			throw new LockBackendException(holds.isEmpty() ? "" : holds.get(0).name(), "Only " + answered + " of "
					+ this.nodes.size() + " Redlock nodes answered the renewal; a quorum of " + this.quorum + " is needed: "
					+ nodeFailures(replies),
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
		int mustSayNo = this.nodes.size() - this.quorum + 1;
		return onAllNodes(node -> node.isHeldBy(name, owner),
				received -> received.stream().filter(reply -> reply.answered() && reply.value()).count() >= this.quorum
						|| received.stream().filter(reply -> !(reply.answered() && reply.value())).count() >= mustSayNo)
			.stream()
			.filter(reply -> reply.answered() && reply.value())
			.count() >= this.quorum;
	}

	@Override
	public Duration remainingLease(String name) {
		// The lease a majority still has: the quorum-th longest.
		return onAllNodes(node -> node.remainingLease(name)).stream()
			.filter(Reply::answered)
			.map(Reply::value)
			.sorted(Comparator.reverseOrder())
			.skip(this.quorum - 1L)
			.findFirst()
			.orElse(Duration.ZERO);
	}

	@Override
	public AutoCloseable subscribe(String name, Consumer<LockNotice> onNotice) {
		List<AutoCloseable> subscriptions = new ArrayList<>();
		RuntimeException last = null;
		// Connection set-up, not a lock decision: a longer timeout, and no node is marked down for it.
		Duration timeout = this.settings.nodeTimeout().compareTo(SUBSCRIBE_TIMEOUT) > 0 ? this.settings.nodeTimeout()
				: SUBSCRIBE_TIMEOUT;
		for (Reply<AutoCloseable> reply : onAllNodes(node -> node.subscribe(name, onNotice), received -> false, timeout,
				false)) {
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
		List<Reply<Health>> replies = onAllNodes(RedisLockBackend::health);
		Map<String, Object> nodeStates = new LinkedHashMap<>();
		int reachable = 0;
		for (int i = 0; i < replies.size(); i++) {
			Reply<Health> reply = replies.get(i);
			boolean up = reply.answered() && reply.value().up();
			reachable += (up && this.identities.whyNotCounted(i) == null) ? 1 : 0;
			nodeStates.put(this.nodes.get(i).description(), this.identities.healthState(i, up));
		}
		return new Health(reachable >= this.quorum,
				Map.of("nodes", nodeStates, "reachable", reachable, "quorum", this.quorum));
	}

	@Override
	public void close() {
		this.identities.close();
		this.nodes.forEach(RedisLockBackend::close);
		this.calls.shutdownNow();
	}

	/** Each failed node's address and real cause, for an exception message. */
	private <T> String nodeFailures(List<Reply<T>> replies) {
		List<String> failures = new ArrayList<>();
		for (int i = 0; i < replies.size(); i++) {
			if (replies.get(i).failed()) {
				failures.add(explainNode(i, replies.get(i).error()));
			}
		}
		return String.join("; ", failures);
	}

	private void undo(String name, String owner, String attempt) {
		// Everywhere, also where the attempt timed out. Only this attempt's hold is deleted, so the
		// undo may arrive after the owner's next attempt without breaking that attempt's quorum.
		for (RedisLockBackend node : this.nodes) {
			if (node.asyncReady()) {
				node.abandonAsync(name, owner, attempt).whenComplete((deleted, error) -> {
					if (error != null) {
						log.debug("Could not undo a failed Redlock attempt on lock '{}' at one node", name, error);
					}
				});
				continue;
			}
			this.calls.execute(() -> {
				try {
					node.abandon(name, owner, attempt);
				}
				catch (RuntimeException ex) {
					log.debug("Could not undo a failed Redlock attempt on lock '{}' at one node", name, ex);
				}
			});
		}
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

	/**
	 * Runs the call on every node at once and collects replies until {@code enough} says the outcome
	 * is decided, or the node timeout passes. Nodes that have not answered by then count as failed;
	 * their calls finish in the background. A node that timed out or refused the connection is
	 * skipped for {@link #downPeriod} so that calls to it do not pile up.
	 */
	private <T> List<Reply<T>> onAllNodes(Function<RedisLockBackend, T> call, Predicate<List<Reply<T>>> enough) {
		return onAllNodes(call, enough, this.settings.nodeTimeout(), true);
	}

	private <T> List<Reply<T>> onAllNodes(Function<RedisLockBackend, T> call, Predicate<List<Reply<T>>> enough,
			Duration timeout, boolean markDownOnTimeout) {
		return onAllNodesAsync(node -> CompletableFuture.supplyAsync(() -> call.apply(node), this.calls), enough, timeout,
				markDownOnTimeout);
	}

	/**
	 * As {@link #onAllNodes(Function, Predicate)}, for calls that do not block: the lock decisions,
	 * sent from the calling thread on each node's shared connection, so that one owner's acquire,
	 * release and undo reach a node in the order they were made.
	 */
	private <T> List<Reply<T>> onAllNodesAsync(Function<RedisLockBackend, CompletionStage<T>> call,
			Predicate<List<Reply<T>>> enough) {
		return onAllNodesAsync(call, enough, this.settings.nodeTimeout(), true);
	}

	private <T> List<Reply<T>> onAllNodesAsync(Function<RedisLockBackend, CompletionStage<T>> call,
			Predicate<List<Reply<T>>> enough, Duration timeout, boolean markDownOnTimeout) {
		int count = this.nodes.size();
		BlockingQueue<Indexed<T>> arrived = new LinkedBlockingQueue<>();
		long now = System.nanoTime();
		for (int i = 0; i < count; i++) {
			int index = i;
			String notCounted = this.identities.whyNotCounted(i);
			if (notCounted != null) {
				arrived.add(new Indexed<>(index, new Reply<>(null, new IllegalStateException(notCounted))));
				continue;
			}
			if (now - this.downUntil.get(i) < 0) {
				arrived.add(new Indexed<>(index, new Reply<>(null, new IllegalStateException("node " + index
						+ " did not answer recently; skipped until it is probed again"))));
				continue;
			}
			CompletionStage<T> reply;
			try {
				reply = call.apply(this.nodes.get(i));
			}
			catch (RuntimeException ex) {
				reply = CompletableFuture.failedFuture(ex);
			}
			reply.whenComplete((value, error) -> arrived.add(new Indexed<>(index,
					(error == null) ? new Reply<>(value, null) : new Reply<>(null, unwrap(error)))));
		}
		List<Reply<T>> replies = new ArrayList<>(Collections.nCopies(count, null));
		List<Reply<T>> received = new ArrayList<>(count);
		long deadline = now + timeout.toNanos();
		boolean interrupted = false;
		try {
			while (received.size() < count) {
				Indexed<T> next;
				try {
					next = arrived.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
				}
				catch (InterruptedException ex) {
					// The wait is bounded by the timeout anyway; the caller sees the interrupt afterwards
					// and handles it as its mode says (lock() must not give up here).
					interrupted = true;
					continue;
				}
				if (next == null) {
					break;
				}
				replies.set(next.index(), next.reply());
				received.add(next.reply());
				if (markDownOnTimeout && unreachable(next.reply().error())) {
					markDown(next.index());
				}
				if (enough.test(received)) {
					break;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
		boolean timedOut = System.nanoTime() - deadline >= 0;
		// If nobody answered in time, the stall was probably ours (a GC pause), not the nodes'.
		boolean othersAnswered = received.stream().anyMatch(Reply::answered);
		for (int i = 0; i < count; i++) {
			if (replies.get(i) != null) {
				continue;
			}
			if (timedOut) {
				replies.set(i, new Reply<>(null, new TimeoutException("node " + i + " did not answer within "
						+ timeout.toMillis() + " ms")));
				if (markDownOnTimeout && othersAnswered) {
					markDown(i);
				}
			}
			else {
				// Decided before this node answered: neither a yes nor a failure.
				replies.set(i, Reply.notWaitedFor());
			}
		}
		return replies;
	}

	private <T> List<Reply<T>> onAllNodes(Function<RedisLockBackend, T> call) {
		return onAllNodes(call, received -> false);
	}

	private void markDown(int index) {
		this.downUntil.set(index, System.nanoTime() + this.downPeriod.toNanos());
	}

	private static boolean unreachable(Throwable error) {
		return error instanceof TimeoutException || error instanceof DataAccessResourceFailureException
				|| error instanceof QueryTimeoutException || error instanceof RedisConnectionException
				|| error instanceof RedisCommandTimeoutException;
	}

	private static Throwable unwrap(Throwable error) {
		return (error instanceof CompletionException && error.getCause() != null) ? error.getCause()
				: error;
	}

	private record Indexed<T>(int index, Reply<T> reply) {
	}

	/** One node's answer, or why there was none, or that it was not waited for. */
	private record Reply<T>(T value, Throwable error, boolean pending) {

		Reply(T value, Throwable error) {
			this(value, error, false);
		}

		static <T> Reply<T> notWaitedFor() {
			return new Reply<>(null, null, true);
		}

		boolean answered() {
			return this.error == null && !this.pending;
		}

		boolean failed() {
			return this.error != null;
		}

		boolean is(Object expected) {
			if (!answered()) {
				return false;
			}
			Object actual = (this.value instanceof Acquisition acquisition) ? acquisition.status() : this.value;
			return expected.equals(actual);
		}

	}

}
