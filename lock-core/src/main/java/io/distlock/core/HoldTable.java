package io.distlock.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.distlock.HoldKind;
import io.distlock.LostHold;

/**
 * This client's holds, one per lock name and owner, with their reentrant counts; the explicit
 * leases that ran out before their owner released them (their owner's {@code unlock()} still
 * learns of it); and the reporting of lost holds to the log and the {@code LockListener}s.
 */
final class HoldTable {

	private static final Logger log = LoggerFactory.getLogger(HoldTable.class);

	private final ConcurrentHashMap<HoldKey, Hold> holds = new ConcurrentHashMap<>();

	/** Explicit-lease holds whose lease ran out before their live owner released them; reported lost. */
	private final ConcurrentHashMap<HoldKey, Hold> expired = new ConcurrentHashMap<>();

	private final AtomicLong lostHolds = new AtomicLong();

	/** The calling thread's last {@link #key} answer. */
	private final ThreadLocal<HoldKey> lastKey = new ThreadLocal<>();

	private final LockEngineOptions options;

	private final ListenerNotifier listeners;

	HoldTable(LockEngineOptions options, ListenerNotifier listeners) {
		this.options = options;
		this.listeners = listeners;
	}

	/**
	 * The key of the owner's hold of the lock. A thread asks about the same hold when it locks, when
	 * it unlocks and in between, so its last key is kept (a record, immutable, confined to the
	 * thread) rather than one allocated per call.
	 */
	HoldKey key(String name, HoldKind kind, String owner) {
		HoldKey last = this.lastKey.get();
		if (last != null && last.kind() == kind && last.name().equals(name) && last.owner().equals(owner)) {
			return last;
		}
		HoldKey key = new HoldKey(name, kind, owner);
		this.lastKey.set(key);
		return key;
	}

	/** @return the owner's hold of the lock, or {@code null} */
	Hold get(HoldKey key) {
		return this.holds.get(key);
	}

	/** @return the owner's reentrant count of the lock; 0 if it does not hold it */
	int count(String name, HoldKind kind, String owner) {
		Hold hold = get(key(name, kind, owner));
		return (hold != null) ? hold.count() : 0;
	}

