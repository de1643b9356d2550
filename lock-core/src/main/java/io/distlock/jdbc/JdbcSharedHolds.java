package io.distlock.jdbc;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import io.distlock.HoldKind;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.HoldRef;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.ReleaseRequest;

/**
 * The table lock's read, write and permit holds, in a table of their own ({@code <table>_shared}):
 * one row per holder and kind, beside one <em>anchor</em> row per read-write lock or semaphore
 * ({@code holder = ''}) that carries a semaphore's permits and the intent of a waiting writer.
 *
 * <p>Every acquisition and release is one transaction that first locks the anchor row: under it,
 * the holder rows are read with a lock too (a renewal in flight must be waited for, or a holder it
 * extends could be taken for expired), holders whose lease ran out by the database's clock are
 * deleted, and the decision is made. Renewals extend only rows that still last, one statement each,
 * and never lock an anchor: extending a live hold changes no decision, and a renewal that holds one
 * row while it waits for another could close a cycle with acquisitions.
 *
 * <p>No queue: waiters poll, as for the exclusive table lock. A waiting writer's intent, kept on the
 * anchor for its place time and renewed by its calls, holds new readers back, so readers cannot
 * starve a writer; writers among themselves, and permit waiters, are not ordered.
 */
final class JdbcSharedHolds {

	/** The anchor row's {@code holder}. */
	private static final String ANCHOR = "";

	/** How often a transaction that a concurrent one rolled back (a deadlock victim) is tried in all. */
	private static final int ATTEMPTS = 4;

	/** How often an anchor is made for one acquisition before it gives up (each is deleted only by an idle release). */
	private static final int MAX_ANCHORS_MADE = 16;

	/** How long a missing shared table is believed missing before it is looked for again. */
	private static final long RECHECK_MILLIS = 60_000;

	private final JdbcTemplate jdbc;

	private final TransactionTemplate transactions;

	private final JdbcDialect dialect;

	private final String table;

	/** The database's clock in epoch milliseconds. */
	private final LongSupplier now;

	/** Draws the next fencing token from the lock table's counter. */
	private final LongSupplier nextToken;

	/** When the table was last found missing (System.currentTimeMillis), or 0 if it was found; -1 never looked. */
	private volatile long missingSince = -1;

	JdbcSharedHolds(JdbcTemplate jdbc, TransactionTemplate transactions, JdbcDialect dialect, String table,
			LongSupplier now, LongSupplier nextToken) {
		this.jdbc = jdbc;
		this.transactions = transactions;
		this.dialect = dialect;
		this.table = table;
		this.now = now;
		this.nextToken = nextToken;
	}

	/** @return the table's name */
	String table() {
		return this.table;
	}

	/**
	 * @return whether the table exists: an application that upgraded without creating it keeps its
	 * exclusive locks, and is told which table read-write locks and semaphores need. Found once, it is
	 * not looked for again; missing, it is looked for again after a minute.
	 */
	boolean available() {
		long missing = this.missingSince;
		if (missing == 0 || (missing > 0 && System.currentTimeMillis() - missing < RECHECK_MILLIS)) {
			return missing == 0;
		}
		boolean found = problem() == null;
		this.missingSince = found ? 0 : System.currentTimeMillis();
		return found;
	}

	/** @return what is wrong with the table, or {@code null} if it is in place */
	String problem() {
		try {
			this.jdbc.queryForList("SELECT lock_space, lock_name, holder, hold_count, fencing_token, expires_at, permits, "
					+ "waiting FROM " + this.table + " WHERE 1 = 0");
			return null;
		}
		catch (BadSqlGrammarException ex) {
			return "table " + this.table + " (read-write locks and semaphores) does not exist, or lacks distlock's "
					+ "columns";
		}
	}

