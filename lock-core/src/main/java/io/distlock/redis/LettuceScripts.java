package io.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs the lock scripts straight on a connection factory's shared Lettuce connection: EVALSHA, and
 * EVAL (which loads the script again) after a {@code NOSCRIPT} reply. Only where the factory shares
 * one native connection to a single server; otherwise {@link #prepare()} says no and callers use the
 * template. Keys and arguments come as bytes: callers keep what does not change between calls
 * encoded (see {@link EncodedKeys}), and Lettuce sends them as they are.
 */
final class LettuceScripts {

	private static final Logger log = LoggerFactory.getLogger(LettuceScripts.class);

	private final boolean applicable;

	/** Finds the connection the scripts run on: the factory's shared one, or another (see {@link #prepare()}). */
	private final Supplier<RedisClusterAsyncCommands<byte[], byte[]>> lookup;

	private final String description;

	/** How long a blocking call waits for Redis: the connection factory's command timeout. */
	private final long commandTimeoutMillis;

	/** The shared connection's asynchronous commands, once {@link #prepare()} found them. */
	private volatile RedisClusterAsyncCommands<byte[], byte[]> commands;

	private volatile boolean lookedUp;

	/**
	 * @param connectionFactory the factory whose shared connection to use
	 * @param singleServer whether the factory talks to one server (not a cluster)
	 * @param description the server, for error messages
	 */
	LettuceScripts(RedisConnectionFactory connectionFactory, boolean singleServer, String description) {
		this(connectionFactory, singleServer && connectionFactory instanceof LettuceConnectionFactory lettuce
				&& lettuce.getShareNativeConnection(), description, () -> sharedConnection(connectionFactory));
	}

	/**
	 * @param connectionFactory the factory the connection comes from
	 * @param applicable whether {@code lookup} can find a connection to run scripts on
	 * @param description the server, for error messages
	 * @param lookup finds the connection (it may connect), or {@code null} if there is none
	 */
	LettuceScripts(RedisConnectionFactory connectionFactory, boolean applicable, String description,
			Supplier<RedisClusterAsyncCommands<byte[], byte[]>> lookup) {
		this.applicable = applicable;
		this.description = description;
		this.lookup = lookup;
		this.commandTimeoutMillis = (connectionFactory instanceof LettuceConnectionFactory lettuce)
				? lettuce.getClientConfiguration().getCommandTimeout().toMillis() : 60_000;
	}

	@SuppressWarnings("unchecked")
	private static RedisClusterAsyncCommands<byte[], byte[]> sharedConnection(RedisConnectionFactory connectionFactory) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			return (connection.getNativeConnection() instanceof RedisClusterAsyncCommands<?, ?> found)
					? (RedisClusterAsyncCommands<byte[], byte[]>) found : null;
		}
	}

	/**
	 * Looks the connection up; this may connect, so call it where blocking is fine.
	 * @return whether calls can go straight to the connection
	 */
	boolean prepare() {
		if (!this.applicable) {
			return false;
		}
		this.commands = this.lookup.get();
		return this.commands != null;
	}

	/**
	 * {@link #prepare()} on the first call only; if it throws (Redis down), the next call tries again.
	 * @return whether calls can go straight to the connection
	 */
	boolean prepareOnce() {
		if (!this.lookedUp) {
			prepare();
			this.lookedUp = true;
		}
		return ready();
	}

	/** @return whether calls can go straight to the connection now */
	boolean ready() {
		return this.commands != null;
	}

	/**
	 * Runs the script and waits for its reply, at most the command timeout.
	 * @throws RuntimeException Lettuce's, as the template would before translating them
	 */
	<T> T call(RedisScript<?> script, ScriptOutputType type, byte[][] keys, byte[]... args) {
		return call(script, type, keys, null, true, args);
	}

	/**
	 * Runs the script and waits for its reply, at most {@code within} (and never longer than the
	 * command timeout), whatever interrupts arrive meanwhile (the flag is kept): for a release or a
	 * renewal, which must not be abandoned half-way by an interrupt, and whose answer is worthless
	 * after a point (a renewal once the lease it would extend has run out).
	 * @param within how long to wait at most
	 * @throws RuntimeException Lettuce's, as the template would before translating them
	 */
	<T> T callUninterruptibly(RedisScript<?> script, ScriptOutputType type, byte[][] keys, Duration within,
			byte[]... args) {
		boolean interrupted = Thread.interrupted();
		try {
			return call(script, type, keys, within, false, args);
		}
		finally {
			if (interrupted || Thread.interrupted()) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private <T> T call(RedisScript<?> script, ScriptOutputType type, byte[][] keys, Duration within,
			boolean interruptible, byte[]... args) {
		RedisClusterAsyncCommands<byte[], byte[]> connection = connection();
		long waitNanos = TimeUnit.MILLISECONDS.toNanos(this.commandTimeoutMillis);
		if (within != null) {
			waitNanos = Math.max(1, Math.min(waitNanos, within.toNanos()));
		}
		long deadline = System.nanoTime() + waitNanos;
		Future<T> reply = connection.evalsha(script.getSha1(), type, keys, args);
		try {
			try {
				return await(reply, deadline, interruptible);
			}
			catch (ExecutionException ex) {
				if (!noScript(ex.getCause())) {
					throw ex;
				}
				// Still waiting, on the caller's thread: nothing is sent once the caller gave up.
				reply = evalAfterNoScript(connection, script, type, keys, args);
				return await(reply, deadline, interruptible);
			}
		}
		// Never cancel the reply: a cancelled command that was not yet written is dropped, and one that
		// was may still run; either way the caller could no longer tell which. The engine undoes what an
		// abandoned call may have done (it leaves the queue, passing on a hold handed to the attempt).
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RedisCommandInterruptedException(ex);
		}
		catch (TimeoutException ex) {
			throw new RedisCommandTimeoutException("Redis did not answer within "
					+ TimeUnit.NANOSECONDS.toMillis(waitNanos) + " ms (" + this.description + ")");
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			forgetClosedConnection(cause);
			throw (cause instanceof RuntimeException runtime) ? runtime : new IllegalStateException(cause);
		}
		catch (RuntimeException ex) {
			forgetClosedConnection(ex);
			throw ex;
		}
	}

	/**
	 * Waits until {@code deadline} ({@link System#nanoTime()}); when not {@code interruptible}, an
	 * interrupt meanwhile is kept for the caller and the wait goes on.
	 */
	static <T> T await(Future<T> reply, long deadline, boolean interruptible)
			throws InterruptedException, ExecutionException, TimeoutException {
		boolean interrupted = false;
		try {
			while (true) {
				try {
					return reply.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
				}
				catch (InterruptedException ex) {
					if (interruptible) {
						throw ex;
					}
					interrupted = true;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Sends the script and waits for its reply at most {@code wait}, ignoring interrupts (the flag is
	 * kept): for housekeeping whose outcome the caller does not need, such as leaving a queue. A
	 * failure is logged; the command, once sent, is never cancelled.
	 */
	void callBriefly(RedisScript<?> script, ScriptOutputType type, byte[][] keys, Duration wait,
			byte[]... args) {
		CompletableFuture<Object> reply = callAsync(script, type, keys, args);
		boolean interrupted = Thread.interrupted();
		try {
			reply.get(wait.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			interrupted = true;
		}
		catch (TimeoutException ex) {
			log.debug("Redis did not confirm {} within {} ms ({}); it was sent", script.getSha1(), wait.toMillis(),
					this.description);
		}
		catch (ExecutionException ex) {
			log.debug("Redis script {} failed ({})", script.getSha1(), this.description, ex.getCause());
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Sends the script without blocking the calling thread; needs {@link #prepare()}.
	 * @return the reply, when Redis answers
	 */
	<T> CompletableFuture<T> callAsync(RedisScript<?> script, ScriptOutputType type, byte[][] keys, byte[]... args) {
		RedisClusterAsyncCommands<byte[], byte[]> connection = this.commands;
		if (connection == null) {
			return CompletableFuture.failedFuture(new IllegalStateException("No shared connection to " + this.description));
		}
		CompletableFuture<T> result = new CompletableFuture<>();
		connection.<T>evalsha(script.getSha1(), type, keys, args).whenComplete((value, error) -> {
			if (error == null) {
				result.complete(value);
			}
			else if (noScript(error)) {
				LettuceScripts.<T>evalAfterNoScript(connection, script, type, keys, args)
					.whenComplete((retried, retryError) -> {
						if (retryError == null) {
							result.complete(retried);
						}
						else {
							result.completeExceptionally(retryError);
						}
					});
			}
			else {
				forgetClosedConnection(error);
				result.completeExceptionally(error);
			}
		});
		return result;
	}

	/**
	 * @return the connection's asynchronous commands, for commands besides scripts on that same
	 * connection (see {@link ReplicaAcknowledgements})
	 * @throws IllegalStateException before {@link #prepare()} found the connection
	 */
	RedisClusterAsyncCommands<byte[], byte[]> commands() {
		return connection();
	}

	private RedisClusterAsyncCommands<byte[], byte[]> connection() {
		RedisClusterAsyncCommands<byte[], byte[]> connection = this.commands;
		if (connection == null) {
			throw new IllegalStateException("No shared connection to " + this.description);
		}
		return connection;
	}

	/**
	 * The one NOSCRIPT fallback of both paths: EVAL sends the script's text, which loads it again.
	 * The blocking path sends it from the caller's thread while the caller still waits, never from a
	 * callback: a blocking caller that gave up (timeout, interrupt) has the engine undo what its call
	 * may have done, and an EVAL sent after that undo would take a hold nobody knows of. Only
	 * {@link #callAsync} and {@link #callBriefly} send it from a callback, for scripts whose late
	 * run is harmless (leaving a queue: it acts only on its own attempt, and is that attempt's last
	 * command).
	 */
	private static <T> RedisFuture<T> evalAfterNoScript(RedisClusterAsyncCommands<byte[], byte[]> connection,
			RedisScript<?> script, ScriptOutputType type, byte[][] keys, byte[][] args) {
		return connection.eval(script.getScriptAsString().getBytes(StandardCharsets.UTF_8), type, keys, args);
	}

	/** After SCRIPT FLUSH or a server restart: EVAL loads the script again. */
	private static boolean noScript(Throwable error) {
		return error != null && String.valueOf(error.getMessage()).startsWith("NOSCRIPT");
	}

	/**
	 * The factory replaced its shared connection (a stop and start, a reset): look the new one up at
	 * the next call instead of failing on the closed one for good.
	 */
	private void forgetClosedConnection(Throwable error) {
		if (error != null && String.valueOf(error.getMessage()).contains("Connection is closed")) {
			this.commands = null;
			this.lookedUp = false;
		}
	}

}