	/**
	 * @return whether the owner holds any hold of the lock's family: a read-write lock's reader or
	 * writer may re-enter, or downgrade, past this client's waiters (who may be waiting for it)
	 */
	boolean holdsAny(String name, HoldKind.Family family, String owner) {
		for (HoldKind kind : HoldKind.values()) {
			if (kind.family() == family && holds(name, kind, owner)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * @return whether the owner holds a hold of this kind; unlike {@link #key}, it leaves the thread's
	 * last key as it was, since the thread is after another hold
	 */
	boolean holds(String name, HoldKind kind, String owner) {
		return this.holds.containsKey(new HoldKey(name, kind, owner));
	}

	/** Records a new hold; it must be confirmed first, since the watchdog may see it at once. */
	void put(HoldKey key, Hold hold) {
		this.holds.put(key, hold);
	}

	void forEach(Consumer<Hold> action) {
		this.holds.values().forEach(action);
	}

	int size() {
		return this.holds.size();
	}

	long lostHolds() {
		return this.lostHolds.get();
	}

	/**
	 * @return the owner's explicit lease that ran out before it was unlocked, or {@code null}. Its
	 * owner may take the lock anew meanwhile; once that hold is unlocked, the next unlock() is this
	 * one's, and says it was lost.
	 */
	Hold expiredOf(HoldKey key) {
		return this.expired.get(key);
	}

	/**
	 * One unlock() of an explicit lease that ran out: one of its levels is no longer kept, the last
	 * one not at all.
	 * @return the hold, or {@code null} if the owner had none that ran out
	 */
	Hold takeExpiredLevel(HoldKey key) {
		Hold[] taken = new Hold[1];
		this.expired.computeIfPresent(key, (ignored, hold) -> {
			taken[0] = hold;
			int held = hold.count();
			if (held > 1) {
				hold.count(held - 1);
				return hold;
			}
			return null;
		});
		return taken[0];
	}

	void forgetExpired(HoldKey key, Hold hold) {
		this.expired.remove(key, hold);
	}

	/** Drops one reentrant level of a hold; the last one removes it. */
	void dropOneLevel(HoldKey key, Hold hold, int held) {
		if (held > 1) {
			hold.count(held - 1);
		}
		else {
			this.holds.remove(key, hold);
		}
	}

	/**
	 * What the watchdog renews at each tick, after tidying the table: holds of threads that died are
	 * dropped (they expire after their lease, as after a crash), and explicit leases that ran out
	 * unreleased are reported lost and set aside (their owner's unlock() still learns of it), so that
	 * neither stays listed or blocks the next acquisition of its owner.
	 */
	List<Hold> renewable() {
		long now = System.nanoTime();
		List<Hold> renewable = new ArrayList<>();
		for (Hold hold : this.holds.values()) {
			if (hold.releasing()) {
				continue;
			}
			if (!hold.ownerThreadAlive()) {
				dropOrphan(hold);
			}
			else if (!hold.watchdog) {
				if (hold.lost() == null && !hold.confirmedAt(now)) {
					expire(hold);
				}
			}
			else if (hold.lost() == null) {
				renewable.add(hold);
			}
		}
		this.expired.values().removeIf(hold -> !hold.ownerThreadAlive());
		return renewable;
	}

	private void expire(Hold hold) {
		HoldKey key = new HoldKey(hold.name, hold.kind, hold.owner);
		// Set aside before the hold is claimed: an owner whose last unlock() loses that race must find
		// it there to forget it (Unlocking), or it would stay for the thread's whole life.
		this.expired.put(key, hold);
		// Unless its owner is releasing it right now: then the release decides.
		if (!hold.end(Hold.Ending.EXPIRED)) {
			this.expired.remove(key, hold);
			return;
		}
		// Marked lost before it leaves the table: its owner's unlock() learns of the loss either way.
		markLost(hold, "its explicit lease ran out before unlock");
		this.holds.remove(key, hold);
	}

	private void dropOrphan(Hold hold) {
		if (this.holds.remove(new HoldKey(hold.name, hold.kind, hold.owner), hold)) {
			log.warn("Thread '{}' died holding lock '{}' (owner {}); it is no longer renewed and expires within {}",
					hold.threadName(), hold.name, hold.owner,
					hold.watchdog ? this.options.watchdogTimeout() : "its lease");
		}
	}

	/**
	 * The backend found holds lost by itself: each is reported now, and its owner's unlock() (or
	 * re-entry) says so, whether the watchdog renews it or it has an explicit lease.
	 */
	void lostInBackend(List<LockBackend.HoldRef> refs, String reason) {
		for (LockBackend.HoldRef ref : refs) {
			Hold hold = this.holds.get(new HoldKey(ref.name(), ref.kind(), ref.owner()));
			if (hold != null && !hold.releasing()) {
				markLost(hold, reason);
			}
		}
	}

	LostHold markLost(Hold hold, String reason) {
		LostHold lost = new LostHold(hold.name, hold.owner, hold.issuedToken(), this.options.clock().instant(), reason,
				hold.kind);
		if (!hold.markLost(lost)) {
			return hold.lost();
		}
		this.lostHolds.incrementAndGet();
		log.warn("{} held by {} (thread '{}'{}) was lost: {}", LockId.capitalized(hold.kind.describe(hold.name)), hold.owner,
				hold.threadName(),
				(hold.origin() != null) ? ", in " + hold.origin() : "", reason);
		this.listeners.holdLost(lost);
		return lost;
	}

	/** A lock name, a kind and an owner: the key of one hold. */
	record HoldKey(String name, HoldKind kind, String owner) {
	}

}
