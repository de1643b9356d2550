-- Releases one read, write or permit hold; the last one hands the freed capacity to the queue
-- (admit(): the next writer, or every reader up to the next writer, or as many permit waiters as
-- permits are free). Also takes a waiting attempt out of the queue, which may let those behind it
-- in (readers behind a writer that gave up). LockScripts puts announce.lua, fencing.lua, grace.lua
-- and shared-common.lua first.
-- KEYS[1..4] as acquire-shared.lua
-- KEYS[5]  this owner's release marker: the attempt id of the hold it last released, kept 15 s
-- KEYS[6]  (read and written only with a restart grace) the server's LASTSAVE seen (acquire.lua's KEYS[5])
-- KEYS[7]  (read and written only with a restart grace) the replication id seen (acquire.lua's KEYS[6])
-- ARGV[1]  owner id
-- ARGV[2]  the hold count of this kind the owner has before this release
-- ARGV[3]  '' release; 'leave' the attempt ARGV[4] stops waiting, and a hold handed to it meanwhile
--          is released; 'dequeue' it only leaves the queue (release.lua's modes)
-- ARGV[4]  the attempt that took the hold, or ''; leaving: the attempt that leaves
-- ARGV[5]  at most how long a hold handed on lasts until its owner takes it up (ms)
-- ARGV[6]  the start of every client's hand-off channel
-- ARGV[7]  the restart grace in ms, 0 for none (see grace.lua): no hand-off is made while it lasts
-- ARGV[8]  the kind: 'r', 'w' or 'p'
-- ARGV[9]  '1' if this client has held a lock on this server before, else '0' (see grace.lua)
-- ARGV[10] (only on a Cluster with sharded pub/sub) the lock's shard channel (see announce.lua)
-- Returns  release.lua's: 1 released; 0 still held with ARGV[2] - 1; -1 not held (lost);
--          2 left the queue; 3 this very release was applied before (a re-sent copy).
-- Messages 'grant <token> <owner> <attempt> <lock channel>' per hand-off on the new holder's client
-- channel; 'released' on the lock's channel (KEYS[1] .. ':released', or ARGV[10]) when nobody is queued and a newcomer could enter
-- (see settle in shared-common.lua).
local h, counter, q, e, marker = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, held, mode, attempt = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local place, grantPrefix, grace, kind = tonumber(ARGV[5]), ARGV[6], ARGV[7], ARGV[8]
local field = kind .. ':' .. owner
graceArgs = { counter, KEYS[6], KEYS[7], grace, ARGV[9] }
announceOn(ARGV[10])

local now, time = clock()
prune(h, now)
if mode ~= '' then
  local entry = redis.call('hget', e, owner)
  if entry then
    -- Only this attempt's place: a later attempt of the same owner may have queued since.
    if string.match(entry, '^%d+:%d+:[rwp]:(.*)$') == attempt then
      redis.call('hdel', e, owner)
      redis.call('lrem', q, 1, owner)
      admit(h, q, e, now, time, nil, 0, '', place, grantPrefix, grace)
      settle(h, q, nil)
    end
    return 2
  end
  local count, _, holdAttempt = parseHold(redis.call('hget', h, field))
  if mode == 'dequeue' or count ~= 1 or holdAttempt ~= attempt then
    return 2
  end
  -- A hold handed to this attempt that it never took up: given back, and handed on.
else
  local count, deadline, holdAttempt, token = parseHold(redis.call('hget', h, field))
  if not count or (attempt ~= '' and holdAttempt ~= attempt) then
    if attempt ~= '' and redis.call('get', marker) == attempt then
      return 3
    end
    return -1
  end
  if held - 1 > 0 then
    -- Set from ARGV[2], never decremented: a re-sent copy cannot take a reentrant hold of 2 to 0.
    redis.call('hset', h, field, holdValue(held - 1, deadline, holdAttempt, token))
    return 0
  end
  if attempt ~= '' then
    redis.call('set', marker, attempt, 'px', 15000)
  end
end
removeHolder(h, kind, owner)
admit(h, q, e, now, time, nil, 0, '', place, grantPrefix, grace)
settle(h, q, kind)
return 1
