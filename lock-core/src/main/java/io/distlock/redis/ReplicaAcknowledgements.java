package io.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.output.ArrayOutput;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.masterreplica.StatefulRedisMasterReplicaConnection;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

import io.distlock.LockBackendException;

/**
 * Sends acquisitions that must reach replicas, each followed by {@code WAIT} (or {@code WAITAOF}),
 * on a connection of distlock's own (one per registry): {@code WAIT} blocks its connection on the
 * server, and on the application's shared connection every other command would queue behind it.
 * What must run after an acquisition (giving its hold back, leaving the queue) goes over the same
 * connection, so that the server runs it after the acquisition too.
 * <p>
 * An acknowledgement counts only if the acquisition and its {@code WAIT} ran on one connection:
 * {@code WAIT} waits for the writes of its own connection, and Lettuce re-sends an unanswered
 * {@code WAIT} after a reconnect, where a connection that wrote nothing is acknowledged at once. So
 * the connection's {@code CLIENT ID} is asked before the acquisition and after the {@code WAIT}, and
 * a disconnect seen in between also counts: either makes the hold unacknowledged.
 */
final class ReplicaAcknowledgements implements AutoCloseable {

	/** The property that asks for acknowledgements, named in every failure. */
	private static final String PROPERTY = "distlock.redis.replica-acks";

	/** Not among Lettuce 6's command types (Redis 7.2 added it). */
	private static final ProtocolKeyword WAITAOF = new ProtocolKeyword() {

		private final byte[] bytes = "WAITAOF".getBytes(StandardCharsets.US_ASCII);

		@Override
		public byte[] getBytes() {
			return this.bytes;
		}

		@Override
		public String toString() {
			return "WAITAOF";
		}

	};

	private final RedisReplicaAcks acks;

	private final String description;

	private final LettuceConnectionFactory connectionFactory;

	/** Runs the acquisition script on the own connection, with the NOSCRIPT fallback. */
	private final LettuceScripts scripts;

	/** Counts the own connection's disconnects: a reconnect between acquisition and acknowledgement voids it. */
	private final AtomicLong disconnects = new AtomicLong();

	/** The own Lettuce connection, whose disconnects are counted (the client has others). */
	private volatile Object ownConnection;

