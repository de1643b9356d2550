-- Acquires or re-enters a reentrant lock, queueing the caller for a fair hand-off if it will wait.
-- KEYS[1]  the lock hash: field <owner id> -> hold count, ':attempt' -> the attempt that took the
--          hold, ':token' -> fencing token once one was issued (see token.lua)
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
-- KEYS[5]  (read and written only with a restart grace) the server's LASTSAVE when this script last
--          made sure that the server had not restarted within the grace (see startOrServeGrace)
-- ARGV[6]  the restart grace in ms (see startOrServeGrace); 0 = none
-- ARGV[7]  '1' if this client has held a lock on this server before, else '0' (see startOrServeGrace)
-- KEYS[6]  (read and written only with a restart grace) the server's replication id when this
--          script last checked for a promotion, and when (see promotedGraceUntil)
-- Returns  {1, token} acquired or re-entered (also: release.lua handed the lock to this owner);
--          token is -2 when none was issued yet: token.lua issues one when the holder asks, so the
--          many holders that never ask cost no counter update;
--          {0, ms, last token} not acquired (taken), worth retrying after at most ms, or {0, ms, last
--          token, 1}: the server serves its restart grace, which ends in ms; a hand-off to this owner with a token up to 'last token' was
--          made before this call, and has lapsed since; {-1, 0} the owner believed it held
--          the lock but its hold is gone (lost).
-- The count is set to ARGV[3] + 1, not incremented, so a copy of this call re-sent after a
-- reconnect leaves the count as one call would.
local owner = ARGV[1]
local held = tonumber(ARGV[3])
local queueFor = tonumber(ARGV[5])

-- The server's uptime in whole seconds (INFO server), or nil for a user that may not run INFO.
local function uptimeSeconds()
  local info = redis.pcall('info', 'server')
  return (type(info) == 'string') and tonumber(string.match(info, 'uptime_in_seconds:(%d+)')) or nil
end

-- The restart grace: a server that restarted (from a snapshot or an append-only file that missed the
-- last holds, or empty) or lost its data lets no new holder in until ARGV[6] ms after its start, so
-- that holders it forgot learn of their loss first (their renewals find nothing). While it lasts the
-- fencing counter holds 'grace:<until ms>', which every client serves, whatever its own setting;
-- once it is over the counter holds the server clock in microseconds, which every later token is
-- above. Returns nil when a new holder may enter, else the ms left of the grace.
--
-- A restart is recognised by LASTSAVE, which a server sets to the time it started (and to the time of
-- every save after that): when it differs from what KEYS[5] kept, the server saved or restarted since
-- the last look, and INFO (run then only, as it costs more than the whole script) says how long it has
-- been up. This runs during a grace too: a snapshot taken during one restores its marker, which must
-- not pass for the end of the grace of a later restart. A server up longer than the grace admits the
-- first holder at once if it never held a lock; one that started within the grace serves what is left
-- of it. A missing counter on a server up longer than that was flushed (FLUSHALL, an eviction) or
-- never used: a client that has held a lock on it before (ARGV[7]) knows it was flushed and starts the
-- grace for everyone from now; a client that never did cannot tell, and the holders the server forgot
-- learn of it at their next renewal. LASTSAVE is kept only from an earlier second than the current
-- one, so that a restart within the second of the last save is not missed. A user that may not run
-- LASTSAVE or INFO (or an uptime that cannot be read) gets the grace only for a missing counter,
-- counted from then, as before these checks.
local function restartGraceUntil(last, nowSeconds, nowMs)
  local grace = tonumber(ARGV[6])
  local saved = redis.pcall('lastsave')
  if last and (type(saved) ~= 'number' or tonumber(redis.call('get', KEYS[5]) or '') == saved) then
    return nil
  end
  local up = (type(saved) == 'number') and uptimeSeconds() or nil
  if type(saved) == 'number' and saved < nowSeconds then
    -- Also when the uptime cannot be read: the check is not repeated on every call then.
    redis.call('set', KEYS[5], saved)
  end
  local untilMs = nil
  if up then
    -- The uptime counts whole seconds from the start's second to the current one: the start lies
    -- before the second after (now - up), which is taken, so that the grace never ends early.
    untilMs = (nowSeconds - up + 1) * 1000 + grace
  elseif not last then
    untilMs = nowMs + grace
  end
  if not last and ARGV[7] == '1' then
    untilMs = math.max(untilMs or 0, nowMs + grace)
  end
  return untilMs
end

