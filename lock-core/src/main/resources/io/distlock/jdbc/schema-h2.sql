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
INSERT INTO distributed_locks_fencing (id, last_token)
  SELECT 1, 0 WHERE NOT EXISTS (SELECT 1 FROM distributed_locks_fencing WHERE id = 1);
