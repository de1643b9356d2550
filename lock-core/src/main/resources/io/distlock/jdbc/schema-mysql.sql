-- distlock's lock table; "distributed_locks" is the default name (distlock.jdbc.table-name).
-- expires_at is epoch milliseconds by the DATABASE clock: every comparison uses the database's own
-- time, so application servers with skewed clocks cannot steal a lock.
-- lock_name is compared byte for byte: the default collations of MySQL and MariaDB take 'Order',
-- 'order' and 'order ' for one key, which would make them one lock (1020 bytes: 255 characters of
-- up to 4 bytes). Tables made by distlock before 0.1.0-SNAPSHOT of 2026-11-24 need
--   ALTER TABLE distributed_locks MODIFY lock_name VARBINARY(1020) NOT NULL;
CREATE TABLE IF NOT EXISTS distributed_locks (
  lock_name VARBINARY(1020) NOT NULL PRIMARY KEY,
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
INSERT IGNORE INTO distributed_locks_fencing (id, last_token) VALUES (1, 0);
