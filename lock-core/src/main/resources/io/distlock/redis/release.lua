-- Releases one hold of a reentrant lock. At zero the lock goes straight to the first live queued
-- waiter (that waiter's client is told on the channel), or, with nobody queued, is deleted and
-- waiters are woken.
-- KEYS[1]  the lock hash: field <owner id> -> hold count, field ':token' -> fencing token
-- KEYS[2]  the fencing counter
-- KEYS[3]  the wait queue: a list of owner ids in arrival order
-- KEYS[4]  the queue's entries: owner id -> '<deadline ms>:<lease ms>:<ticket>' (deadline in Redis time)
-- ARGV[1]  owner id
-- ARGV[2]  the hold count the owner has before this release
-- ARGV[3]  the channel on which waiters listen for this lock
-- ARGV[4]  'leave': the owner gives up waiting instead; it leaves the queue, and a hold handed to
--          it meanwhile (which it never learnt of) is released as above
-- ARGV[5]  the attempt id that took the hold (Redlock), or '': a release of an earlier hold that
--          arrives after the same owner's next attempt took the lock over must not delete that one
-- ARGV[6]  the lease, in ms, of a hold handed on, at most: the new holder extends it to its own
--          lease when it takes the hold up, so a waiter that vanished since it last called keeps
--          the lock only this long
-- Returns  1 released (handed on or freed); 0 still held with ARGV[2] - 1 holds; -1 the owner
--          does not hold the lock; 2 the owner left the queue without having been handed the lock.
-- Messages 'grant <token> <owner id> <ticket>' when handed on, 'released' when freed.
-- The count is set to ARGV[2] - 1, not decremented, so a copy re-sent after a reconnect cannot
-- release a reentrant hold of 2 down to 0.
local owner = ARGV[1]
local remaining
if ARGV[4] == 'leave' then
  if redis.call('hdel', KEYS[4], owner) == 1 then
    redis.call('lrem', KEYS[3], 1, owner)
    return 2
  end
  if redis.call('hget', KEYS[1], owner) ~= '1' then
    return 2
  end
  remaining = 0
else
  if redis.call('hexists', KEYS[1], owner) == 0 then
    return -1
  end
  if ARGV[5] ~= '' and redis.call('hget', KEYS[1], ':attempt') ~= ARGV[5] then
    return -1
  end
  remaining = tonumber(ARGV[2]) - 1
end
if remaining > 0 then
  redis.call('hset', KEYS[1], owner, remaining)
  return 0
end
redis.call('del', KEYS[1])
if redis.call('exists', KEYS[3]) == 1 then
  local t = redis.call('time')
  t = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  while true do
    local head = redis.call('lpop', KEYS[3])
    if not head then
      break
    end
    local entry = redis.call('hget', KEYS[4], head)
    redis.call('hdel', KEYS[4], head)
    local deadline, lease, ticket = string.match(entry or '', '^(%d+):(%d+):(.*)$')
    if deadline and tonumber(deadline) >= t then
      local token = redis.call('incr', KEYS[2])
      redis.call('hset', KEYS[1], head, 1, ':token', token)
      redis.call('pexpire', KEYS[1], math.min(tonumber(lease), tonumber(ARGV[6])))
      redis.call('publish', ARGV[3], 'grant ' .. token .. ' ' .. head .. ' ' .. ticket)
      return 1
    end
  end
end
redis.call('publish', ARGV[3], 'released')
return 1
