package io.distlock.core;

import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where this client's threads wait for locks. One room per lock name that has waiters, holding them
 * in arrival order; only the head of the queue talks to the backend, and a release wakes only the
 * head. Without this, every release would wake every waiting thread of every client, each making a
 * round trip that all but one lose, and the releasing thread would usually barge back in first.
 * Where the backend hands a released lock to a queued owner ({@link LockNotice.Granted}), the
 * grant goes to that owner's waiter directly, wherever it stands in the room.
 *
 * <p>One backend subscription per room, closed when the last waiter leaves, so that waiting on a
 * million different names over time leaves nothing behind.
 */
final class ReleaseWaits {

	private static final Logger log = LoggerFactory.getLogger(ReleaseWaits.class);

	/** Stops the subscriber thread of a registry that was never closed, once it is unreachable. */
	private static final Cleaner CLEANER = Cleaner.create(runnable -> {
		Thread thread = new Thread(runnable, "distlock-waits-cleaner");
		thread.setDaemon(true);
		return thread;
	});

	private final LockBackend backend;

	private final String clientId;

	private final String ownOwnerPrefix;

	/**
	 * Changed, and the rooms' member counts read, only under its monitor; looked up without it, as
	 * every uncontended lock() and unlock() asks whether a room exists.
	 */
	private final Map<LockId.RoomKey, WaitingRoom> rooms = new ConcurrentHashMap<>();

	/**
	 * Subscribes and unsubscribes, one at a time and in the order asked: a SUBSCRIBE can stall for the
	 * connection's command timeout, and no waiting thread may be held past its deadline by it. Its
	 * thread is started up front and its queue takes tasks without a lock, so handing it a task never
	 * parks the waiting thread: an Error raised where that thread parked (BlockHound's) would stop the
	 * hand-off half-way, and the subscriber would sleep through every task after it.
	 */
	private final ThreadPoolExecutor subscriptions;

