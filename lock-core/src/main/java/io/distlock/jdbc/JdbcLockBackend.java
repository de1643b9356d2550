package io.distlock.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

import javax.sql.DataSource;

import org.springframework.core.io.ClassPathResource;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import io.distlock.HoldKind;
import io.distlock.LockSettings;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend;
import io.distlock.core.LockNotice;
import io.distlock.core.ReleaseRequest;

/**
 * Keeps locks as rows of a table (the seed's MySQL lock): one row per held lock with its owner,
 * hold count, fencing token and expiry. Expiry is judged by the database's clock only.
 *
 * <p>Every operation runs in a transaction of its own ({@code REQUIRES_NEW} on a private transaction
 * manager), so a caller's rollback cannot undo a lock and a release cannot commit the caller's
 * work. A first acquisition inserts the row; two clients inserting the same name at once are
 * settled by the primary key, not by a select-then-insert race. There are no release notifications:
 * waiters poll with the engine's capped back-off.
 */
public final class JdbcLockBackend implements LockBackend {

	/**
	 * How often an acquisition is tried in all when the database rolls it back for a conflict with
	 * another client's transaction; the conflicts are rare, so a few tries settle them.
	 */
	private static final int ACQUIRE_ATTEMPTS = 4;

	/**
	 * The {@code fencing_token} of a hold whose token nobody asked for yet (the column is not null; real
	 * tokens are at least the database clock in microseconds).
	 */
	private static final long NOT_ISSUED = 0;

	private final JdbcTemplate jdbc;

	private final TransactionTemplate transactions;

	private final JdbcDialect dialect;

	private final String table;

	private final String fencingTable;

	/** Read, write and permit holds, in {@code <tableName>_shared}. */
	private final JdbcSharedHolds shared;

	/**
	 * @param dataSource the application's data source
	 * @param tableName the lock table; its fencing counter is {@code <tableName>_fencing}
	 */
	public JdbcLockBackend(DataSource dataSource, String tableName) {
		LockSettings.tableName(tableName);
		this.jdbc = new JdbcTemplate(dataSource);
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		this.transactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		this.dialect = JdbcDialect.detect(dataSource);
		this.table = tableName;
		this.fencingTable = tableName + "_fencing";
		TransactionTemplate sharedTransactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		sharedTransactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		// Decisions read locked rows anyway; READ COMMITTED spares InnoDB's gap locks on a lock's range of holders.
		sharedTransactions.setIsolationLevel(TransactionDefinition.ISOLATION_READ_COMMITTED);
		this.shared = new JdbcSharedHolds(this.jdbc, sharedTransactions, this.dialect, tableName + "_shared", this::now,
				this::nextToken);
	}

	/**
	 * Read-write locks and semaphores need the table {@code <tableName>_shared}, which
	 * {@link #createSchema()} creates; without it, this backend keeps exclusive locks only.
	 */
	@Override
	public Set<HoldKind> supportedKinds() {
		return this.shared.available() ? EnumSet.allOf(HoldKind.class) : EnumSet.of(HoldKind.EXCLUSIVE);
	}

	/**
	 * Only a waiting writer is remembered (its intent holds new readers back, and leaving the queue
	 * ends it); other waiters poll, unordered.
	 */
	@Override
	public boolean queuesWaiters(HoldKind kind) {
		return kind == HoldKind.WRITE;
	}

	/**
	 * @return what is missing for read-write locks and semaphores (the table {@code <tableName>_shared}),
	 * or empty if they can be used
	 */
	public Optional<String> sharedSchemaProblem() {
		return Optional.ofNullable(this.shared.problem());
	}

	/** @return the detected dialect */
	public JdbcDialect dialect() {
		return this.dialect;
	}

