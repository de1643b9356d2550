-- Releases one hold of a reentrant lock; at zero deletes it and wakes waiters.
-- KEYS[1]  the lock hash: field <owner id> -> hold count, field ':token' -> fencing token
-- ARGV[1]  owner id
-- ARGV[2]  the hold count the owner has before this release
-- ARGV[3]  the channel on which waiters listen for this lock's release
-- Returns  1 released (lock deleted, message published); 0 still held with ARGV[2] - 1 holds;
--          -1 the owner does not hold the lock.
-- The count is set to ARGV[2] - 1, not decremented, so a copy re-sent after a reconnect cannot
-- release a reentrant hold of 2 down to 0.
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return -1
end
local remaining = tonumber(ARGV[2]) - 1
if remaining > 0 then
  redis.call('hset', KEYS[1], ARGV[1], remaining)
  return 0
end
redis.call('del', KEYS[1])
redis.call('publish', ARGV[3], 'released')
return 1
