package io.distlock.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
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

	private final LockBackend backend;

	private final String ownOwnerPrefix;

	private final Map<String, Room> rooms = new HashMap<>();

	/**
	 * Subscribes and unsubscribes, one at a time and in the order asked: a SUBSCRIBE can stall for the
	 * connection's command timeout, and no waiting thread may be held past its deadline by it.
	 */
	private final ExecutorService subscriptions;

	ReleaseWaits(LockBackend backend, String clientId) {
		this.backend = backend;
		this.ownOwnerPrefix = clientId + ":";
		this.subscriptions = Executors.newSingleThreadExecutor(runnable -> {
			Thread thread = new Thread(runnable, "distlock-subscriber-" + clientId.substring(0, Math.min(8, clientId.length())));
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * Queues the calling thread in the lock's room; a new room subscribes to the lock's releases in
	 * the background. Never blocks: until the subscription is effective, {@link Waiter#subscribed()}
	 * is false and the waiter polls; when it becomes effective, the head looks once more, for a release
	 * announced before.
	 */
	Waiter enter(String name, String owner, String ticket) {
		return enter(name, owner, ticket, null);
	}

	/**
	 * As {@link #enter(String, String, String)}, for a waiter that waits without a thread.
	 * @param onWake run (under the room's lock, so it must only hand work on) whenever the waiter
	 * would have been woken: a hand-off, its turn to try, the registry closing
	 */
	Waiter enter(String name, String owner, String ticket, Runnable onWake) {
		Room room;
		boolean first;
		synchronized (this.rooms) {
			room = this.rooms.get(name);
			first = room == null;
			if (first) {
				room = new Room(name);
				this.rooms.put(name, room);
			}
			room.members++;
		}
		Waiter waiter = room.join(owner, ticket, onWake);
		if (first) {
			Room subscribing = room;
			inBackground(() -> subscribing.subscribe(this.backend, this.ownOwnerPrefix));
		}
		return waiter;
	}

	/** Leaves the queue; the next waiter gets its turn, and the last one out unsubscribes. */
	void leave(Waiter waiter) {
		Room room = waiter.room;
		room.remove(waiter);
		synchronized (this.rooms) {
			if (--room.members > 0) {
				return;
			}
			this.rooms.remove(room.name, room);
		}
		// Queued behind the room's SUBSCRIBE, so it never overtakes it.
		inBackground(room::unsubscribe);
	}

	private void inBackground(Runnable task) {
		try {
			this.subscriptions.execute(task);
		}
		catch (RejectedExecutionException closed) {
			// The registry closed: its subscriber is gone, and its waiters poll until they find it closed.
		}
	}

	/**
	 * A thread of this client released the lock. Waiters that get no release messages (the backend
	 * has none, or subscribing failed) are woken directly; subscribed ones hear the message anyway.
	 */
	void releasedLocally(String name) {
		Room room;
		synchronized (this.rooms) {
			room = this.rooms.get(name);
		}
		if (room != null && !room.subscribed()) {
			room.signal();
		}
	}

	/** @return whether threads of this client are queued for the lock; newcomers then queue too */
	boolean hasWaiters(String name) {
		synchronized (this.rooms) {
			return this.rooms.containsKey(name);
		}
	}

	/** @return per lock name, how many threads wait for it now */
	Map<String, Integer> waiters() {
		synchronized (this.rooms) {
			Map<String, Integer> snapshot = new TreeMap<>();
			this.rooms.forEach((name, room) -> snapshot.put(name, room.members));
			return snapshot;
		}
	}

	/** @return how many threads wait now, over all lock names (a gauge; no snapshot copied) */
	int waitingThreads() {
		synchronized (this.rooms) {
			int threads = 0;
			for (Room room : this.rooms.values()) {
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
		List<Room> open;
		synchronized (this.rooms) {
			open = new ArrayList<>(this.rooms.values());
		}
		for (Room room : open) {
			room.waiters().forEach(dequeue);
			room.wakeAll();
		}
		this.subscriptions.shutdownNow();
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

	/** One thread's place in a room's queue. */
	static final class Waiter {

		private final Room room;

		private final String owner;

		/** The waiting attempt's ticket: a hand-off naming another attempt of this owner is not for it. */
		private final String ticket;

		private final Condition turn;

		/** For a waiter without a thread: what wakes it. */
		private final Runnable onWake;

		/** Set when this waiter, at the head, should try the lock now. Guarded by the room's lock. */
		private boolean mustTry;

		/** The fencing token of a hold handed to this waiter, or null. Guarded by the room's lock. */
		private Long grantedToken;

		Waiter(Room room, String owner, String ticket, Runnable onWake) {
			this.room = room;
			this.owner = owner;
			this.ticket = ticket;
			this.turn = room.lock.newCondition();
			this.onWake = onWake;
		}

		/** Wakes the waiting thread, or hands the wake-up on. Called under the room's lock. */
		private void wake() {
			this.turn.signal();
			if (this.onWake != null) {
				this.onWake.run();
			}
		}

		/**
		 * What {@link #awaitTurn(long)} would answer at once, without waiting: for a waiter without a
		 * thread, which comes back here when it is woken or its own timer runs out.
		 */
		Turn turnNow() {
			this.room.lock.lock();
			try {
				if (this.grantedToken != null) {
					return Turn.GRANTED;
				}
				this.mustTry = false;
				return (this.room.queue.peekFirst() == this) ? Turn.TRY : Turn.WAIT;
			}
			finally {
				this.room.lock.unlock();
			}
		}

		/** @return whether something happened that {@link #awaitTurn(long)} would have woken up for */
		boolean woken() {
			this.room.lock.lock();
			try {
				return this.mustTry || this.grantedToken != null;
			}
			finally {
				this.room.lock.unlock();
			}
		}

		/**
		 * Sleeps until the lock is handed to this waiter, until it is its turn to try (it became the
		 * head, or a release was announced while it was the head) or until {@code nanos} passed.
		 * @return what woke it
		 */
		Turn awaitTurn(long nanos) throws InterruptedException {
			return this.room.awaitTurn(this, nanos);
		}

		/** @return the fencing token of the hold handed to this waiter (valid after {@link Turn#GRANTED}) */
		long grantedToken() {
			this.room.lock.lock();
			try {
				return this.grantedToken;
			}
			finally {
				this.room.lock.unlock();
			}
		}

		/** @return whether release notifications reach this waiter's room */
		boolean subscribed() {
			return this.room.subscribed();
		}

		/** Forgets a hand-off this waiter did not take up as it was (it confirms it with the backend instead). */
		void forgetGrant() {
			this.room.lock.lock();
			try {
				this.grantedToken = null;
			}
			finally {
				this.room.lock.unlock();
			}
		}

		/** @return the lock's name */
		String name() {
			return this.room.name;
		}

		/** @return the waiting owner's id */
		String owner() {
			return this.owner;
		}

		/** @return the waiting attempt's ticket */
		String ticket() {
			return this.ticket;
		}

	}

	/** The waiters of one lock name in this client. */
	static final class Room {

		private final String name;

		private final ReentrantLock lock = new ReentrantLock();

		private final ArrayDeque<Waiter> queue = new ArrayDeque<>();

		/** Threads between enter and leave; guarded by the rooms map. */
		private int members;

		private AutoCloseable subscription;

		Room(String name) {
			this.name = name;
		}

		Waiter join(String owner, String ticket, Runnable onWake) {
			this.lock.lock();
			try {
				Waiter waiter = new Waiter(this, owner, ticket, onWake);
				waiter.mustTry = this.queue.isEmpty();
				this.queue.addLast(waiter);
				return waiter;
			}
			finally {
				this.lock.unlock();
			}
		}

		void remove(Waiter waiter) {
			this.lock.lock();
			try {
				boolean wasHead = this.queue.peekFirst() == waiter;
				this.queue.remove(waiter);
				Waiter next = this.queue.peekFirst();
				if (wasHead && next != null) {
					// The old head may have consumed a release it did not use; the new head must look.
					next.mustTry = true;
					next.wake();
				}
			}
			finally {
				this.lock.unlock();
			}
		}

		List<Waiter> waiters() {
			this.lock.lock();
			try {
				return List.copyOf(this.queue);
			}
			finally {
				this.lock.unlock();
			}
		}

		void wakeAll() {
			this.lock.lock();
			try {
				for (Waiter waiter : this.queue) {
					waiter.mustTry = true;
					waiter.wake();
				}
			}
			finally {
				this.lock.unlock();
			}
		}

		/** A release of the lock was announced: the head tries again. */
		void signal() {
			this.lock.lock();
			try {
				Waiter head = this.queue.peekFirst();
				if (head != null) {
					head.mustTry = true;
					head.wake();
				}
			}
			finally {
				this.lock.unlock();
			}
		}

		/**
		 * The backend handed the lock to {@code owner}'s attempt {@code ticket}: that waiter, if still
		 * here, holds it now. A later attempt of the same thread is not it: the message may have been
		 * on its way while the earlier attempt gave up and passed the lock on.
		 */
		void grant(String owner, String ticket, long token) {
			this.lock.lock();
			try {
				for (Waiter waiter : this.queue) {
					if (waiter.owner.equals(owner) && waiter.ticket.equals(ticket)) {
						waiter.grantedToken = token;
						waiter.wake();
						return;
					}
				}
				// Gone already: its leaving passes the hold on (LockBackend#leaveQueue).
			}
			finally {
				this.lock.unlock();
			}
		}

		Turn awaitTurn(Waiter waiter, long nanos) throws InterruptedException {
			this.lock.lockInterruptibly();
			try {
				long left = nanos;
				while (!waiter.mustTry && waiter.grantedToken == null && left > 0) {
					left = waiter.turn.awaitNanos(left);
				}
				if (waiter.grantedToken != null) {
					return Turn.GRANTED;
				}
				waiter.mustTry = false;
				return (this.queue.peekFirst() == waiter) ? Turn.TRY : Turn.WAIT;
			}
			finally {
				this.lock.unlock();
			}
		}

		boolean subscribed() {
			this.lock.lock();
			try {
				return this.subscription != null;
			}
			finally {
				this.lock.unlock();
			}
		}

		private void subscribe(LockBackend backend, String ownOwnerPrefix) {
			AutoCloseable result = null;
			try {
				result = backend.subscribe(this.name, notice -> onNotice(notice, ownOwnerPrefix));
			}
			catch (RuntimeException ex) {
				log.warn("Could not subscribe to releases of lock '{}'; its waiters poll instead: {}",
						this.name, ex.toString());
			}
			this.lock.lock();
			try {
				this.subscription = result;
			}
			finally {
				this.lock.unlock();
			}
			if (result != null) {
				// A release announced before the subscription was effective was missed: the head looks.
				signal();
			}
		}

		private void onNotice(LockNotice notice, String ownOwnerPrefix) {
			if (notice instanceof LockNotice.Granted granted) {
				// Handed to another client's owner: nothing to wake for here.
				if (granted.owner().startsWith(ownOwnerPrefix)) {
					grant(granted.owner(), granted.ticket(), granted.token());
				}
			}
			else if (!(notice instanceof LockNotice.Abandoned abandoned && abandoned.owner().startsWith(ownOwnerPrefix))) {
				// An attempt this client abandoned itself frees nothing this client is waiting for.
				signal();
			}
		}

		private void unsubscribe() {
			AutoCloseable closing;
			this.lock.lock();
			try {
				closing = this.subscription;
				this.subscription = null;
			}
			finally {
				this.lock.unlock();
			}
			if (closing != null) {
				try {
					closing.close();
				}
				catch (Exception ex) {
					log.debug("Could not unsubscribe from releases of lock '{}'", this.name, ex);
				}
			}
		}

	}

}
