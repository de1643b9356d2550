-- Acquires or re-enters a reentrant lock, queueing the caller for a fair hand-off if it will wait.
-- KEYS[1]  the lock hash: field <owner id> -> hold count, field ':token' -> fencing token
-- KEYS[2]  the fencing counter: the last token handed out (see nextToken), so tokens grow across all holders
-- KEYS[3]  the wait queue: a list of owner ids in arrival order
-- KEYS[4]  the queue's entries: owner id -> '<deadline ms>:<lease ms>:<ticket>' (deadline in Redis time)
-- ARGV[1]  owner id (client id ':' thread id)
-- ARGV[2]  lease in milliseconds
-- ARGV[3]  the hold count the owner has now (0 for a first acquisition)
-- ARGV[4]  an id of this attempt or '' (Redlock): kept in field ':attempt' so that abandoning a
--          failed attempt later cannot delete the hold a newer attempt of the same owner took over
-- ARGV[5]  how long the owner stays queued if the lock is taken, in ms; 0 = do not queue
-- ARGV[6]  the attempt's ticket, named in the hand-off message so that only that attempt (not a
--          later one of the same thread) takes a hand-off announced late; kept in field ':ticket'
--          of a hold it takes, so that only this attempt's leaving can give that hold back
-- ARGV[7]  the restart grace in ms (see nextToken); 0 = none
-- Returns  {1, token} acquired or re-entered (also: release.lua handed the lock to this owner);
--          {0, ms, last token} not acquired (taken, or the server serves its restart grace), worth
--          retrying after at most ms; a hand-off to this owner with a token up to 'last token' was
--          made before this call, and has lapsed since; {-1, 0} the owner believed it held
--          the lock but its hold is gone (lost).
-- The count is set to ARGV[3] + 1, not incremented, so a copy of this call re-sent after a
-- reconnect leaves the count as one call would.
local owner = ARGV[1]
local held = tonumber(ARGV[3])
local queueFor = tonumber(ARGV[5])

-- The next fencing token: one more than the last, and never below the server clock in microseconds,
-- so that a counter lost with the data (a restart without persistence, FLUSHALL, a failover to a
-- replica that missed it) restarts above every token handed out before, as long as the server's
-- clock does not step back. A missing counter is also how a server that lost its data is recognised:
-- with a restart grace (ARGV[7] ms) the counter holds 'grace:<until ms>' instead, and no new holder is
-- let in until then, so that holders the server forgot learn of their loss first (their renewals
-- find nothing). Returns the token and its text, or nil and the ms left of the grace. release.lua
-- has a twin that never starts a grace.
local function nextToken()
  local t = redis.call('time')
  local clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = redis.call('get', KEYS[2])
  if not last then
    local grace = tonumber(ARGV[7])
    if grace > 0 then
      redis.call('set', KEYS[2], 'grace:' .. string.format('%.0f', math.floor(clock / 1000) + grace))
      return nil, grace
    end
    last = '0'
  elseif string.sub(last, 1, 6) == 'grace:' then
    local left = tonumber(string.sub(last, 7)) - math.floor(clock / 1000)
    if left > 0 then
      return nil, left
    end
    last = '0'
  end
  local token = math.max(tonumber(last) + 1, clock)
  -- Formatted, not tostring(): Lua would write a 16-digit number in exponent notation.
  local text = string.format('%.0f', token)
  redis.call('set', KEYS[2], text)
  return token, text
end

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

local function enqueue(t)
  if queueFor <= 0 then
    return
  end
  if redis.call('hexists', KEYS[4], owner) == 0 then
    redis.call('rpush', KEYS[3], owner)
  end
  redis.call('hset', KEYS[4], owner, string.format('%d:%s:%s', t + queueFor, ARGV[2], ARGV[6]))
  if redis.call('pttl', KEYS[3]) < queueFor then
    redis.call('pexpire', KEYS[3], queueFor)
    redis.call('pexpire', KEYS[4], queueFor)
  end
end

if redis.call('exists', KEYS[1]) == 0 then
  if held > 0 then
    return {-1, 0}
  end
  local t = 0
  local head = nil
  local headDeadline = 0
  if redis.call('exists', KEYS[3]) == 1 then
    t = now()
    head, headDeadline = firstLive(t)
  end
  if head ~= nil and head ~= owner then
    -- Free, but an earlier waiter is about to take it (the holder's lease ran out unreleased).
    enqueue(t)
    return {0, math.max(headDeadline - t, 1), lastToken()}
  end
  local token, text = nextToken()
  if not token then
    -- The server is serving its restart grace: wait in line.
    enqueue(t > 0 and t or now())
    return {0, text, lastToken()}
  end
  if head == owner then
    redis.call('lpop', KEYS[3])
    redis.call('hdel', KEYS[4], owner)
  end
  if ARGV[6] ~= '' then
    redis.call('hset', KEYS[1], owner, 1, ':token', text, ':ticket', ARGV[6])
  else
    redis.call('hset', KEYS[1], owner, 1, ':token', text)
  end
  if ARGV[4] ~= '' then
    redis.call('hset', KEYS[1], ':attempt', ARGV[4])
  end
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {1, token}
end
if redis.call('hexists', KEYS[1], owner) == 1 then
  redis.call('hset', KEYS[1], owner, held + 1)
  if held == 0 then
    -- Taking up a hold handed over: it is this attempt's now.
    if ARGV[4] ~= '' then
      redis.call('hset', KEYS[1], ':attempt', ARGV[4])
    end
    if ARGV[6] ~= '' then
      redis.call('hset', KEYS[1], ':ticket', ARGV[6])
    end
  end
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {1, tonumber(redis.call('hget', KEYS[1], ':token'))}
end
if held > 0 then
  return {-1, 0}
end
if queueFor > 0 then
  enqueue(now())
end
return {0, redis.call('pttl', KEYS[1]), lastToken()}
