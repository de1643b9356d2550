package io.distlock.core;

/**
 * Whether the engine has closed, as each acquisition checks before and after its backend calls
 * (a hold won after the close would be neither renewed nor reported lost), and what the caller of
 * a closed registry is told. Set once, by {@link LockEngine#close()}.
 */
final class ClosedState {

	private final String clientId;

	private volatile boolean closed;

	ClosedState(String clientId) {
		this.clientId = clientId;
	}

	boolean isClosed() {
		return this.closed;
	}

	void close() {
		this.closed = true;
	}

	IllegalStateException exception(String name) {
		return new IllegalStateException("Lock registry of client " + this.clientId
				+ " is closed; cannot acquire lock '" + name + "'");
	}

}