	private final RedisConnectionStateListener disconnectCounter = new RedisConnectionStateListener() {

		@Override
		public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
			if (connection == ReplicaAcknowledgements.this.ownConnection) {
				ReplicaAcknowledgements.this.disconnects.incrementAndGet();
			}
		}

	};

	/** The Spring connection that holds the own Lettuce connection open, once opened. */
	private RedisConnection held;

	private RedisClusterAsyncCommands<byte[], byte[]> heldCommands;

	/** The client the disconnect counter listens to, to stop listening there even after the factory stopped. */
	private AbstractRedisClient listenedTo;

	private boolean closed;

	/**
	 * @param connectionFactory the application's factory, from which the own connection comes
	 * @param acks how many replicas, and how long to wait for them
	 * @param description the server, for messages
	 * @throws IllegalStateException where acknowledgements cannot be asked for (not Lettuce, a Cluster)
	 */
	ReplicaAcknowledgements(RedisConnectionFactory connectionFactory, RedisReplicaAcks acks, String description) {
		if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
			throw new IllegalStateException(PROPERTY + " needs a Lettuce connection factory (spring.data.redis with "
					+ "Lettuce, Spring Boot's default), not " + connectionFactory.getClass().getName());
		}
		if (lettuce.isClusterAware()) {
			throw new IllegalStateException(PROPERTY + " is not supported on Redis Cluster yet: set it to 0, or use "
					+ "a single master with replicas (Sentinel)");
		}
		if (lettuce.getClientConfiguration().getReadFrom().isPresent()) {
			// A Master/Replica connection sends read-only commands (CLIENT among them) to replicas.
			throw new IllegalStateException(PROPERTY + " needs every lock command on the master, but the connection "
					+ "factory reads from replicas (spring.data.redis.lettuce.read-from, or a static master/replica "
					+ "setup): give distlock a connection factory without read-from, or set " + PROPERTY + "=0");
		}
		this.acks = acks;
		this.description = description;
		this.connectionFactory = lettuce;
		this.scripts = new LettuceScripts(lettuce, true, description, this::openOwnConnection);
	}

	/**
	 * A connection of the factory's own settings (server, Sentinel, TLS, credentials) that nothing
	 * else uses: Spring Data Redis gives a pipelining connection a dedicated Lettuce connection, and
	 * with every command flushed at once (its default policy) it behaves as a plain one. It stays open
	 * until {@link #close()}, and is opened again if the factory closed it.
	 */
	@SuppressWarnings("unchecked")
	private synchronized RedisClusterAsyncCommands<byte[], byte[]> openOwnConnection() {
		if (this.closed) {
			throw new IllegalStateException("Lock backend for " + this.description + " is closed");
		}
		if (this.held != null && this.heldCommands instanceof RedisAsyncCommands<byte[], byte[]> open
				&& open.getStatefulConnection().isOpen()) {
			// Another thread's first call opened it meanwhile.
			return this.heldCommands;
		}
		closeOwnConnection();
		AbstractRedisClient client = this.connectionFactory.getNativeClient();
		if (client != null && client != this.listenedTo) {
			stopListening();
			client.addListener(this.disconnectCounter);
			this.listenedTo = client;
		}
		RedisConnection connection = this.connectionFactory.getConnection();
		connection.openPipeline();
		this.held = connection;
		if (!(connection.getNativeConnection() instanceof RedisAsyncCommands<?, ?> plain)
				|| plain.getStatefulConnection() instanceof StatefulRedisMasterReplicaConnection<?, ?>) {
			closeOwnConnection();
			throw new IllegalStateException(PROPERTY + " needs a plain connection to the master (" + this.description
					+ "), not one that spreads commands over several servers; set " + PROPERTY + "=0");
		}
		// Whatever the factory's pipelining flush policy: every command is written at once.
		plain.getStatefulConnection().setAutoFlushCommands(true);
		this.ownConnection = plain.getStatefulConnection();
		this.heldCommands = (RedisClusterAsyncCommands<byte[], byte[]>) plain;
		return this.heldCommands;
	}

	private void stopListening() {
		if (this.listenedTo != null) {
			this.listenedTo.removeListener(this.disconnectCounter);
			this.listenedTo = null;
		}
	}

	private void closeOwnConnection() {
		if (this.held != null) {
			try {
				this.held.closePipeline();
			}
			catch (RuntimeException ex) {
				// Nothing was sent through Spring's pipeline; a connection already broken has nothing to give back.
			}
			try {
				this.held.close();
			}
			catch (RuntimeException ex) {
				// A factory that stopped has closed it already.
			}
			this.held = null;
			this.heldCommands = null;
			this.ownConnection = null;
		}
	}

	/**
	 * Runs the acquisition script on the own connection, after asking which connection that is.
	 * @return the script's reply, and the connection it ran on
	 */
	Sent acquire(RedisScript<?> script, byte[][] keys, byte[]... args) {
		RedisClusterAsyncCommands<byte[], byte[]> commands = commands();
		long before = this.disconnects.get();
		Future<Long> clientId = commands.clientId();
		List<?> reply = this.scripts.call(script, ScriptOutputType.MULTI, keys, args);
		return new Sent(reply, await(clientId, Duration.ofSeconds(5), "CLIENT ID"), before);
	}

	/**
	 * Waits until the replicas have everything the connection wrote up to the acquisition.
	 * @param sent what {@link #acquire} sent
	 * @param name the lock, for messages
	 * @param bound how long the caller can wait at most (its own wait, half its lease)
	 * @throws LockBackendException if too few replicas acknowledged in time, the connection changed
	 * meanwhile, or the server refused the command; the hold is then the caller's to give back
	 */
	void acknowledge(Sent sent, String name, Duration bound) {
		Duration timeout = (bound.compareTo(this.acks.timeout()) < 0) ? bound : this.acks.timeout();
		long timeoutMillis = Math.max(1, timeout.toMillis());
		RedisClusterAsyncCommands<byte[], byte[]> commands = commands();
		String command = this.acks.appendOnly() ? "WAITAOF" : "WAIT";
		Future<?> waited;
		if (this.acks.appendOnly()) {
			waited = commands.dispatch(WAITAOF, new ArrayOutput<>(ByteArrayCodec.INSTANCE),
					new CommandArgs<>(ByteArrayCodec.INSTANCE).add(0).add(this.acks.replicas()).add(timeoutMillis));
		}
		else {
			waited = commands.waitForReplication(this.acks.replicas(), timeoutMillis);
		}
		Future<Long> clientId = commands.clientId();
		Object reply;
		long after;
		try {
			// The server answers within the timeout; the margin covers a slow network, not a lost reply.
			reply = await(waited, timeout.plusSeconds(5), command);
		}
		catch (RuntimeException ex) {
			throw refused(name, command, ex);
		}
		try {
			after = await(clientId, Duration.ofSeconds(5), "CLIENT ID");
		}
		catch (RuntimeException ex) {
			throw refused(name, "CLIENT ID", ex);
		}
		long acknowledged = acknowledgedReplicas(reply);
		if (after != sent.clientId() || this.disconnects.get() != sent.disconnectsBefore()) {
			throw new LockBackendException(name, "Lock '" + name + "': the connection to Redis (" + this.description
					+ ") was re-established between the acquisition and its " + command + ", so no replica's "
					+ "acknowledgement of the hold can be told; the hold is given back (" + PROPERTY + "="
					+ this.acks.replicas() + ")", null);
		}
		if (acknowledged < this.acks.replicas()) {
			boolean cutShort = timeoutMillis < this.acks.timeout().toMillis();
			throw new LockBackendException(name, "Lock '" + name + "': only " + acknowledged + " of the "
					+ this.acks.replicas() + " replica(s) that " + PROPERTY + " asks for acknowledged the hold within "
					+ timeoutMillis + " ms (Redis " + this.description + "); the hold is given back. "
					+ (cutShort ? "That was all the caller's wait (or half the lease) left for them; wait longer, or "
							+ "check the replicas (INFO replication)"
							: "Check the replicas (INFO replication), or lower " + PROPERTY
									+ " or raise distlock.redis.replica-ack-timeout"),
					null);
		}
	}

	private LockBackendException refused(String name, String command, RuntimeException ex) {
		String message = String.valueOf(ex.getMessage());
		if (ex instanceof RedisCommandExecutionException) {
			// An error reply: the server (or a proxy) refused it, e.g. ERR unknown command, NOPERM.
			return new LockBackendException(name, "Lock '" + name + "': Redis (" + this.description + ") refused "
					+ command + " (" + message + "), which " + PROPERTY + "=" + this.acks.replicas() + " needs; the hold "
					+ "is given back. Behind a proxy that refuses " + command + ", set " + PROPERTY + "=0"
					+ (this.acks.appendOnly() ? "; WAITAOF needs Redis 7.2 or later, or set "
							+ "distlock.redis.replica-acks-append-only=false" : ""), ex);
		}
		return new LockBackendException(name, "Lock '" + name + "': Redis (" + this.description + ") did not answer "
				+ command + " (" + message + "), which " + PROPERTY + "=" + this.acks.replicas()
				+ " sends after each acquisition; the hold is given back", ex);
	}

	/**
	 * Gives back a hold its acquisition took but the replicas did not acknowledge, on the own
	 * connection, so that it runs before anything the caller sends next (a {@code lock()} interrupted
	 * meanwhile sends its acquisition again, with the same ticket: a give-back that overtook it on
	 * another connection would delete the hold it returns with). EVAL with the script's text, never
	 * EVALSHA: a NOSCRIPT fallback would be sent only after its reply, behind what came next.
	 * Waited for up to {@code within}, whatever interrupts arrive (the flag is kept).
	 */
	void giveBack(RedisScript<?> script, byte[][] keys, Duration within, byte[]... args) {
		Future<Object> reply = commands().eval(script.getScriptAsString().getBytes(StandardCharsets.UTF_8),
				ScriptOutputType.INTEGER, keys, args);
		try {
			LettuceScripts.await(reply, System.nanoTime() + within.toNanos(), false);
		}
		catch (InterruptedException ex) {
			// Not interruptible: never thrown.
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// Sent: it runs before anything sent after it, and the hold expires within its lease anyway.
			throw new IllegalStateException("Redis (" + this.description + ") did not confirm giving back an "
					+ "unacknowledged hold within " + within.toMillis() + " ms", ex);
		}
	}

	/**
	 * Takes a waiting attempt out of the queue on the own connection, where its acquisition went:
	 * behind it, so that a hold the acquisition takes after its caller gave up is released, never
	 * left for a lease that nobody renews.
	 */
	void leave(RedisScript<?> script, byte[][] keys, Duration wait, byte[]... args) {
		commands();
		this.scripts.callBriefly(script, ScriptOutputType.INTEGER, keys, wait, args);
	}

	private static long acknowledgedReplicas(Object reply) {
		if (reply instanceof Long count) {
			return count;
		}
		// WAITAOF: [local fsyncs, replica fsyncs].
		if (reply instanceof List<?> counts && counts.size() == 2 && counts.get(1) instanceof Long replicas) {
			return replicas;
		}
		throw new IllegalStateException("Unexpected reply " + reply + " to WAIT/WAITAOF");
	}

	private RedisClusterAsyncCommands<byte[], byte[]> commands() {
		if (!this.scripts.ready() && !this.scripts.prepareOnce()) {
			throw new IllegalStateException("No connection of distlock's own to Redis (" + this.description + ")");
		}
		return this.scripts.commands();
	}

	private static <T> T await(Future<T> reply, Duration within, String command) {
		try {
			return reply.get(within.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RedisCommandInterruptedException(ex);
		}
		catch (TimeoutException ex) {
			throw new IllegalStateException("Redis did not answer " + command + " within " + within.toMillis() + " ms");
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof RuntimeException runtime) ? runtime : new IllegalStateException(ex.getCause());
		}
	}

	@Override
	public synchronized void close() {
		this.closed = true;
		stopListening();
		closeOwnConnection();
	}

	/**
	 * An acquisition sent on the own connection.
	 * @param reply the script's reply
	 * @param clientId the connection's id on the server just before the script
	 * @param disconnectsBefore the own client's disconnects counted before it
	 */
	record Sent(List<?> reply, long clientId, long disconnectsBefore) {
	}

}
