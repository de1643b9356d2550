package io.distlock.core;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.LockListener;
import io.distlock.LostHold;

/**
 * Tells the {@link LockListener}s on a thread of their own, in order. Losses are found on the
 * watchdog's thread; a slow listener (one that publishes an event, calls out, logs remotely) must
 * not delay the renewals and hand-off extensions every other hold depends on.
 */
final class ListenerNotifier implements AutoCloseable {

	private static final Logger log = LoggerFactory.getLogger(ListenerNotifier.class);

	private final List<LockListener> listeners;

	private final ExecutorService thread;

	ListenerNotifier(String clientId, List<LockListener> listeners) {
		this.listeners = listeners;
		this.thread = Executors.newSingleThreadExecutor(runnable -> {
			Thread notifier = new Thread(runnable, "distlock-listeners-" + clientId.substring(0, Math.min(8, clientId.length())));
			notifier.setDaemon(true);
			return notifier;
		});
	}

	void holdLost(LostHold lost) {
		notifyAll("lost lock '" + lost.lockName() + "'", listener -> listener.holdLost(lost));
	}

	void renewalFailed(List<String> names, RuntimeException cause) {
		notifyAll("a renewal failure", listener -> listener.renewalFailed(names, cause));
	}

	private void notifyAll(String what, Consumer<LockListener> call) {
		if (this.listeners.isEmpty()) {
			return;
		}
		try {
			this.thread.execute(() -> {
				for (LockListener listener : this.listeners) {
					try {
						call.accept(listener);
					}
					catch (RuntimeException ex) {
						log.error("LockListener {} failed on {}", listener, what, ex);
					}
				}
			});
		}
		catch (RejectedExecutionException closed) {
			log.debug("Registry closed; listeners not told of {}", what);
		}
	}

	/** Lets what was already reported reach the listeners, then ends the thread. */
	@Override
	public void close() {
		this.thread.shutdown();
	}

}