	/** Creates the tables if they do not exist, from the dialect's DDL with this backend's table name. */
	public void createSchema() {
		String ddl;
		try {
			ddl = new ClassPathResource(this.dialect.schemaResource()).getContentAsString(StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		String sql = ddl.replaceAll("(?m)^--.*$", "").replace("distributed_locks", this.table);
		for (String statement : sql.split(";")) {
			if (!statement.isBlank()) {
				this.jdbc.execute(statement.trim());
			}
		}
	}

	/**
	 * Reads both tables the way the lock does, so that a schema that was never created (or was
	 * created under another name) is found at start-up rather than by every lock call. Only a
	 * statement the database rejects counts as missing schema; an unreachable database still throws.
	 * @return what is missing, such as {@code "table app_locks does not exist"}, or empty if the
	 * lock table and its fencing counter are in place
	 */
	public Optional<String> schemaProblem() {
		try {
			this.jdbc.queryForList("SELECT lock_name, owner_id, hold_count, fencing_token, expires_at FROM " + this.table
					+ " WHERE 1 = 0");
		}
		catch (BadSqlGrammarException ex) {
			return Optional.of("table " + this.table + " does not exist, or lacks distlock's columns ("
					+ rootMessage(ex) + ")");
		}
		List<Map<String, Object>> counter;
		try {
			counter = this.jdbc.queryForList("SELECT last_token FROM " + this.fencingTable + " WHERE id = 1");
		}
		catch (BadSqlGrammarException ex) {
			return Optional.of("table " + this.fencingTable + " (the fencing counter of " + this.table
					+ ") does not exist, or lacks distlock's columns (" + rootMessage(ex) + ")");
		}
		if (counter.isEmpty()) {
			return Optional.of("table " + this.fencingTable + " has no counter row (id = 1)");
		}
		return Optional.empty();
	}

	private static String rootMessage(Exception ex) {
		Throwable root = ex;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		String message = String.valueOf(root.getMessage());
		// H2 appends "; SQL statement:" and the statement on the next lines; the first part says it all.
		int newline = message.indexOf('\n');
		String first = (newline > 0) ? message.substring(0, newline).trim() : message;
		int statement = first.indexOf("; SQL statement");
		return (statement > 0) ? first.substring(0, statement) : first;
	}

	/**
	 * Checked before the database sees the name: a strict database fails the insert with an error
	 * that reads like an outage, and MySQL without strict mode cuts the name to fit, making it the
	 * same lock as every name that shares its first 255 characters. PostgreSQL refuses a NUL
	 * character the same way.
	 * @throws IllegalArgumentException also if the name is longer than
	 * {@value JdbcLockRegistry#MAX_NAME_LENGTH} characters, which the lock table cannot hold, or has a
	 * NUL character
	 */
	@Override
	public String checkName(String name) {
		if (name.length() > JdbcLockRegistry.MAX_NAME_LENGTH) {
			throw new IllegalArgumentException("Lock name '" + name.substring(0, 40) + "…' is " + name.length()
					+ " characters long; the lock table's lock_name column holds " + JdbcLockRegistry.MAX_NAME_LENGTH
					+ ". Use a shorter name (for a long key, a hash of it).");
		}
		// PostgreSQL's text cannot hold NUL; refused on every database, so a name works on all of them.
		int nul = name.indexOf('\u0000');
		if (nul >= 0) {
			throw new IllegalArgumentException("Lock name has a NUL character at index " + nul
					+ ", which the lock table cannot store on PostgreSQL; use a name without control characters.");
		}
		return name;
	}

	/** Acquires in a transaction of its own; nothing is queued. */
	@Override
	public Acquisition acquire(AcquireRequest request) {
		if (request.kind() != null && request.kind() != HoldKind.EXCLUSIVE) {
			return this.shared.acquire(request);
		}
		for (int attempt = 1;; attempt++) {
			try {
				return this.transactions.execute(status -> acquireInTransaction(request.name(), request.owner(),
						request.heldCount(), request.lease().toMillis()));
			}
			catch (DuplicateKeyException taken) {
				// Another client inserted the name between this transaction's read and its insert: it
				// holds the lock, for a lease not known here. This transaction was rolled back.
				return Acquisition.heldByOther(Duration.ZERO);
			}
			catch (PessimisticLockingFailureException conflict) {
				// A deadlock victim or a lock-wait timeout, rolled back with nothing taken: this says
				// nothing about who holds the lock, and reporting "held by another" would refuse a lock
				// that may well be free. Trying again reads the table afresh.
				if (attempt == ACQUIRE_ATTEMPTS) {
					throw conflict;
				}
			}
		}
	}

	private Acquisition acquireInTransaction(String name, String owner, int heldCount, long leaseMillis) {
		long now = now();
		// A re-entry locks its row straight away. A first acquisition reads without a lock first: on
		// InnoDB a locking read of an absent row takes a gap lock, and two first acquisitions of
		// different names in one gap then deadlock, each INSERT waiting for the other's gap lock. The
		// primary key settles two inserts of one name, and another owner's live hold needs no lock to
		// be reported; only a row this acquisition may change is locked.
		List<Map<String, Object>> rows = readRow(name, heldCount > 0);
		if (heldCount == 0 && !rows.isEmpty()) {
			long expiresAt = ((Number) rows.get(0).get("expires_at")).longValue();
			if (expiresAt > now && !owner.equals(rows.get(0).get("owner_id"))) {
				return Acquisition.heldByOther(Duration.ofMillis(expiresAt - now));
			}
			rows = readRow(name, true);
		}
		if (rows.isEmpty()) {
			if (heldCount > 0) {
				return Acquisition.lost();
			}
			this.jdbc.update("INSERT INTO " + this.table
					+ " (lock_name, owner_id, hold_count, fencing_token, expires_at) VALUES (?, ?, 1, ?, ?)", name, owner,
					NOT_ISSUED, now + leaseMillis);
			return Acquisition.acquired(Acquisition.TOKEN_ON_REQUEST, Duration.ofMillis(leaseMillis));
		}
		Map<String, Object> row = rows.get(0);
		long expiresAt = ((Number) row.get("expires_at")).longValue();
		boolean mine = owner.equals(row.get("owner_id"));
		if (expiresAt > now) {
			if (mine) {
				this.jdbc.update("UPDATE " + this.table + " SET hold_count = ?, expires_at = ? WHERE lock_name = ?",
						heldCount + 1, now + leaseMillis, name);
				return Acquisition.acquired(tokenOf(row), Duration.ofMillis(leaseMillis));
			}
			return (heldCount > 0) ? Acquisition.lost() : Acquisition.heldByOther(Duration.ofMillis(expiresAt - now));
		}
		if (heldCount > 0) {
			return Acquisition.lost();
		}
		// Expired by the database's clock: taking it over is a new hold, whose token is issued when asked.
		this.jdbc.update("UPDATE " + this.table
				+ " SET owner_id = ?, hold_count = 1, fencing_token = ?, expires_at = ? WHERE lock_name = ?", owner,
				NOT_ISSUED, now + leaseMillis, name);
		return Acquisition.acquired(Acquisition.TOKEN_ON_REQUEST, Duration.ofMillis(leaseMillis));
	}

	/**
	 * Releases by owner in a transaction of its own: the table does not tell one owner's holds apart
	 * (no {@code attemptId}), and {@code within} is not applied.
	 */
	@Override
	public Release release(ReleaseRequest request) {
		if (request.kind() != null && request.kind() != HoldKind.EXCLUSIVE) {
			return this.shared.release(request);
		}
		String name = request.name();
		String owner = request.owner();
		int heldCount = request.heldCount();
		return this.transactions.execute(status -> {
			long now = now();
			List<Long> expiry = this.jdbc.queryForList("SELECT expires_at FROM " + this.table
					+ " WHERE lock_name = ? AND owner_id = ? FOR UPDATE", Long.class, name, owner);
			if (expiry.isEmpty()) {
				return Release.NOT_HELD;
			}
			if (expiry.get(0) <= now || heldCount <= 1) {
				this.jdbc.update("DELETE FROM " + this.table + " WHERE lock_name = ? AND owner_id = ?", name, owner);
				return (expiry.get(0) <= now) ? Release.NOT_HELD : Release.RELEASED;
			}
			this.jdbc.update("UPDATE " + this.table + " SET hold_count = ? WHERE lock_name = ? AND owner_id = ?",
					heldCount - 1, name, owner);
			return Release.DECREMENTED;
		});
	}

	/**
	 * Renews in one batch statement of its own transaction; {@code within} is not applied. A row does
	 * not tell one owner's holds apart (no {@link HoldRef#attemptId()}): a renewal that reaches the
	 * table after the owner released and took the lock again renews the new hold, to this lease.
	 */
	@Override
	public List<Boolean> renew(List<HoldRef> holds, Duration lease, Duration within) {
		List<HoldRef> exclusive = new ArrayList<>(holds.size());
		List<HoldRef> others = new ArrayList<>();
		for (HoldRef hold : holds) {
			(isShared(hold.kind()) ? others : exclusive).add(hold);
		}
		if (others.isEmpty()) {
			return renewExclusive(holds, lease);
		}
		Iterator<Boolean> renewedExclusive = (exclusive.isEmpty() ? List.<Boolean>of() : renewExclusive(exclusive, lease))
			.iterator();
		Iterator<Boolean> renewedShared = this.shared.renew(others, lease).iterator();
		List<Boolean> renewed = new ArrayList<>(holds.size());
		for (HoldRef hold : holds) {
			renewed.add(isShared(hold.kind()) ? renewedShared.next() : renewedExclusive.next());
		}
		return renewed;
	}

	private static boolean isShared(HoldKind kind) {
		return kind != null && kind != HoldKind.EXCLUSIVE;
	}

	private List<Boolean> renewExclusive(List<HoldRef> holds, Duration lease) {
		return this.transactions.execute(status -> {
			long now = now();
			List<Object[]> arguments = new ArrayList<>(holds.size());
			for (HoldRef hold : holds) {
				arguments.add(new Object[] { now + lease.toMillis(), hold.name(), hold.owner(), now });
			}
			int[] updated = this.jdbc.batchUpdate("UPDATE " + this.table
					+ " SET expires_at = ? WHERE lock_name = ? AND owner_id = ? AND expires_at > ?", arguments);
			List<Boolean> renewed = new ArrayList<>(holds.size());
			for (int count : updated) {
				// Some drivers answer SUCCESS_NO_INFO (-2) for batched statements that did update.
				renewed.add(count > 0 || count == Statement.SUCCESS_NO_INFO);
			}
			return renewed;
		});
	}

	@Override
	public boolean isHeldBy(String name, String owner) {
		Integer count = this.jdbc.queryForObject("SELECT COUNT(*) FROM " + this.table
				+ " WHERE lock_name = ? AND owner_id = ? AND expires_at > " + this.dialect.nowMillis(), Integer.class, name,
				owner);
		return count != null && count > 0;
	}

	@Override
	public Duration remainingLease(String name) {
		List<Long> left = this.jdbc.queryForList("SELECT expires_at - " + this.dialect.nowMillis() + " FROM " + this.table
				+ " WHERE lock_name = ?", Long.class, name);
		return (left.isEmpty() || left.get(0) <= 0) ? Duration.ZERO : Duration.ofMillis(left.get(0));
	}

	@Override
	public AutoCloseable subscribe(String name, String clientId, Consumer<LockNotice> onNotice) {
		// No notifications from a table: the engine polls, bounded by the holder's expiry.
		return null;
	}

	@Override
	public AutoCloseable subscribe(String name, HoldKind.Family family, String clientId, Consumer<LockNotice> onNotice) {
		return null;
	}

	@Override
	public void leaveQueue(String name, HoldKind kind, String owner, String ticket, boolean passOnHandOff) {
		if (isShared(kind)) {
			this.shared.leave(name, kind, owner);
		}
	}

	@Override
	public long issueToken(String name, HoldKind kind, String owner, String attemptId) {
		return isShared(kind) ? this.shared.issueToken(name, kind, owner) : issueToken(name, owner, attemptId);
	}

	@Override
	public boolean isHeldBy(String name, HoldKind kind, String owner) {
		return isShared(kind) ? this.shared.isHeldBy(name, kind, owner) : isHeldBy(name, owner);
	}

	@Override
	public Duration remainingLease(String name, HoldKind kind) {
		return isShared(kind) ? this.shared.remainingLease(name, kind) : remainingLease(name);
	}

	@Override
	public int availablePermits(String name, int permits) {
		return this.shared.availablePermits(name, permits);
	}

	@Override
	public String description() {
		return "table " + this.table;
	}

	@Override
	public Health health() {
		try {
			Integer one = this.jdbc.queryForObject("SELECT 1", Integer.class);
			return new Health(one != null && one == 1, Map.of("database", this.dialect.name(), "table", this.table));
		}
		catch (RuntimeException ex) {
			return new Health(false, Map.of("database", this.dialect.name(), "error", ex.toString()));
		}
	}

	@Override
	public void close() {
		// The data source belongs to the application.
	}

	private List<Map<String, Object>> readRow(String name, boolean forUpdate) {
		return this.jdbc.queryForList("SELECT owner_id, fencing_token, expires_at FROM " + this.table
				+ " WHERE lock_name = ?" + (forUpdate ? " FOR UPDATE" : ""), name);
	}

	private long now() {
		Long now = this.jdbc.queryForObject("SELECT " + this.dialect.nowMillis(), Long.class);
		if (now == null) {
			throw new IllegalStateException("The database returned no current time");
		}
		return now;
	}

	/**
	 * Issues the hold's token on its holder's first request, and only while the hold is still there: a
	 * token is then drawn while its holder holds the lock, so a later holder's is always higher, and
	 * acquisitions no longer queue on the one counter row (with hundreds of holds taken at once they
	 * did, for longer than a connection pool's timeout).
	 */
	@Override
	public long issueToken(String name, String owner, String attemptId) {
		Long token = this.transactions.execute(status -> {
			List<Map<String, Object>> rows = this.jdbc.queryForList("SELECT fencing_token, expires_at FROM " + this.table
					+ " WHERE lock_name = ? AND owner_id = ? FOR UPDATE", name, owner);
			// The clock after the row lock, which may have been waited for: a hold that ran out meanwhile gets no token.
			long now = now();
			if (rows.isEmpty() || ((Number) rows.get(0).get("expires_at")).longValue() <= now) {
				return Acquisition.NO_TOKEN;
			}
			long issued = ((Number) rows.get(0).get("fencing_token")).longValue();
			if (issued != NOT_ISSUED) {
				return issued;
			}
			long next = nextToken();
			this.jdbc.update("UPDATE " + this.table + " SET fencing_token = ? WHERE lock_name = ? AND owner_id = ?", next,
					name, owner);
			return next;
		});
		return (token != null) ? token : Acquisition.NO_TOKEN;
	}

	/** @return the row's token, or {@link Acquisition#TOKEN_ON_REQUEST} if none was asked for yet */
	private static long tokenOf(Map<String, Object> row) {
		long token = ((Number) row.get("fencing_token")).longValue();
		return (token != NOT_ISSUED) ? token : Acquisition.TOKEN_ON_REQUEST;
	}

	/**
	 * One more than the last token, and never below the database clock in microseconds: a counter
	 * restored from an old backup, or reset, still restarts above every token handed out before, as
	 * long as the database's clock does not step back.
	 */
	private long nextToken() {
		this.jdbc.update("UPDATE " + this.fencingTable + " SET last_token = GREATEST(last_token + 1, ("
				+ this.dialect.nowMillis() + ") * 1000) WHERE id = 1");
		Long token = this.jdbc.queryForObject("SELECT last_token FROM " + this.fencingTable + " WHERE id = 1", Long.class);
		if (token == null) {
			throw new IllegalStateException("Fencing counter row missing in " + this.fencingTable + "; create the schema");
		}
		return token;
	}

}
