-- Releases one hold of a reentrant lock. At zero the lock goes straight to the first live queued
-- waiter (that waiter's client is told on the channel), or, with nobody queued, is deleted and
-- waiters are woken. Also takes a waiting attempt out of the queue ('leave', 'dequeue').
-- KEYS[1]  the lock hash: field <owner id> -> hold count, ':token' -> fencing token, ':ticket' ->
--          the attempt that took the hold
-- KEYS[2]  the fencing counter: the last token handed out
-- KEYS[3]  the wait queue: a list of owner ids in arrival order
-- KEYS[4]  the queue's entries: owner id -> '<deadline ms>:<lease ms>:<ticket>' (deadline in Redis time)
-- KEYS[5]  the release markers: a hash owner id -> the hold id it last released, kept 15 s after
--          the latest release of the lock
-- ARGV[1]  owner id
-- ARGV[2]  the hold count the owner has before this release
-- ARGV[3]  the channel on which waiters listen for this lock
-- ARGV[4]  '' to release; 'leave': attempt ARGV[7] gives up waiting: it leaves the queue, and a
--          hold handed to it meanwhile (which it never took up) is released as below; 'dequeue':
--          attempt ARGV[7] only leaves the queue (its client closes; a hold handed to it is its
--          waiter's, which gives it back itself)
-- ARGV[5]  the attempt id that took the hold (Redlock), or '': a release of an earlier hold that
--          arrives after the same owner's next attempt took the lock over must not delete that one
-- ARGV[6]  the lease, in ms, of a hold handed on, at most: the new holder extends it to its own
--          lease when it takes the hold up, so a waiter that vanished since it last called keeps
--          the lock only this long
-- ARGV[7]  releasing: the hold's fencing token (or ''); leaving: the attempt's ticket
-- Returns  1 released (handed on or freed); 0 still held with ARGV[2] - 1 holds; -1 the owner
--          does not hold the lock; 2 the attempt left the queue without having been handed the
--          lock; 3 the owner does not hold the lock because this very release was applied before
--          (a copy re-sent after a reconnect), not because the hold was lost.
-- Messages 'grant <token> <owner id> <ticket>' when handed on, 'released' when freed.
-- The count is set to ARGV[2] - 1, not decremented, so a copy re-sent after a reconnect cannot
-- release a reentrant hold of 2 down to 0.
-- The next fencing token: one more than the last, and never below the server clock in microseconds
-- (see acquire.lua's twin). A counter that is missing or marks a restart grace is left as it is: a
-- hand-off passes on a hold that survived, and must neither start a grace nor end one.
local function nextToken()
  local t = redis.call('time')
  local clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = tonumber(redis.call('get', KEYS[2]) or '')
  local token = math.max((last or 0) + 1, clock)
  -- Formatted, not tostring(): Lua would write a 16-digit number in exponent notation.
  local text = string.format('%.0f', token)
  if last then
    redis.call('set', KEYS[2], text)
  end
  return token, text
end

local owner = ARGV[1]
local remaining
if ARGV[4] ~= '' then
  local ticket = ARGV[7]
  local entry = redis.call('hget', KEYS[4], owner)
  if entry then
    -- Only this attempt's place: a later attempt of the same thread may have queued since.
    if string.match(entry, '^%d+:%d+:(.*)$') == ticket then
      redis.call('hdel', KEYS[4], owner)
      redis.call('lrem', KEYS[3], 1, owner)
    end
    return 2
  end
  if ARGV[4] == 'dequeue' or redis.call('hget', KEYS[1], owner) ~= '1'
      or redis.call('hget', KEYS[1], ':ticket') ~= ticket then
    return 2
  end
  remaining = 0
else
  local holdId = (ARGV[5] ~= '') and ARGV[5] or ARGV[7]
  if redis.call('hexists', KEYS[1], owner) == 0
      or (ARGV[5] ~= '' and redis.call('hget', KEYS[1], ':attempt') ~= ARGV[5]) then
    if redis.call('hget', KEYS[5], owner) == holdId then
      return 3
    end
    return -1
  end
  remaining = tonumber(ARGV[2]) - 1
  if remaining <= 0 then
    -- Lettuce re-sends commands that were unanswered when a connection dropped, after it reconnects;
    -- the copy must find this mark rather than report the hold lost. One field per owner: releases
    -- of other owners in the meantime (a hand-off under contention) must not wipe it.
    -- A lock busy for good never lets the hash expire: bound it (a marker lost early only risks a
    -- re-sent release being reported lost, never a second holder).
    if redis.call('hlen', KEYS[5]) >= 256 then
      redis.call('del', KEYS[5])
    end
    redis.call('hset', KEYS[5], owner, holdId)
    redis.call('pexpire', KEYS[5], 15000)
  end
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
      local _, token = nextToken()
      redis.call('hset', KEYS[1], head, 1, ':token', token, ':ticket', ticket)
      redis.call('pexpire', KEYS[1], math.min(tonumber(lease), tonumber(ARGV[6])))
      redis.call('publish', ARGV[3], 'grant ' .. token .. ' ' .. head .. ' ' .. ticket)
      return 1
    end
  end
end
redis.call('publish', ARGV[3], 'released')
return 1