	Acquisition acquire(AcquireRequest request) {
		String space = space(request.kind());
		int conflicts = 0;
		for (int made = 0;; made++) {
			try {
				Acquisition result = this.transactions.execute(status -> acquireUnderAnchor(space, request));
				if (result != null) {
					return result;
				}
				if (made == MAX_ANCHORS_MADE) {
					// Only a release that finds the lock idle deletes the anchor: never this often in a row.
					throw new IllegalStateException("The anchor row of " + request.kind().describe(request.name())
							+ " in " + this.table + " was deleted " + made + " times in a row before it could be locked");
				}
				// No anchor yet: made apart, so that no transaction locks the gap where it will be (two
				// first acquisitions deadlocked that way on InnoDB) and PostgreSQL's duplicate-key error
				// aborts nothing else; a release may delete it again before the next look.
				insertAnchor(space, request.name(), request.permits());
			}
			catch (PessimisticLockingFailureException conflict) {
				if (++conflicts == ATTEMPTS) {
					throw conflict;
				}
			}
		}
	}

	private Acquisition acquireUnderAnchor(String space, AcquireRequest request) {
		String name = request.name();
		List<Map<String, Object>> anchors = this.jdbc.queryForList("SELECT permits, waiting, expires_at FROM "
				+ this.table + " WHERE lock_space = ? AND lock_name = ? AND holder = ? FOR UPDATE", space, name, ANCHOR);
		if (anchors.isEmpty()) {
			return null;
		}
		Map<String, Object> anchor = anchors.get(0);
		long now = this.now.getAsLong();
		List<Holder> live = liveHolders(space, name, now);
		String holder = holder(request.kind(), request.owner());
		long lease = request.lease().toMillis();
		String intent = text(anchor.get("waiting"));
		boolean intentLives = intent != null && number(anchor, "expires_at") > now;
		if (request.kind() == HoldKind.PERMIT) {
			int permits = (int) number(anchor, "permits");
			if (permits != request.permits()) {
				if (!live.isEmpty()) {
					return Acquisition.permitsDiffer(permits);
				}
				// Idle: the semaphore takes the permits it is asked for now.
				this.jdbc.update("UPDATE " + this.table + " SET permits = ? WHERE lock_space = ? AND lock_name = ? AND holder = ?",
						request.permits(), space, name, ANCHOR);
			}
		}
		Holder own = find(live, holder);
		if (own != null) {
			this.jdbc.update("UPDATE " + this.table + " SET hold_count = ?, expires_at = ? WHERE lock_space = ? AND "
					+ "lock_name = ? AND holder = ?", request.heldCount() + 1, now + lease, space, name, holder);
			return Acquisition.acquired(own.token(), Duration.ofMillis(lease));
		}
		if (request.heldCount() > 0) {
			return Acquisition.lost();
		}
		// A write asked by an owner with a read row of its own is no upgrade (the engine refuses those before
		// asking): that read hold is kept after its unlock, and is waited for like any reader's.
		boolean admitted = switch (request.kind()) {
			case WRITE -> live.isEmpty();
			// A downgrade enters at once; otherwise no writer inside and none waiting but this owner.
			case READ -> find(live, holder(HoldKind.WRITE, request.owner())) != null
					|| (live.stream().noneMatch(Holder::writes) && !(intentLives && !intent.equals(request.owner())));
			// The stored permits are the request's by now: equal, or changed above while idle.
			case PERMIT -> live.size() < request.permits();
			default -> throw new IllegalArgumentException("Not a shared kind: " + request.kind());
		};
		if (admitted) {
			this.jdbc.update("INSERT INTO " + this.table + " (lock_space, lock_name, holder, hold_count, fencing_token, "
					+ "expires_at, permits, waiting) VALUES (?, ?, ?, 1, 0, ?, 0, NULL)", space, name, holder, now + lease);
			if (request.kind() == HoldKind.WRITE && request.owner().equals(intent)) {
				clearIntent(space, name);
			}
			return Acquisition.acquired(Acquisition.TOKEN_ON_REQUEST, Duration.ofMillis(lease));
		}
		long until = live.stream().mapToLong(Holder::expiresAt).min().orElse(now + LockBackend.QUEUE_PLACE.toMillis());
		if (request.kind() == HoldKind.WRITE && request.queueFor().toMillis() > 0
				&& (!intentLives || intent.equals(request.owner()))) {
			// This writer waits: new readers stay out until it got in, gave up, or stopped calling.
			this.jdbc.update("UPDATE " + this.table + " SET waiting = ?, expires_at = ? WHERE lock_space = ? AND "
					+ "lock_name = ? AND holder = ?", request.owner(), now + request.queueFor().toMillis(), space, name,
					ANCHOR);
		}
		else if (request.kind() == HoldKind.READ && intentLives && live.stream().noneMatch(Holder::writes)) {
			until = number(anchor, "expires_at");
		}
		return Acquisition.heldByOther(Duration.ofMillis(Math.max(1, until - now)));
	}

