-- Acquires or re-enters a read hold, a write hold or a semaphore permit, queueing the caller for a
-- fair hand-off if it will wait. LockScripts puts announce.lua, fencing.lua, grace.lua and
-- shared-common.lua first.
-- KEYS[1]  the state hash (see shared-common.lua): <prefix>:rw:{<name>} or <prefix>:sem:{<name>}
-- KEYS[2]  the fencing counter (the exclusive locks' one: tokens of every kind grow together)
-- KEYS[3]  the wait queue: owner ids in arrival order
-- KEYS[4]  the queue's entries: owner id -> '<deadline ms>:<lease ms>:<kind>:<attempt id>'
-- KEYS[5]  (read and written only with a restart grace) the server's LASTSAVE seen (acquire.lua's KEYS[5])
-- KEYS[6]  (read and written only with a restart grace) the replication id seen (acquire.lua's KEYS[6])
-- ARGV[1]  owner id
-- ARGV[2]  lease in ms
-- ARGV[3]  the hold count of this kind the owner has now (0 for a first acquisition)
-- ARGV[4]  this attempt's id, or ''
-- ARGV[5]  how long to stay queued if refused, in ms; 0 = do not queue
-- ARGV[6]  the kind: 'r' read, 'w' write, 'p' permit
-- ARGV[7]  the semaphore's permits (kind 'p'), else 0
-- ARGV[8]  at most how long a hold handed on by this call lasts until its owner takes it up (ms)
-- ARGV[9]  the start of every client's hand-off channel (release.lua's ARGV[6])
-- ARGV[10] the restart grace in ms, 0 for none (see grace.lua)
-- ARGV[11] '1' if this client has held a lock on this server before, else '0' (see grace.lua)
-- ARGV[12] (only on a Cluster with sharded pub/sub) the lock's shard channel (see announce.lua)
-- Returns  {1, token} acquired or re-entered (token -2: issued when asked, token-shared.lua);
--          {0, ms, last token} not acquired, worth asking again within ms (queued if ARGV[5] > 0),
--          or {0, ms, last token, 1}: the server serves its restart grace, which ends in ms;
--          {-1, 0} the owner believed it held this kind but its hold is gone (lost);
--          {-2, permits} the semaphore exists with other permits than ARGV[7] (nothing changed).
-- An upgrade (a read holder asking for the write lock) never gets here: the engine refuses it.
-- Counts are set from ARGV[3], never incremented, so a copy re-sent after a reconnect counts once.
local h, counter, q, e = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, lease, held, attempt = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local queueFor, kind, permits = tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
local place, grantPrefix, grace = tonumber(ARGV[8]), ARGV[9], ARGV[10]
graceArgs = { counter, KEYS[5], KEYS[6], grace, ARGV[11] }
announceOn(ARGV[12])

if kind == 'p' then
  local stored = redis.call('hget', h, ':permits')
  if stored and tonumber(stored) ~= permits then
    return {-2, tonumber(stored)}
  end
end
local now, time = clock()
prune(h, now)

-- Refused: queued (if it will wait) behind whoever is first, told when to ask again.
local function refuse()
  enqueue(h, q, e, now, owner, queueFor, lease, kind, attempt)
  if redis.call('pttl', h) == -1 then
    -- A semaphore's hash made only for ':permits' by a caller that does not queue.
    redis.call('pexpire', h, math.max(lease, 1))
  end
  if graceChecked and graceMs then
    return {0, graceMs, lastToken(counter), 1}
  end
  local next = tonumber(redis.call('hget', h, ':next') or '')
  return {0, math.max((next or (now + place)) - now, 1), lastToken(counter)}
end

-- Re-entry, or taking up a hold handed over to this attempt.
local mine = redis.call('hget', h, kind .. ':' .. owner)
if mine then
  local count, _, holdAttempt, token = parseHold(mine)
  if held == 0 and attempt ~= '' and holdAttempt ~= attempt then
    -- A hold of this owner that it no longer knows (its release never landed): taken afresh, so
    -- it serves the restart grace and gets a new token when asked, as in acquire.lua.
    if graceLeft() then
      return refuse()
    end
    -- A place queued while the grace refused it would otherwise grant it the hold again later.
    if redis.call('hdel', e, owner) == 1 then
      redis.call('lrem', q, 1, owner)
    end
    putHolder(h, kind, owner, 1, now + lease, attempt, nil, now)
    return {1, -2}
  end
  putHolder(h, kind, owner, held + 1, now + lease, holdAttempt, token, now)
  return {1, tonumber(token or '-2')}
end
if held > 0 then
  return {-1, 0}
end
-- A write asked by an owner with a read hold of its own is no upgrade the engine let through (it
-- refuses those before asking): that read hold is one it no longer knows, kept by unlockKeepingFor
-- or handed to an attempt that gave up. It is waited for like any reader's, and it lapses.
if kind == 'r' and redis.call('hget', h, ':writer') == owner then
  -- Downgrade: the writer reads without waiting; waiters stay behind its read hold. Its write
  -- hold kept the state, so no grace is served.
  putHolder(h, 'r', owner, 1, now + lease, attempt, nil, now)
  return {1, -2}
end
if kind == 'p' then
  redis.call('hset', h, ':permits', permits)
end
-- Queued owners go first (this one among them, if its turn has come).
if redis.call('llen', q) > 0 then
  if admit(h, q, e, now, time, owner, lease, attempt, place, grantPrefix, grace, kind) then
    return {1, -2}
  end
end
-- After admit() the head, if any, is live and cannot enter: neither can a newcomer behind it.
if redis.call('llen', q) == 0 and admissible(h, kind, owner) and not graceLeft() then
  putHolder(h, kind, owner, 1, now + lease, attempt, nil, now)
  return {1, -2}
end
return refuse()
