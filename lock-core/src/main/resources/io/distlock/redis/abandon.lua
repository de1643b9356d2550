-- Undoes one failed Redlock attempt on this node, and only that attempt.
-- KEYS[1]  the lock hash: field <owner id> -> hold count, ':token', ':attempt' -> attempt id
-- ARGV[1]  owner id
-- ARGV[2]  the attempt id given to acquire.lua
-- ARGV[3]  the channel on which waiters listen for this lock's release
-- Publishes the owner id, so the client that gave up can ignore the wake-up it caused itself.
-- Returns  1 deleted (and waiters woken); 0 nothing to undo: the attempt never landed here, or a
--          newer attempt of the owner has taken the hold over since (deleting it would break that
--          attempt's quorum behind its back).
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 and redis.call('hget', KEYS[1], ':attempt') == ARGV[2] then
  redis.call('del', KEYS[1])
  redis.call('publish', ARGV[3], ARGV[1])
  return 1
end
return 0