	Release release(ReleaseRequest request) {
		String space = space(request.kind());
		String holder = holder(request.kind(), request.owner());
		for (int attempt = 1;; attempt++) {
			try {
				return this.transactions.execute(status -> {
					List<Map<String, Object>> anchors = this.jdbc.queryForList("SELECT waiting, expires_at FROM " + this.table
							+ " WHERE lock_space = ? AND lock_name = ? AND holder = ? FOR UPDATE", space, request.name(), ANCHOR);
					List<Long> expiry = this.jdbc.queryForList("SELECT expires_at FROM " + this.table
							+ " WHERE lock_space = ? AND lock_name = ? AND holder = ? FOR UPDATE", Long.class, space,
							request.name(), holder);
					if (anchors.isEmpty() || expiry.isEmpty()) {
						return Release.NOT_HELD;
					}
					long now = this.now.getAsLong();
					boolean expired = expiry.get(0) <= now;
					if (expired || request.heldCount() <= 1) {
						this.jdbc.update("DELETE FROM " + this.table + " WHERE lock_space = ? AND lock_name = ? AND holder = ?",
								space, request.name(), holder);
						forgetIfIdle(space, request.name(), anchors.get(0), now);
						return expired ? Release.NOT_HELD : Release.RELEASED;
					}
					this.jdbc.update("UPDATE " + this.table + " SET hold_count = ? WHERE lock_space = ? AND lock_name = ? "
							+ "AND holder = ?", request.heldCount() - 1, space, request.name(), holder);
					return Release.DECREMENTED;
				});
			}
			catch (PessimisticLockingFailureException conflict) {
				if (attempt == ATTEMPTS) {
					throw conflict;
				}
			}
		}
	}

	/** A writer stops waiting: its intent goes, and readers may enter again. */
	void leave(String name, HoldKind kind, String owner) {
		if (kind != HoldKind.WRITE) {
			return;
		}
		String space = space(kind);
		for (int attempt = 1;; attempt++) {
			try {
				leaveUnderAnchor(space, name, owner);
				return;
			}
			catch (PessimisticLockingFailureException conflict) {
				if (attempt == ATTEMPTS) {
					throw conflict;
				}
			}
		}
	}

	private void leaveUnderAnchor(String space, String name, String owner) {
		this.transactions.executeWithoutResult(status -> {
			List<Map<String, Object>> anchors = this.jdbc.queryForList("SELECT waiting, expires_at FROM " + this.table
					+ " WHERE lock_space = ? AND lock_name = ? AND holder = ? FOR UPDATE", space, name, ANCHOR);
			if (anchors.isEmpty() || !owner.equals(text(anchors.get(0).get("waiting")))) {
				return;
			}
			clearIntent(space, name);
			forgetIfIdle(space, name, Map.of("expires_at", 0L), this.now.getAsLong());
		});
	}

