-- The restart grace, shared by every acquiring script: acquire.lua, and the read-write locks' and
-- semaphores' scripts (acquire-shared.lua, release-shared.lua), which LockScripts puts after this
-- file. It takes its keys and arguments as parameters, since each script has them in other places:
-- counter          the fencing counter (acquire.lua's KEYS[2])
-- lastSaveSeen     the server's LASTSAVE when a script last made sure that the server had not
--                  restarted within the grace (acquire.lua's KEYS[5])
-- replicationIdSeen the server's replication id when a script last checked for a promotion, and
--                  when (acquire.lua's KEYS[6])
-- graceMs          the restart grace in ms; 0 = none (acquire.lua's ARGV[6])
-- heldHere         '1' if this client has held a lock on this server before, else '0' (ARGV[7])

-- The server's uptime in whole seconds (INFO server), or nil for a user that may not run INFO.
local function uptimeSeconds()
  local info = redis.pcall('info', 'server')
  return (type(info) == 'string') and tonumber(string.match(info, 'uptime_in_seconds:(%d+)')) or nil
end

-- The restart grace: a server that restarted (from a snapshot or an append-only file that missed the
-- last holds, or empty) or lost its data lets no new holder in until graceMs after its start, so
-- that holders it forgot learn of their loss first (their renewals find nothing). While it lasts the
-- fencing counter holds 'grace:<until ms>', which every client serves, whatever its own setting;
-- once it is over the counter holds the server clock in microseconds, which every later token is
-- above. Returns nil when a new holder may enter, else the ms left of the grace.
--
-- A restart is recognised by LASTSAVE, which a server sets to the time it started (and to the time of
-- every save after that): when it differs from what lastSaveSeen kept, the server saved or restarted since
-- the last look, and INFO (run then only, as it costs more than the whole script) says how long it has
-- been up. This runs during a grace too: a snapshot taken during one restores its marker, which must
-- not pass for the end of the grace of a later restart. A server up longer than the grace admits the
-- first holder at once if it never held a lock; one that started within the grace serves what is left
-- of it. A missing counter on a server up longer than that was flushed (FLUSHALL, an eviction) or
-- never used: a client that has held a lock on it before (heldHere '1') knows it was flushed and starts the
-- grace for everyone from now; a client that never did cannot tell, and the holders the server forgot
-- learn of it at their next renewal. LASTSAVE is kept only from an earlier second than the current
-- one, so that a restart within the second of the last save is not missed. A user that may not run
-- LASTSAVE or INFO (or an uptime that cannot be read) gets the grace only for a missing counter,
-- counted from then, as before these checks.
-- seenSave is lastSaveSeen's value, read by the caller.
local function restartGraceUntil(last, nowSeconds, nowMs, lastSaveSeen, seenSave, graceMs, heldHere)
  local grace = tonumber(graceMs)
  local saved = redis.pcall('lastsave')
  if last and (type(saved) ~= 'number' or tonumber(seenSave or '') == saved) then
    return nil
  end
  local up = (type(saved) == 'number') and uptimeSeconds() or nil
  if type(saved) == 'number' and saved < nowSeconds then
    -- Also when the uptime cannot be read: the check is not repeated on every call then.
    redis.call('set', lastSaveSeen, saved)
  end
  local untilMs = nil
  if up then
    -- The uptime counts whole seconds from the start's second to the current one: the start lies
    -- before the second after (now - up), which is taken, so that the grace never ends early.
    untilMs = (nowSeconds - up + 1) * 1000 + grace
  elseif not last then
    untilMs = nowMs + grace
  end
  if not last and heldHere == '1' then
    untilMs = math.max(untilMs or 0, nowMs + grace)
  end
  return untilMs
end

-- A replica promoted to master may have missed the latest holds (replication sends them after the
-- fact): it serves the grace from the first new holder's call that finds it promoted (when it was
-- promoted is not known; its former master's holders learn of a missing hold at their next renewal).
-- replicationIdSeen keeps '<replication id>:<checked at ms>:<grace until ms>', written through the master and so
-- copied to its replicas. A server that answers under another replication id than the kept one, and
-- has been up since before that check, changed its role while running: a promotion (also a planned
-- one, FAILOVER or SENTINEL FAILOVER, which costs the same grace). One that started after the check
-- restarted, which the restart check serves from its start. INFO is asked at most every 100 ms: a
-- promotion follows the death of its master by more than that (Sentinel's down-after-milliseconds),
-- so the kept check is always older than the promotion when a new holder arrives. Returns when a
-- grace for a promotion ends, or nil if none is running. kept is replicationIdSeen's value, read by
-- the caller.
local PROMOTION_CHECK_MS = 100

local function promotedGraceUntil(nowMs, replicationIdSeen, kept, graceMs)
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
      graceUntil = math.max(graceUntil or 0, nowMs + tonumber(graceMs))
    end
  end
  redis.call('set', replicationIdSeen, id .. ':' .. string.format('%.0f', nowMs) .. ':' .. string.format('%.0f', graceUntil or 0))
  return (graceUntil and graceUntil > nowMs) and graceUntil or nil
end

local function startOrServeGrace(counter, lastSaveSeen, replicationIdSeen, graceMs, heldHere)
  local last, seenSave, seenReplication
  -- '0' (no grace) is told apart as text: Lua's tonumber costs more, on every acquisition.
  local graced = graceMs ~= '0' and tonumber(graceMs) > 0
  if graced then
    -- One MGET for the counter and both checks' keys: every acquisition of a free lock reads all three.
    local kept = redis.pcall('mget', counter, lastSaveSeen, replicationIdSeen)
    if kept.err then
      -- A user whose ACL predates MGET in docs/redis.md's list (NOPERM): one GET each, as before.
      kept = {redis.call('get', counter), redis.call('get', lastSaveSeen), redis.call('get', replicationIdSeen)}
    end
    last, seenSave, seenReplication = kept[1], kept[2], kept[3]
  else
    last = redis.call('get', counter)
  end
  -- acquire-free.lua repeats this test for a client without a grace, before this file's functions
  -- are defined.
  local marked = last and string.sub(last, 1, 6) == 'grace:'
  if not marked and not graced then
    return nil
  end
  local t = redis.call('time')
  local clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local nowMs = math.floor(clock / 1000)
  local graceUntil = marked and tonumber(string.sub(last, 7)) or nil
  if graced then
    local restarted = restartGraceUntil(last, tonumber(t[1]), nowMs, lastSaveSeen, seenSave, graceMs, heldHere)
    if restarted and restarted > nowMs and (not graceUntil or restarted > graceUntil) then
      graceUntil = restarted
      redis.call('set', counter, 'grace:' .. string.format('%.0f', graceUntil))
    end
    -- A promotion's grace stays in replicationIdSeen: the counter came through replication and
    -- keeps its last token, which later tokens must stay above whatever the new master's clock says.
    local promoted = promotedGraceUntil(nowMs, replicationIdSeen, seenReplication, graceMs)
    if promoted and (not graceUntil or promoted > graceUntil) then
      graceUntil = promoted
    end
  end
  if graceUntil and graceUntil > nowMs then
    return graceUntil - nowMs
  end
  if marked or not last then
    -- Formatted, not tostring(): Lua would write a 16-digit number in exponent notation.
    redis.call('set', counter, string.format('%.0f', clock))
  end
  return nil
end
