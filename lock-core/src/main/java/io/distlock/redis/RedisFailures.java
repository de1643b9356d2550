package io.distlock.redis;

import java.net.ConnectException;
import java.net.UnknownHostException;
import java.security.cert.CertificateException;
import java.util.Locale;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;

/**
 * Tells a Redis failure by its real cause. Lettuce and Spring Data Redis wrap a rejected password,
 * an untrusted certificate and a refused connection alike in "Unable to connect to Redis", with the
 * cause several levels down; users need the cause, the node, and what to do.
 *
 * <p>Only exception types and Redis error codes are read, never a connection's URI, so no
 * password can reach the text.
 */
public final class RedisFailures {

	/** What went wrong, as far as the caller can act on it. */
	public enum Cause {

		/** The server rejected the user name or password (WRONGPASS, NOAUTH). */
		AUTHENTICATION,

		/** The user lacks a permission (NOPERM). */
		PERMISSION,

		/** The TLS handshake failed: an untrusted certificate, a plain port, a protocol mismatch. */
		TLS,

		/** Nothing accepts connections at the address, or its name does not resolve. */
		UNREACHABLE,

		/** Anything else: a timeout, a server error. */
		OTHER;

		/** @return whether retrying cannot help: the configuration is wrong */
		public boolean isMisconfiguration() {
			return this == AUTHENTICATION || this == PERMISSION || this == TLS;
		}

	}

	private RedisFailures() {
	}

	/**
	 * @param failure what a Redis call threw
	 * @return the cause it stands for
	 */
	public static Cause causeOf(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = next(cause)) {
			String message = String.valueOf(cause.getMessage());
			if (message.startsWith("WRONGPASS") || message.startsWith("NOAUTH") || message.contains(" WRONGPASS ")
					|| message.contains("invalid username-password")) {
				return Cause.AUTHENTICATION;
			}
			if (message.startsWith("NOPERM")) {
				return Cause.PERMISSION;
			}
			if (isTlsMisconfiguration(cause)) {
				return Cause.TLS;
			}
			if (cause instanceof ConnectException || cause instanceof UnknownHostException) {
				return Cause.UNREACHABLE;
			}
		}
		return Cause.OTHER;
	}

	/**
	 * @param failure what a Redis call threw
	 * @return whether it only says that the connection closed, without a cause the caller can act on;
	 * Lettuce reports a connection Redis closed after refusing the credentials that way at times, as
	 * "Connection closed prematurely" or, when the close wins the race with its connect listener (the
	 * handshake handler has left the pipeline by then), as "RedisHandshakeHandler not registered"
	 */
	public static boolean isConnectionClosedWithoutCause(Throwable failure) {
		if (causeOf(failure) != Cause.OTHER) {
			return false;
		}
		for (Throwable cause = failure; cause != null; cause = next(cause)) {
			String message = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
			if (message.contains("connection closed") || message.contains("closed prematurely")
					|| message.contains("redishandshakehandler not registered")) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Only what no retry mends: an untrusted or mismatched certificate, a TLS client on a plain port.
	 * A handshake cut short or timed out (an overloaded server, a load balancer) is not.
	 */
	private static boolean isTlsMisconfiguration(Throwable cause) {
		if (cause instanceof CertificateException
				|| cause.getClass().getName().equals("io.netty.handler.ssl.NotSslRecordException")) {
			return true;
		}
		if (!(cause instanceof SSLException)) {
			return false;
		}
		String message = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
		return message.contains("pkix") || message.contains("certificate") || message.contains("certification path")
				|| message.contains("subject alternative") || message.contains("unknown_ca");
	}

	/**
	 * @param failure what a Redis call threw
	 * @param node the server it went to, e.g. {@code 10.0.0.1:6379} (never a URI with credentials)
	 * @return one sentence naming the node, the real cause, and what to do
	 */
	public static String explain(Throwable failure, String node) {
		Throwable root = innermost(failure);
		return switch (causeOf(failure)) {
			case AUTHENTICATION -> "Redis at " + node + " rejected the credentials (" + firstWord(failure)
					+ "): check the user name and password (spring.data.redis.username/password, or user:password in "
					+ "the Redlock node's URI) and that the ACL user is enabled";
			case PERMISSION -> "Redis at " + node + " denied a command to this user (" + redisError(failure, "NOPERM")
					+ "): grant the ACL permissions listed in docs/redis.md";
			case TLS -> "The TLS handshake with Redis at " + node + " failed (" + tlsReason(failure) + ")";
			case UNREACHABLE -> "Nothing accepts connections at " + node + " (" + root.getClass().getSimpleName()
					+ (root.getMessage() != null ? ": " + root.getMessage() : "") + "): check that Redis runs there "
					+ "and that host and port are right";
			case OTHER -> "Redis at " + node + " failed: " + summary(failure);
		};
	}

	private static String tlsReason(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = next(cause)) {
			if (cause.getClass().getName().equals("io.netty.handler.ssl.NotSslRecordException")) {
				return "the server did not answer in TLS: use redis:// for a plain port, or the server's tls-port";
			}
			String message = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
			if (message.contains("pkix") || message.contains("unable to find valid certification path")
					|| message.contains("certificate_unknown") || cause instanceof CertificateException) {
				return "its certificate is not trusted: name a trust store with distlock.redlock.ssl.bundle or "
						+ "spring.data.redis.ssl.bundle (spring.ssl.bundle.*)";
			}
			if (message.contains("no subject alternative") || message.contains("hostname")) {
				return "its certificate does not name the host connected to: connect by a name the certificate lists";
			}
			if (cause instanceof SSLHandshakeException && cause.getMessage() != null) {
				return cause.getMessage();
			}
		}
		return summary(failure);
	}

	private static String firstWord(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = next(cause)) {
			String message = String.valueOf(cause.getMessage());
			if (message.startsWith("WRONGPASS") || message.startsWith("NOAUTH")) {
				return message.split(" ", 2)[0];
			}
		}
		return "authentication failed";
	}

	private static String redisError(Throwable failure, String code) {
		for (Throwable cause = failure; cause != null; cause = next(cause)) {
			if (String.valueOf(cause.getMessage()).startsWith(code)) {
				return cause.getMessage();
			}
		}
		return code;
	}

	private static String summary(Throwable failure) {
		Throwable root = innermost(failure);
		String message = (root.getMessage() != null) ? root.getMessage() : root.getClass().getSimpleName();
		return (root == failure || failure.getMessage() == null) ? message : failure.getMessage() + "; cause: " + message;
	}

	private static Throwable innermost(Throwable failure) {
		Throwable root = failure;
		while (next(root) != null) {
			root = next(root);
		}
		return root;
	}

	private static Throwable next(Throwable cause) {
		return (cause.getCause() != cause) ? cause.getCause() : null;
	}

}
