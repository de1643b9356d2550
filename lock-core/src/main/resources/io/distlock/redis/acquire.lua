-- Acquires or re-enters a reentrant lock, queueing the caller for a fair hand-off if it will wait.
-- KEYS[1]  the lock hash: field <owner id> -> hold count, ':attempt' -> the attempt that took the
--          hold, ':token' -> fencing token once one was issued (see token.lua), ':q' -> '1' once
--          someone may wait in the queue for this hold (see release.lua)
-- KEYS[2]  the fencing counter: the last token handed out (see fencing.lua), so tokens grow across all holders
-- KEYS[3]  the wait queue: a list of owner ids in arrival order
-- KEYS[4]  the queue's entries: owner id -> '<deadline ms>:<lease ms>:<attempt id>' (deadline in Redis time)
-- ARGV[1]  owner id (client id ':' thread id)
-- ARGV[2]  lease in milliseconds
-- ARGV[3]  the hold count the owner has now (0 for a first acquisition)
-- ARGV[4]  an id of this attempt, or '': kept in field ':attempt' of a hold it takes, so that only
--          this attempt's release, leaving or abandoning can give that hold back (not a later
--          attempt's of the same owner), and named in a hand-off message so that only this attempt
--          takes a hand-off announced late
-- ARGV[5]  how long the owner stays queued if the lock is taken, in ms; 0 = do not queue
-- KEYS[5]  (sent, read and written only with a restart grace) the server's LASTSAVE when this script last
--          made sure that the server had not restarted within the grace (see grace.lua)
-- ARGV[6]  the restart grace in ms (see grace.lua); 0 = none
-- ARGV[7]  '1' if this client has held a lock on this server before, else '0' (see grace.lua)
-- KEYS[6]  (sent, read and written only with a restart grace) the server's replication id when this
--          script last checked for a promotion, and when (see grace.lua's promotedGraceUntil)
-- Returns  {1, token} acquired or re-entered (also: release.lua handed the lock to this owner);
--          token is -2 when none was issued yet: token.lua issues one when the holder asks, so the
--          many holders that never ask cost no counter update;
--          {0, ms, last token} not acquired (taken), worth retrying after at most ms, or {0, ms, last
--          token, 1}: the server serves its restart grace, which ends in ms; a hand-off to this owner with a token up to 'last token' was
--          made before this call, and has lapsed since; {-1, 0} the owner believed it held
--          the lock but its hold is gone (lost).
-- The count is set to ARGV[3] + 1, not incremented, so a copy of this call re-sent after a
-- reconnect leaves the count as one call would.
-- LockScripts puts acquire-free.lua first, then grace.lua, then this file: owner and present come
-- from acquire-free.lua, which has taken the lock already where it was free and no grace applied.

-- grace.lua's restart grace (LockScripts puts that file before this one) with this script's keys.
local function serveGrace()
  return startOrServeGrace(KEYS[2], KEYS[5], KEYS[6], ARGV[6], ARGV[7])
end

-- Takes the free lock for this attempt; its fencing token is issued when asked for (token.lua).
-- queued: a queue exists, which the hold's release must look in (field ':q'). acquire-free.lua
-- repeats take(false) for a client without a grace, before any function is defined.
local function take(queued)
  if ARGV[4] ~= '' then
    redis.call('hset', KEYS[1], owner, '1', ':attempt', ARGV[4])
  else
    redis.call('hset', KEYS[1], owner, '1')
  end
  if queued then
    -- A take from a queue (not the uncontended path) can afford a command of its own for the mark.
    redis.call('hset', KEYS[1], ':q', '1')
  end
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {1, -2}
end

local graceLeft = nil
if present == 0 then
  -- Compared as text: Lua's tonumber costs more than the comparison, on every call.
  if ARGV[3] ~= '0' then
    return {-1, 0}
  end
  graceLeft = serveGrace()
  if not graceLeft then
    return take(false)
  end
end

-- The functions of the paths below are defined only here, past the free lock's path: Lua creates a
-- closure for every function definition it runs through, on every call, and an uncontended
-- acquisition needs none of them.
local held = tonumber(ARGV[3])
local queueFor = tonumber(ARGV[5])

local function now()
  local t = redis.call('time')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The last token handed out: a refusal carries it, so that the waiter can tell a hand-off made
-- before this refusal (stale: the lock has been someone else's since) from one made after it. With
-- no number in the counter (lost, or in a restart grace), the server clock in microseconds, which
-- every earlier token is below and every later one above.
local function lastToken()
  local last = tonumber(redis.call('get', KEYS[2]) or '')
  if last then
    return last
  end
  local t = redis.call('time')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- The first queued owner whose entry has not lapsed; lapsed heads (crashed or gone waiters) are dropped.
local function firstLive(t)
  while true do
    local head = redis.call('lindex', KEYS[3], 0)
    if not head then
      return nil, 0
    end
    local entry = redis.call('hget', KEYS[4], head)
    local deadline = entry and tonumber(string.match(entry, '^(%d+)')) or 0
    if deadline >= t then
      return head, deadline
    end
    redis.call('lpop', KEYS[3])
    redis.call('hdel', KEYS[4], head)
  end
end

-- taken: whether the lock hash exists, which then learns that someone waits, so that its
-- release looks in the queue: a release of a hold nobody queued for does not (see release.lua). A
-- lock taken later from a queue marks its hash itself (take(true)).
local function enqueue(t, taken)
  if queueFor <= 0 then
    return
  end
  if taken then
    redis.call('hset', KEYS[1], ':q', '1')
  end
  -- HSET answers 1 for a new field: the owner is not in the list yet.
  if redis.call('hset', KEYS[4], owner, string.format('%d:%s:%s', t + queueFor, ARGV[2], ARGV[4])) == 1 then
    redis.call('rpush', KEYS[3], owner)
  end
  if redis.call('pttl', KEYS[3]) < queueFor then
    redis.call('pexpire', KEYS[3], queueFor)
    redis.call('pexpire', KEYS[4], queueFor)
  end
end

if present == 0 then
  -- The server is serving its restart grace: wait in line.
  enqueue(now(), false)
  return {0, graceLeft, lastToken(), 1}
end
if present == 1 and redis.call('exists', KEYS[1]) == 0 then
  -- Free, with a queue: the first live waiter goes first.
  if held > 0 then
    return {-1, 0}
  end
  local t = now()
  local head, headDeadline = firstLive(t)
  if head ~= nil and head ~= owner then
    -- An earlier waiter is about to take it (the holder's lease ran out unreleased).
    enqueue(t, false)
    return {0, math.max(headDeadline - t, 1), lastToken()}
  end
  local graceLeft = serveGrace()
  if graceLeft then
    enqueue(t, false)
    return {0, graceLeft, lastToken(), 1}
  end
  if head == owner then
    redis.call('lpop', KEYS[3])
    redis.call('hdel', KEYS[4], owner)
  end
  return take(true)
end
-- Taken. By this owner (re-entering, or taking up a hold handed over): its count, token and attempt in one call.
local mine = redis.call('hmget', KEYS[1], owner, ':token', ':attempt')
if mine[1] then
  if held == 0 and ARGV[4] ~= '' and mine[3] ~= ARGV[4] then
    -- Neither a re-entry nor a hand-off to this attempt: a hold of this owner that it no longer knows
    -- (restored from a snapshot after it was released, or one whose release never landed). Taking it
    -- makes a new holder: it serves the restart grace, and gets a new token when it asks for one.
    local graceLeft = serveGrace()
    if graceLeft then
      enqueue(now(), true)
      return {0, graceLeft, lastToken(), 1}
    end
    redis.call('hdel', KEYS[1], ':token')
    redis.call('hset', KEYS[1], owner, 1, ':attempt', ARGV[4])
    redis.call('pexpire', KEYS[1], ARGV[2])
    return {1, -2}
  end
  if held == 0 and ARGV[4] ~= '' then
    -- Taking up a hold handed over: it is this attempt's now.
    redis.call('hset', KEYS[1], owner, held + 1, ':attempt', ARGV[4])
  else
    redis.call('hset', KEYS[1], owner, held + 1)
  end
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {1, tonumber(mine[2] or '-2')}
end
if held > 0 then
  return {-1, 0}
end
if queueFor > 0 then
  enqueue(now(), true)
end
return {0, redis.call('pttl', KEYS[1]), lastToken()}
