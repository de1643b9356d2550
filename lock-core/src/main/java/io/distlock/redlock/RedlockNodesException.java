package io.distlock.redlock;

/**
 * The Redlock nodes cannot work as configured, and no retry would mend it: a node rejects the
 * credentials or the TLS handshake, or two entries reach one server. Thrown when the registry is
 * built.
 */
public class RedlockNodesException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	/**
	 * @param message which node (by address, never with credentials), what is wrong, what to do
	 * @param cause the failure that showed it, if any
	 */
	public RedlockNodesException(String message, Throwable cause) {
		super(message, cause);
	}

}