	/**
	 * Renews each hold in a statement of its own, with the database's clock read by that statement:
	 * a holder whose lease ran out is never extended, whatever an acquisition decided meanwhile.
	 */
	List<Boolean> renew(List<HoldRef> holds, Duration lease) {
		List<Boolean> renewed = new ArrayList<>(holds.size());
		String now = this.dialect.nowMillis();
		for (HoldRef hold : holds) {
			int updated = this.jdbc.update("UPDATE " + this.table + " SET expires_at = " + now + " + ? WHERE lock_space = ? "
					+ "AND lock_name = ? AND holder = ? AND expires_at > " + now, lease.toMillis(), space(hold.kind()),
					hold.name(), holder(hold.kind(), hold.owner()));
			renewed.add(updated > 0);
		}
		return renewed;
	}

	boolean isHeldBy(String name, HoldKind kind, String owner) {
		Integer count = this.jdbc.queryForObject("SELECT COUNT(*) FROM " + this.table + " WHERE lock_space = ? AND "
				+ "lock_name = ? AND holder = ? AND expires_at > " + this.dialect.nowMillis(), Integer.class, space(kind), name,
				holder(kind, owner));
		return count != null && count > 0;
	}

	Duration remainingLease(String name, HoldKind kind) {
		Long left = this.jdbc.queryForObject("SELECT MAX(expires_at) - " + this.dialect.nowMillis() + " FROM "
				+ this.table + " WHERE lock_space = ? AND lock_name = ? AND holder LIKE ?", Long.class, space(kind), name,
				prefix(kind) + "%");
		return (left == null || left <= 0) ? Duration.ZERO : Duration.ofMillis(left);
	}

	int availablePermits(String name, int permits) {
		String space = space(HoldKind.PERMIT);
		List<Integer> stored = this.jdbc.queryForList("SELECT permits FROM " + this.table + " WHERE lock_space = ? AND "
				+ "lock_name = ? AND holder = ?", Integer.class, space, name, ANCHOR);
		Integer holders = this.jdbc.queryForObject("SELECT COUNT(*) FROM " + this.table + " WHERE lock_space = ? AND "
				+ "lock_name = ? AND holder <> ? AND expires_at > " + this.dialect.nowMillis(), Integer.class, space, name,
				ANCHOR);
		int total = stored.isEmpty() ? permits : stored.get(0);
		return Math.max(0, total - ((holders != null) ? holders : 0));
	}

	/** Issued while the hold lasts, from the lock table's counter, so above every token issued before. */
	long issueToken(String name, HoldKind kind, String owner) {
		String space = space(kind);
		String holder = holder(kind, owner);
		Long token = this.transactions.execute(status -> {
			List<Map<String, Object>> rows = this.jdbc.queryForList("SELECT fencing_token, expires_at FROM " + this.table
					+ " WHERE lock_space = ? AND lock_name = ? AND holder = ? FOR UPDATE", space, name, holder);
			long now = this.now.getAsLong();
			if (rows.isEmpty() || number(rows.get(0), "expires_at") <= now) {
				return Acquisition.NO_TOKEN;
			}
			long issued = number(rows.get(0), "fencing_token");
			if (issued != 0) {
				return issued;
			}
			long next = this.nextToken.getAsLong();
			this.jdbc.update("UPDATE " + this.table + " SET fencing_token = ? WHERE lock_space = ? AND lock_name = ? AND "
					+ "holder = ?", next, space, name, holder);
			return next;
		});
		return (token != null) ? token : Acquisition.NO_TOKEN;
	}

