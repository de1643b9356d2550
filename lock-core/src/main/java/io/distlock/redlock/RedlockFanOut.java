package io.distlock.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.core.LockBackend.Acquisition;
import io.distlock.redis.RedisFailures;
import io.distlock.redis.RedisNode;

/**
 * Redlock's masters as one group, for {@link RedlockBackend}, which keeps the quorum rules: sends a
 * call to every node at once and collects the answers until the outcome is decided or the node
 * timeout passes; skips a node for a while after it failed to answer ({@link RedlockDownNodes});
 * leaves out entries that reach a server an earlier entry reaches ({@link RedlockNodeIdentities});
 * and connects to every node at start.
 */
final class RedlockFanOut implements AutoCloseable {

	private static final Logger log = LoggerFactory.getLogger(RedlockFanOut.class);

	/** How long connecting to the nodes may take at start, where the short node timeout is not meant. */
	private static final Duration WARM_UP_TIMEOUT = Duration.ofSeconds(10);

	private final List<RedisNode> nodes;

	private final int quorum;

	private final Duration nodeTimeout;

	/** Runs the calls of nodes without a shared connection, and connection set-up. */
	private final ExecutorService calls;

	private final RedlockDownNodes down;

	/** Which server each node reaches; a node that shares one with an earlier-listed node does not count. */
	private final RedlockNodeIdentities identities;

	/**
	 * @param nodes one node per independent master
	 * @param quorum how many must agree
	 * @param nodeTimeout how long a lock decision waits for the nodes
	 */
	RedlockFanOut(List<RedisNode> nodes, int quorum, Duration nodeTimeout) {
		this.nodes = List.copyOf(nodes);
		this.quorum = quorum;
		this.nodeTimeout = nodeTimeout;
		this.down = new RedlockDownNodes(nodes.size(), nodeTimeout);
		AtomicInteger count = new AtomicInteger();
		this.calls = Executors.newCachedThreadPool(runnable -> {
			Thread thread = new Thread(runnable, "distlock-redlock-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
		this.identities = new RedlockNodeIdentities(this.nodes, this.quorum, this.calls);
	}

	/** @return the nodes, in the order listed */
	List<RedisNode> all() {
		return this.nodes;
	}

	/** @return why node {@code index} does not count towards a majority, or {@code null} if it does */
	String whyNotCounted(int index) {
		return this.identities.whyNotCounted(index);
	}

	/** @return node {@code index}'s state for the health details */
	Object healthState(int index, boolean up) {
		return this.identities.healthState(index, up);
	}

	/**
	 * A lock decision on every node, from the calling thread: each node's shared connection carries
	 * it without blocking ({@code async}), so one owner's acquire, release and undo reach a node in
	 * the order they were made; a node without one blocks a pool thread ({@code blocking}).
	 */
	<T> List<Reply<T>> decide(Function<RedisNode, CompletionStage<T>> async, Function<RedisNode, T> blocking,
			Predicate<List<Reply<T>>> enough) {
		return onAllNodesAsync(node -> node.asyncReady() ? async.apply(node)
				: CompletableFuture.supplyAsync(() -> blocking.apply(node), this.calls), enough);
	}

	/** Sends a call to every node without waiting for any answer; failures are only logged. */
	void everywhere(Function<RedisNode, CompletionStage<?>> async, Consumer<RedisNode> blocking,
			String what) {
		for (RedisNode node : this.nodes) {
			if (node.asyncReady()) {
				async.apply(node).whenComplete((done, error) -> {
					if (error != null) {
						log.debug("Could not {} at one node", what, error);
					}
				});
				continue;
			}
			this.calls.execute(() -> {
				try {
					blocking.accept(node);
				}
				catch (RuntimeException ex) {
					log.debug("Could not {} at one node", what, ex);
				}
			});
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
	void warmUp() {
		List<CompletableFuture<String>> answers = this.nodes.stream().map(node -> CompletableFuture.supplyAsync(() -> {
			String serverId = node.serverId();
			// One plain command through the node's template, so that its connection is open before the
			// first real acquisition (the lock scripts themselves load at their first NOSCRIPT).
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
						+ ". Fix that entry of the Redlock node list.", error);
			}
			down.add(explained);
		}
		this.identities.atStart(answered);
		if (!down.isEmpty()) {
			log.warn("{} of {} Redlock nodes did not answer at start; locks need {} of them: {}", down.size(),
					this.nodes.size(), this.quorum, String.join("; ", down));
		}
	}

	String explainNode(int index, Throwable error) {
		return RedisFailures.explain(error, this.nodes.get(index).description());
	}

	/** Each failed node's address and real cause, for an exception message. */
	<T> String nodeFailures(List<Reply<T>> replies) {
		List<String> failures = new ArrayList<>();
		for (int i = 0; i < replies.size(); i++) {
			if (replies.get(i).failed()) {
				failures.add(explainNode(i, replies.get(i).error()));
			}
		}
		return String.join("; ", failures);
	}

	/**
	 * Runs the call on every node at once and collects replies until {@code enough} says the outcome
	 * is decided, or the node timeout passes. Nodes that have not answered by then count as failed;
	 * their calls finish in the background. A node that timed out or refused the connection is
	 * skipped for a while ({@link RedlockDownNodes}).
	 */
	<T> List<Reply<T>> onAllNodes(Function<RedisNode, T> call, Predicate<List<Reply<T>>> enough) {
		return onAllNodes(call, enough, this.nodeTimeout, true);
	}

	<T> List<Reply<T>> onAllNodes(Function<RedisNode, T> call, Predicate<List<Reply<T>>> enough,
			Duration timeout, boolean markDownOnTimeout) {
		return onAllNodesAsync(node -> CompletableFuture.supplyAsync(() -> call.apply(node), this.calls), enough, timeout,
				markDownOnTimeout);
	}

	/**
	 * As {@link #onAllNodes(Function, Predicate)}, for calls that do not block: the lock decisions,
	 * sent from the calling thread on each node's shared connection, so that one owner's acquire,
	 * release and undo reach a node in the order they were made.
	 */
	<T> List<Reply<T>> onAllNodesAsync(Function<RedisNode, CompletionStage<T>> call,
			Predicate<List<Reply<T>>> enough) {
		return onAllNodesAsync(call, enough, this.nodeTimeout, true);
	}

	<T> List<Reply<T>> onAllNodesAsync(Function<RedisNode, CompletionStage<T>> call,
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
			if (this.down.skipped(i, now)) {
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
				if (markDownOnTimeout && RedlockDownNodes.unreachable(next.reply().error())) {
					this.down.markDown(next.index());
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
					this.down.markDown(i);
				}
			}
			else {
				// Decided before this node answered: neither a yes nor a failure.
				replies.set(i, Reply.notWaitedFor());
			}
		}
		return replies;
	}

	<T> List<Reply<T>> onAllNodes(Function<RedisNode, T> call) {
		return onAllNodes(call, received -> false);
	}

	private static Throwable unwrap(Throwable error) {
		return (error instanceof CompletionException && error.getCause() != null) ? error.getCause()
				: error;
	}

	@Override
	public void close() {
		this.identities.close();
		this.calls.shutdownNow();
	}

	private record Indexed<T>(int index, Reply<T> reply) {
	}

	/** One node's answer, or why there was none, or that it was not waited for. */
	record Reply<T>(T value, Throwable error, boolean pending) {

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
