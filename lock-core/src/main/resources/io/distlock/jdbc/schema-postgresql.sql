-- distlock's lock table; "distributed_locks" is the default name (distlock.jdbc.table-name).
-- expires_at is epoch milliseconds by the DATABASE clock: every comparison uses the database's own
-- time, so application servers with skewed clocks cannot steal a lock.
CREATE TABLE IF NOT EXISTS distributed_locks (
  lock_name VARCHAR(255) NOT NULL PRIMARY KEY,
  owner_id VARCHAR(255) NOT NULL,
  hold_count INT NOT NULL,
  fencing_token BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
-- One row whose counter hands out fencing tokens: they only ever grow.
CREATE TABLE IF NOT EXISTS distributed_locks_fencing (
  id INT NOT NULL PRIMARY KEY,
  last_token BIGINT NOT NULL
);
INSERT INTO distributed_locks_fencing (id, last_token) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
-- Read-write locks and semaphores (optional: without it the table lock keeps exclusive locks only).
-- One row per holder and kind ('r:', 'w:' or 'p:' and the owner id), and one anchor row per lock
-- (holder '') that carries a semaphore's permits and the owner of a waiting writer (waiting, until
-- expires_at). lock_space is 'r' for read-write locks and 's' for semaphores.
CREATE TABLE IF NOT EXISTS distributed_locks_shared (
  lock_space CHAR(1) NOT NULL,
  lock_name VARCHAR(255) NOT NULL,
  holder VARCHAR(300) NOT NULL,
  hold_count INT NOT NULL,
  fencing_token BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  permits INT NOT NULL,
  waiting VARCHAR(300),
  PRIMARY KEY (lock_space, lock_name, holder)
);