	/** The holders of the lock, locked; those whose lease ran out by the database's clock are deleted. */
	private List<Holder> liveHolders(String space, String name, long now) {
		List<Map<String, Object>> rows = this.jdbc.queryForList("SELECT holder, fencing_token, expires_at FROM "
				+ this.table + " WHERE lock_space = ? AND lock_name = ? AND holder <> ? FOR UPDATE", space, name, ANCHOR);
		List<Holder> live = new ArrayList<>(rows.size());
		boolean expired = false;
		for (Map<String, Object> row : rows) {
			long expiresAt = number(row, "expires_at");
			if (expiresAt > now) {
				live.add(new Holder(text(row.get("holder")), number(row, "fencing_token"), expiresAt));
			}
			else {
				expired = true;
			}
		}
		if (expired) {
			this.jdbc.update("DELETE FROM " + this.table + " WHERE lock_space = ? AND lock_name = ? AND holder <> ? AND "
					+ "expires_at <= ?", space, name, ANCHOR, now);
		}
		return live;
	}

	/**
	 * With no holder left and no writer waiting, the anchor goes (a semaphore forgets its permits). The
	 * holders are read with a lock, as an acquisition reads them: a renewal in flight is waited for, and
	 * a hold it extends is not taken for expired and deleted.
	 */
	private void forgetIfIdle(String space, String name, Map<String, Object> anchor, long now) {
		boolean intentLives = anchor.get("waiting") != null && number(anchor, "expires_at") > now;
		if (intentLives) {
			return;
		}
		if (liveHolders(space, name, now).isEmpty()) {
			this.jdbc.update("DELETE FROM " + this.table + " WHERE lock_space = ? AND lock_name = ? AND holder = ?", space,
					name, ANCHOR);
		}
	}

	private void clearIntent(String space, String name) {
		this.jdbc.update("UPDATE " + this.table + " SET waiting = NULL, expires_at = 0 WHERE lock_space = ? AND "
				+ "lock_name = ? AND holder = ?", space, name, ANCHOR);
	}

	/**
	 * In a transaction of its own, not on the caller's connection: inside the caller's transaction the
	 * anchor would be locked until that one ends (the acquisition's own transaction then waits for it)
	 * and undone by its rollback, and on PostgreSQL a duplicate key would abort it.
	 */
	private void insertAnchor(String space, String name, int permits) {
		try {
			this.transactions.executeWithoutResult(status -> this.jdbc.update("INSERT INTO " + this.table
					+ " (lock_space, lock_name, holder, hold_count, fencing_token, expires_at, permits, waiting) VALUES (?, ?, "
					+ "?, 0, 0, 0, ?, NULL)", space, name, ANCHOR, permits));
		}
		catch (DuplicateKeyException made) {
			// Another client made it first: it is there to be locked.
		}
	}

	private static Holder find(List<Holder> live, String holder) {
		for (Holder candidate : live) {
			if (candidate.holder().equals(holder)) {
				return candidate;
			}
		}
		return null;
	}

	/** A text column's value: MySQL's binary columns (compared byte for byte) come back as bytes. */
	private static String text(Object value) {
		return (value instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : (String) value;
	}

	private static long number(Map<String, Object> row, String column) {
		return ((Number) row.get(column)).longValue();
	}

	/** @return the key space: {@code r} for read-write locks, {@code s} for semaphores */
	private static String space(HoldKind kind) {
		return (kind == HoldKind.PERMIT) ? "s" : "r";
	}

	private static String prefix(HoldKind kind) {
		return switch (kind) {
			case READ -> "r:";
			case WRITE -> "w:";
			case PERMIT -> "p:";
			case EXCLUSIVE -> throw new IllegalArgumentException("Exclusive holds live in the lock table");
		};
	}

	private static String holder(HoldKind kind, String owner) {
		return prefix(kind) + owner;
	}

	/**
	 * One live holder row.
	 * @param holder {@code <kind>:<owner>}
	 * @param issued its fencing token, 0 until asked for
	 * @param expiresAt its deadline by the database's clock
	 */
	private record Holder(String holder, long issued, long expiresAt) {

		boolean writes() {
			return this.holder.startsWith("w:");
		}

		long token() {
			return (this.issued != 0) ? this.issued : Acquisition.TOKEN_ON_REQUEST;
		}

	}

}