-- A replica promoted to master may have missed the latest holds (replication sends them after the
-- fact): it serves the grace from the first new holder's call that finds it promoted (when it was
-- promoted is not known; its former master's holders learn of a missing hold at their next renewal).
-- KEYS[6] keeps '<replication id>:<checked at ms>:<grace until ms>', written through the master and so
-- copied to its replicas. A server that answers under another replication id than the kept one, and
-- has been up since before that check, changed its role while running: a promotion (also a planned
-- one, FAILOVER or SENTINEL FAILOVER, which costs the same grace). One that started after the check
-- restarted, which the restart check serves from its start. INFO is asked at most every 100 ms: a
-- promotion follows the death of its master by more than that (Sentinel's down-after-milliseconds),
-- so the kept check is always older than the promotion when a new holder arrives. Returns when a
-- grace for a promotion ends, or nil if none is running.
local PROMOTION_CHECK_MS = 100

local function promotedGraceUntil(nowMs)
  local kept = redis.call('get', KEYS[6])
  local keptId, checkedAt, graceUntil
  if kept then
    local id, at, untilMs = string.match(kept, '^(%x*):(%d+):(%d+)$')
    keptId, checkedAt, graceUntil = id, tonumber(at), tonumber(untilMs)
  end
  if checkedAt and nowMs >= checkedAt and nowMs - checkedAt < PROMOTION_CHECK_MS then
    return (graceUntil and graceUntil > nowMs) and graceUntil or nil
  end
  local info = redis.pcall('info', 'replication')
  local id = (type(info) == 'string') and string.match(info, 'master_replid:(%x+)') or ''
  if keptId and keptId ~= '' and id ~= '' and id ~= keptId then
    local up = uptimeSeconds()
    -- The uptime counts whole seconds: one more makes a start just before the check count as before it.
    if not up or (up + 1) * 1000 >= nowMs - checkedAt then
      graceUntil = math.max(graceUntil or 0, nowMs + tonumber(ARGV[6]))
    end
  end
  redis.call('set', KEYS[6], id .. ':' .. string.format('%.0f', nowMs) .. ':' .. string.format('%.0f', graceUntil or 0))
  return (graceUntil and graceUntil > nowMs) and graceUntil or nil
end

local function startOrServeGrace()
  local last = redis.call('get', KEYS[2])
  local marked = last and string.sub(last, 1, 6) == 'grace:'
  if not marked and tonumber(ARGV[6]) <= 0 then
    return nil
  end
  local t = redis.call('time')
  local clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local nowMs = math.floor(clock / 1000)
  local graceUntil = marked and tonumber(string.sub(last, 7)) or nil
  if tonumber(ARGV[6]) > 0 then
    local restarted = restartGraceUntil(last, tonumber(t[1]), nowMs)
    if restarted and restarted > nowMs and (not graceUntil or restarted > graceUntil) then
      graceUntil = restarted
      redis.call('set', KEYS[2], 'grace:' .. string.format('%.0f', graceUntil))
    end
    -- A promotion's grace stays in KEYS[6]: the counter came through replication and keeps its last
    -- token, which later tokens must stay above whatever the new master's clock says.
    local promoted = promotedGraceUntil(nowMs)
    if promoted and (not graceUntil or promoted > graceUntil) then
      graceUntil = promoted
    end
  end
  if graceUntil and graceUntil > nowMs then
    return graceUntil - nowMs
  end
  if marked or not last then
    -- Formatted, not tostring(): Lua would write a 16-digit number in exponent notation.
    redis.call('set', KEYS[2], string.format('%.0f', clock))
  end
  return nil
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
  -- HSET answers 1 for a new field: the owner is not in the list yet.
  if redis.call('hset', KEYS[4], owner, string.format('%d:%s:%s', t + queueFor, ARGV[2], ARGV[4])) == 1 then
    redis.call('rpush', KEYS[3], owner)
  end
  if redis.call('pttl', KEYS[3]) < queueFor then
    redis.call('pexpire', KEYS[3], queueFor)
    redis.call('pexpire', KEYS[4], queueFor)
  end
end

-- Takes the free lock for this attempt; its fencing token is issued when asked for (token.lua).
local function take()
  if ARGV[4] ~= '' then
    redis.call('hset', KEYS[1], owner, 1, ':attempt', ARGV[4])
  else
    redis.call('hset', KEYS[1], owner, 1)
  end
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {1, -2}
end

-- One EXISTS for the lock and its queue: the uncontended path needs neither, and with both there
-- (the contended path) the lock is known to be taken without a second look.
local present = redis.call('exists', KEYS[1], KEYS[3])
if present == 0 then
  if held > 0 then
    return {-1, 0}
  end
  local graceLeft = startOrServeGrace()
  if graceLeft then
    -- The server is serving its restart grace: wait in line.
    enqueue(now())
    return {0, graceLeft, lastToken(), 1}
  end
  return take()
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
    enqueue(t)
    return {0, math.max(headDeadline - t, 1), lastToken()}
  end
  local graceLeft = startOrServeGrace()
  if graceLeft then
    enqueue(t)
    return {0, graceLeft, lastToken(), 1}
  end
  if head == owner then
    redis.call('lpop', KEYS[3])
    redis.call('hdel', KEYS[4], owner)
  end
  return take()
end
-- Taken. By this owner (re-entering, or taking up a hold handed over): its count, token and attempt in one call.
local mine = redis.call('hmget', KEYS[1], owner, ':token', ':attempt')
if mine[1] then
  if held == 0 and ARGV[4] ~= '' and mine[3] ~= ARGV[4] then
    -- Neither a re-entry nor a hand-off to this attempt: a hold of this owner that it no longer knows
    -- (restored from a snapshot after it was released, or one whose release never landed). Taking it
    -- makes a new holder: it serves the restart grace, and gets a new token when it asks for one.
    local graceLeft = startOrServeGrace()
    if graceLeft then
      enqueue(now())
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
  enqueue(now())
end
return {0, redis.call('pttl', KEYS[1]), lastToken()}
