package io.distlock.core;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.HoldKind;

/**
 * The waiters of one lock name in this client, in arrival order, with the lock's one subscription to
 * the backend's notices; part of {@link ReleaseWaits}.
 */
final class WaitingRoom {

	private static final Logger log = LoggerFactory.getLogger(WaitingRoom.class);

	/** The lock's name and family: a read-write lock's readers and writers wait in one room. */
	final LockId.RoomKey key;

	/** The lock's name, for messages. */
	final String name;

	/**
	 * Guards the queue and its waiters' state; held briefly, never while blocking. A monitor rather
	 * than a {@code ReentrantLock}: waiting for a monitor never parks in Java code, so an Error raised
	 * where threads park (BlockHound's, on a thread that must not block) cannot fail a waiter's
	 * leaving half-way, which would keep it in the room for good. On JDK 17 such an Error would also
	 * leave the lock's own queue with a node nobody wakes.
	 */
	final Object guard = new Object();

	final ArrayDeque<Waiter> queue = new ArrayDeque<>();

	/** Threads between enter and leave; guarded by the rooms map. */
	int members;

	AutoCloseable subscription;

	WaitingRoom(LockId.RoomKey key) {
		this.key = key;
		this.name = key.name();
	}

	Waiter join(LockId id, String owner, String ticket, Thread thread, Runnable onWake) {
		synchronized (this.guard) {
			Waiter waiter = new Waiter(this, id, owner, ticket, thread, onWake);
			waiter.mustTry = this.queue.isEmpty();
			this.queue.addLast(waiter);
			return waiter;
		}
	}

	void remove(Waiter waiter) {
		synchronized (this.guard) {
			boolean wasHead = this.queue.peekFirst() == waiter;
			this.queue.remove(waiter);
			Waiter next = this.queue.peekFirst();
			if (wasHead && next != null) {
				// The old head may have consumed a release it did not use; the new head must look.
				next.mustTry = true;
				next.wake();
			}
		}
	}

	List<Waiter> waiters() {
		synchronized (this.guard) {
			return List.copyOf(this.queue);
		}
	}

	void wakeAll() {
		synchronized (this.guard) {
			for (Waiter waiter : this.queue) {
				waiter.mustTry = true;
				waiter.wake();
			}
		}
	}

	/** A release of the lock was announced: the head tries again. */
	void signal() {
		synchronized (this.guard) {
			Waiter head = this.queue.peekFirst();
			if (head != null) {
				head.mustTry = true;
				head.wake();
			}
		}
	}

	/**
	 * The backend handed the lock to {@code owner}'s attempt {@code ticket}: that waiter, if still
	 * here, holds it now. A later attempt of the same thread is not it: the message may have been
	 * on its way while the earlier attempt gave up and passed the lock on.
	 */
	void grant(String owner, String ticket, long token) {
		synchronized (this.guard) {
			for (Waiter waiter : this.queue) {
				if (waiter.owner.equals(owner) && waiter.ticket.equals(ticket)) {
					waiter.grantedToken = token;
					waiter.wake();
					return;
				}
			}
			// Gone already: its leaving passes the hold on (LockBackend#leaveQueue).
		}
	}

	/**
	 * Parks the waiter's thread, holding no lock while it is parked, until it is handed the lock, its
	 * turn comes or {@code nanos} pass.
	 */
	ReleaseWaits.Turn awaitTurn(Waiter waiter, long nanos) throws InterruptedException {
		// Wraps around for Long.MAX_VALUE; only differences to nanoTime are compared.
		long until = System.nanoTime() + nanos;
		long left = nanos;
		while (true) {
			if (Thread.interrupted()) {
				throw new InterruptedException("Interrupted while waiting for lock '" + this.name + "'");
			}
			synchronized (this.guard) {
				if (waiter.grantedToken != null) {
					return ReleaseWaits.Turn.GRANTED;
				}
				if (waiter.mustTry || left <= 0) {
					waiter.mustTry = false;
					return (this.queue.peekFirst() == waiter) ? ReleaseWaits.Turn.TRY : ReleaseWaits.Turn.WAIT;
				}
			}
			LockSupport.parkNanos(this, left);
			left = until - System.nanoTime();
		}
	}

	boolean subscribed() {
		synchronized (this.guard) {
			return this.subscription != null;
		}
	}

	void subscribe(LockBackend backend, String clientId, String ownOwnerPrefix) {
		AutoCloseable result = null;
		try {
			result = (this.key.family() == HoldKind.Family.LOCK)
					? backend.subscribe(this.name, clientId, notice -> onNotice(notice, ownOwnerPrefix))
					: backend.subscribe(this.name, this.key.family(), clientId, notice -> onNotice(notice, ownOwnerPrefix));
		}
		catch (RuntimeException ex) {
			log.warn("Could not subscribe to releases of lock '{}'; its waiters poll instead: {}",
					this.name, ex.toString());
		}
		synchronized (this.guard) {
			this.subscription = result;
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

	void unsubscribe() {
		AutoCloseable closing;
		synchronized (this.guard) {
			closing = this.subscription;
			this.subscription = null;
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
