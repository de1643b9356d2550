package io.distlock.redlock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.redis.RedisNode;

/**
 * Which Redis server each Redlock node reaches, by its {@code run_id}, so that a majority is one of
 * servers, not of entries: two entries that reach one server (two names for one host, two database
 * numbers) are refused at start, and of entries that come to reach one server after a reconnect
 * only the first listed counts.
 */
final class RedlockNodeIdentities {

	private static final Logger log = LoggerFactory.getLogger(RedlockNodeIdentities.class);

	/** Marks a node that reconnected and has not said which server it reached: it does not count. */
	private static final int UNVERIFIED = -2;

	private static final int COUNTS = -1;

	/** How often a reconnected node that did not say which server it is gets asked again. */
	private static final Duration RETRY = Duration.ofSeconds(1);

	private final List<RedisNode> nodes;

	private final int quorum;

	private final Executor asks;

	/** Per node: the run id of the server it reached last, or {@code null} while unknown. */
	private final AtomicReferenceArray<String> serverIds;

	/**
	 * Per node: {@link #COUNTS}, the index of an earlier node that reaches the same server, or
	 * {@link #UNVERIFIED}. Rebuilt whole, under {@link #lock}, from {@link #serverIds}.
	 */
	private final AtomicIntegerArray sameServerAs;

	/** Per node: numbers its (re)connections, so that an older answer never overwrites a newer one. */
	private final AtomicLongArray connections;

	private final Object lock = new Object();

	private volatile boolean closed;

	/**
	 * @param nodes the nodes, in the order listed
	 * @param quorum how many must agree, for messages
	 * @param asks where the blocking questions run (never Lettuce's I/O threads)
	 */
	RedlockNodeIdentities(List<RedisNode> nodes, int quorum, Executor asks) {
		this.nodes = nodes;
		this.quorum = quorum;
		this.asks = asks;
		this.serverIds = new AtomicReferenceArray<>(nodes.size());
		this.sameServerAs = new AtomicIntegerArray(nodes.size());
		this.connections = new AtomicLongArray(nodes.size());
		for (int i = 0; i < nodes.size(); i++) {
			this.sameServerAs.set(i, COUNTS);
		}
	}

	/**
	 * Records what the nodes answered at start and refuses two that reach one server.
	 * @param answered per node its run id, or {@code null} if it did not answer
	 * @throws RedlockNodesException naming both entries of one server
	 */
	void atStart(List<String> answered) {
		synchronized (this.lock) {
			for (int i = 0; i < answered.size(); i++) {
				this.serverIds.set(i, answered.get(i));
				for (int j = 0; j < i; j++) {
					if (answered.get(i) != null && answered.get(i).equals(answered.get(j))) {
						throw new RedlockNodesException(sameServerMessage(j, i) + " List every independent master once.",
								null);
					}
				}
			}
		}
		for (int i = 0; i < this.nodes.size(); i++) {
			int index = i;
			// Lettuce reconnects by itself, maybe to another server behind the same name: ask again.
			this.nodes.get(i).onConnected(() -> reconnected(index));
		}
	}

	/**
	 * @param index a node
	 * @return why the node's answers do not count now, or {@code null} if they do
	 */
	String whyNotCounted(int index) {
		int same = this.sameServerAs.get(index);
		if (same == COUNTS) {
			return null;
		}
		return (same == UNVERIFIED) ? "it reconnected and has not yet said which server it reached"
				: "it reaches the same server as Redlock node " + (same + 1) + " and does not count";
	}

	/**
	 * @param index a node
	 * @param up whether it answered the health check
	 * @return its state for the health endpoint
	 */
	String healthState(int index, boolean up) {
		int same = this.sameServerAs.get(index);
		if (same >= 0) {
			return "SAME SERVER AS NODE " + (same + 1);
		}
		return (same == UNVERIFIED) ? "RECONNECTING" : up ? "UP" : "DOWN";
	}

	void close() {
		this.closed = true;
	}

	/**
	 * A node's connection was (re)established: it stops counting until it has said which server it
	 * reached. Runs on Lettuce's I/O thread, so the question is asked elsewhere.
	 */
	private void reconnected(int index) {
		long connection = this.connections.incrementAndGet(index);
		synchronized (this.lock) {
			this.serverIds.set(index, null);
			this.sameServerAs.set(index, UNVERIFIED);
		}
		try {
			this.asks.execute(() -> ask(index, connection));
		}
		catch (RejectedExecutionException closing) {
			// The backend is closing.
		}
	}

	/**
	 * Asks a reconnected node which server it reached, until it answers or reconnects again, then
	 * decides anew which nodes count.
	 */
	private void ask(int index, long connection) {
		String id = null;
		while (id == null && !this.closed && this.connections.get(index) == connection) {
			try {
				id = this.nodes.get(index).serverId();
			}
			catch (RuntimeException ex) {
				log.debug("Could not ask Redlock node {} which server it is; asking again",
						this.nodes.get(index).description(), ex);
				try {
					Thread.sleep(RETRY.toMillis());
				}
				catch (InterruptedException interrupted) {
					return;
				}
			}
		}
		if (id == null) {
			return;
		}
		synchronized (this.lock) {
			if (this.connections.get(index) != connection) {
				// A newer connection asks for itself.
				return;
			}
			this.serverIds.set(index, id);
			decideWhichNodesCount();
		}
	}

	/**
	 * Of the nodes whose server is known, the first listed per server counts; the others do not.
	 * Exclusions are applied before inclusions, so that a reader never sees two nodes of one server
	 * both counting, not even halfway through.
	 */
	private void decideWhichNodesCount() {
		int[] decided = new int[this.nodes.size()];
		for (int i = 0; i < decided.length; i++) {
			String id = this.serverIds.get(i);
			decided[i] = (id == null) ? UNVERIFIED : COUNTS;
			for (int j = 0; j < i && id != null; j++) {
				if (id.equals(this.serverIds.get(j))) {
					decided[i] = j;
					break;
				}
			}
		}
		for (boolean including : new boolean[] { false, true }) {
			for (int i = 0; i < decided.length; i++) {
				if ((decided[i] == COUNTS) != including) {
					continue;
				}
				int before = this.sameServerAs.getAndSet(i, decided[i]);
				if (decided[i] >= 0 && before != decided[i]) {
					log.error("{} Its answers do not count towards the majority of {}; fix the Redlock node list.",
							sameServerMessage(decided[i], i), this.quorum);
				}
				else if (decided[i] == COUNTS && before >= 0) {
					log.info("Redlock node {} reaches a server of its own again and counts again",
							this.nodes.get(i).description());
				}
			}
		}
	}

	private String sameServerMessage(int first, int second) {
		return "Redlock nodes " + (first + 1) + " (" + this.nodes.get(first).description() + ") and " + (second + 1) + " ("
				+ this.nodes.get(second).description() + ") reach the same Redis server (run_id "
				+ this.serverIds.get(second) + "): one server would count twice towards the majority.";
	}

}