	ReleaseWaits(LockBackend backend, String clientId) {
		this.backend = backend;
		this.clientId = clientId;
		this.ownOwnerPrefix = clientId + ":";
		this.subscriptions = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedTransferQueue<>(), runnable -> {
			Thread thread = new Thread(runnable, "distlock-subscriber-" + clientId.substring(0, Math.min(8, clientId.length())));
			thread.setDaemon(true);
			return thread;
		});
		this.subscriptions.prestartCoreThread();
		// A registry never closed must not leave the thread behind (a thread started on demand by
		// Executors' single-thread executor would also have ended once the executor was unreachable).
		CLEANER.register(this, this.subscriptions::shutdownNow);
	}

	/**
	 * Queues the calling thread in the lock's room; a new room subscribes to the lock's releases in
	 * the background. Never blocks: until the subscription is effective, {@link Waiter#subscribed()}
	 * is false and the waiter polls; when it becomes effective, the head looks once more, for a release
	 * announced before.
	 */
	Waiter enter(LockId id, String owner, String ticket) {
		return enter(id, owner, ticket, Thread.currentThread(), null);
	}

	/**
	 * As {@link #enter(LockId, String, String)}, for a waiter that waits without a thread.
	 * @param onWake run (under the room's guard, so it must only hand work on) whenever the waiter
	 * would have been woken: a hand-off, its turn to try, the registry closing
	 */
	Waiter enter(LockId id, String owner, String ticket, Runnable onWake) {
		return enter(id, owner, ticket, null, onWake);
	}

	private Waiter enter(LockId id, String owner, String ticket, Thread thread, Runnable onWake) {
		LockId.RoomKey key = id.room();
		WaitingRoom room;
		boolean first;
		synchronized (this.rooms) {
			room = this.rooms.get(key);
			first = room == null;
			if (first) {
				room = new WaitingRoom(key);
				this.rooms.put(key, room);
			}
			room.members++;
		}
		Waiter waiter = room.join(id, owner, ticket, thread, onWake);
		if (first) {
			WaitingRoom subscribing = room;
			try {
				inBackground(() -> subscribing.subscribe(this.backend, this.clientId, this.ownOwnerPrefix));
			}
			catch (RuntimeException | Error ex) {
				// The caller never gets the waiter to leave with: it leaves here, or the room stays forever.
				CleanUp.after(ex, () -> leave(waiter));
				throw ex;
			}
		}
		return waiter;
	}

	/** Leaves the queue; the next waiter gets its turn, and the last one out unsubscribes. */
	void leave(Waiter waiter) {
		WaitingRoom room = waiter.room;
		try {
			room.remove(waiter);
		}
		finally {
			// Counted out even if waking the next waiter failed: else the room stayed for good.
			boolean last;
			synchronized (this.rooms) {
				last = --room.members == 0;
				if (last) {
					this.rooms.remove(room.key, room);
				}
			}
			if (last) {
				// Queued behind the room's SUBSCRIBE, so it never overtakes it.
				inBackground(room::unsubscribe);
			}
		}
	}

	private void inBackground(Runnable task) {
		try {
			this.subscriptions.execute(() -> {
				try {
					task.run();
				}
				catch (RuntimeException | Error ex) {
					// The thread must live on: a new one would be started on the thread that next hands a
					// task on, which may not park, and would run that task ahead of those already queued.
					log.warn("A subscription task of the lock waits failed", ex);
				}
			});
		}
		catch (RejectedExecutionException closed) {
			// The registry closed: its subscriber is gone, and its waiters poll until they find it closed.
		}
	}

	/**
	 * A thread of this client released the lock. Waiters that get no release messages (the backend
	 * has none, or subscribing failed) are woken directly; subscribed ones hear the message anyway.
	 */
	void releasedLocally(LockId.RoomKey key) {
		WaitingRoom room = this.rooms.get(key);
		if (room != null && !room.subscribed()) {
			room.signal();
		}
	}

	/** @return whether threads of this client are queued for the lock; newcomers then queue too */
	boolean hasWaiters(LockId.RoomKey key) {
		return this.rooms.containsKey(key);
	}

	/**
	 * @return per lock, how many threads wait for it now; a read-write lock or a semaphore by its
	 * {@linkplain LockId.RoomKey#displayName() display name}
	 */
	Map<String, Integer> waiters() {
		synchronized (this.rooms) {
			Map<String, Integer> snapshot = new TreeMap<>();
			this.rooms.forEach((key, room) -> snapshot.put(key.displayName(), room.members));
			return snapshot;
		}
	}

	/** @return how many threads wait now, over all lock names (a gauge; no snapshot copied) */
	int waitingThreads() {
		synchronized (this.rooms) {
			int threads = 0;
			for (WaitingRoom room : this.rooms.values()) {
				threads += room.members;
			}
			return threads;
		}
	}

	/**
	 * The client closes: every waiting attempt is taken out of its backend queue (so that no further
	 * hold is handed to a client that is going away) and woken, to find the registry closed. A hold
	 * handed to a waiter before it left the queue is that waiter's: it gives it back itself.
	 * @param dequeue called with each waiting attempt
	 */
	void closeAll(Consumer<Waiter> dequeue) {
		List<WaitingRoom> open;
		synchronized (this.rooms) {
			open = new ArrayList<>(this.rooms.values());
		}
		try {
			for (WaitingRoom room : open) {
				room.waiters().forEach(dequeue);
				room.wakeAll();
			}
		}
		finally {
			this.subscriptions.shutdownNow();
		}
	}

	/** @return how many lock names have waiters now */
	int size() {
		synchronized (this.rooms) {
			return this.rooms.size();
		}
	}

	/** What a waiter woke up to. */
	enum Turn {
		/** The backend handed the lock to this waiter's owner: it holds it now. */
		GRANTED,
		/** This waiter is the head and may try the lock now. */
		TRY,
		/** Not this waiter's turn (yet); it goes on waiting. */
		WAIT
	}

}
