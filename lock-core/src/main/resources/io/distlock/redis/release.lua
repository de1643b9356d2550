-- Releases one hold of a reentrant lock. At zero the lock goes straight to the first live queued
-- waiter (that waiter's client is told on the channel), or, with nobody queued, is deleted and
-- waiters are woken. Also takes a waiting attempt out of the queue ('leave', 'dequeue').
-- KEYS[1]  the lock hash: field <owner id> -> hold count, ':attempt' -> the attempt that took the
--          hold, ':token' -> its fencing token if one was issued, ':q' -> '1' if someone may have
--          queued for it (acquire.lua's enqueue): only then (or with a ':token', see below) does
--          its release look in the queue
-- KEYS[2]  the fencing counter: the last token handed out
-- KEYS[3]  the wait queue: a list of owner ids in arrival order
-- KEYS[4]  the queue's entries: owner id -> '<deadline ms>:<lease ms>:<attempt id>' (deadline in Redis time)
-- KEYS[5]  this owner's release marker: the hold it last released, renamed (its field ':attempt', or
--          ':ticket', names the attempt), kept for what the hold had left of its lease or for ARGV[9]
--          ms; or, for a user whose ACL predates RENAME in docs/redis.md's list, the attempt id as a
--          string, kept as long
-- ARGV[1]  owner id
-- ARGV[2]  the hold count the owner has before this release
-- ARGV[3]  '' to release; 'leave': attempt ARGV[4] gives up waiting: it leaves the queue, and a
--          hold handed to it meanwhile (which it never took up) is released as below; 'dequeue':
--          attempt ARGV[4] only leaves the queue (its client closes; a hold handed to it is its
--          waiter's, which gives it back itself)
-- ARGV[4]  the attempt that took the hold (acquire.lua's ARGV[4]), or '': a release of an earlier
--          hold that arrives after the same owner's next attempt took the lock over must not delete
--          that one; leaving: the attempt that leaves
-- ARGV[5]  the lease, in ms, of a hold handed on, at most: the new holder extends it to its own
--          lease when it takes the hold up, so a waiter that vanished since it last called keeps
--          the lock only this long
-- ARGV[6]  the start of every client's hand-off channel: a hand-off is published on the channel of
--          the client whose owner it is for (ARGV[6] followed by the client id, the owner id's part
--          before its first ':'), so no other client is woken by it
-- ARGV[7]  the restart grace in ms, 0 for none (see acquire.lua)
-- ARGV[8]  '1' to announce a release even with nobody queued: for waiters that do not queue
--          (Redlock's); '' otherwise, where every waiter is queued and a release nobody waits
--          for announces nothing
-- ARGV[9]  how long the release marker lives, in ms; '': as long as the hold had left of its lease,
--          which the client knows to be at least 15 s and at most 30 s (a marker that outlives
--          its need takes memory; one that lapses early reports a re-sent release as a lost hold)
-- ARGV[10] (only on a Cluster with sharded pub/sub) the lock's shard channel: announcements go out
--          with SPUBLISH there and on '<ARGV[10]>:<client id>' instead (see announce.lua)
-- The lock's own channel, on which waiters listen for it, is otherwise KEYS[1] followed by
-- ':released' (a channel, not a key, so it need not be sent: one argument less on every release).
-- Returns  1 released (handed on or freed); 0 still held with ARGV[2] - 1 holds; -1 the owner
--          does not hold the lock; 2 the attempt left the queue without having been handed the
--          lock; 3 the owner does not hold the lock because this very release was applied before
--          (a copy re-sent after a reconnect), not because the hold was lost.
-- Messages 'grant <token> <owner id> <attempt id> <lock channel>' on the new holder's client channel
-- when handed on; 'released' on the lock channel when freed and someone queued (see ARGV[8]).
-- The count is set to ARGV[2] - 1, not decremented, so a copy re-sent after a reconnect cannot
-- release a reentrant hold of 2 down to 0.
-- This file ends where a release of a hold nobody queued for is done; LockScripts puts announce.lua,
-- fencing.lua (nextToken, for a hand-off's token) and release-handoff.lua after it, whose functions
-- Lua would otherwise create as closures on every call, the uncontended ones too.

local owner = ARGV[1]
local attempt = ARGV[4]
local remaining
local marked = false
-- Whether someone may be queued: a waiter marks the hold (':q') when it queues, so the release of a
-- hold nobody queued for skips the queue. Leaving (rare) always looks, and so does the release of a
-- hold with a token but no mark: an earlier distlock's hand-off (a rolling upgrade), which does not
-- mark the hold it makes, while the waiters queued behind it marked the one it replaced.
local queued = true
if ARGV[3] ~= '' then
  local entry = redis.call('hget', KEYS[4], owner)
  if entry then
    -- Only this attempt's place: a later attempt of the same thread may have queued since.
    if string.match(entry, '^%d+:%d+:(.*)$') == attempt then
      redis.call('hdel', KEYS[4], owner)
      redis.call('lrem', KEYS[3], 1, owner)
    end
    return 2
  end
  if ARGV[3] == 'dequeue' or redis.call('hget', KEYS[1], owner) ~= '1'
      or (redis.call('hget', KEYS[1], ':attempt') or redis.call('hget', KEYS[1], ':ticket')) ~= attempt then
    return 2
  end
  remaining = 0
else
  -- One HMGET for the owner's count, the hold's attempt and whether anybody queued.
  local hold = redis.call('hmget', KEYS[1], owner, ':attempt', ':q', ':token')
  -- The attempt that took the hold: holds handed over by an earlier distlock (a rolling upgrade)
  -- name it ':ticket'. (Written out rather than a function: Lua makes a closure of every function
  -- definition it runs through, on every call.)
  if not hold[1] or (attempt ~= '' and (hold[2] or redis.call('hget', KEYS[1], ':ticket')) ~= attempt) then
    if attempt ~= '' then
      -- The attempt whose release the marker keeps: a renamed hold's, or a string (an earlier
      -- version's, or a RENAME-less user's; HMGET refuses it as WRONGTYPE).
      local marker = redis.pcall('hmget', KEYS[5], ':attempt', ':ticket')
      local released = marker.err and redis.call('get', KEYS[5]) or (marker[1] or marker[2])
      if released == attempt then
        return 3
      end
    end
    return -1
  end
  -- A last hold ('1', most releases) is told apart as text: Lua's tonumber costs more.
  remaining = (ARGV[2] == '1') and 0 or (tonumber(ARGV[2]) - 1)
  queued = hold[3] ~= false or hold[4] ~= false
  -- Lettuce re-sends commands that were unanswered when a connection dropped, after it reconnects;
  -- the copy must find a mark rather than report the hold lost. One key per owner: releases of
  -- other owners in the meantime (a hand-off under contention) must not wipe it.
  marked = remaining <= 0 and attempt ~= ''
end
if remaining > 0 then
  redis.call('hset', KEYS[1], owner, remaining)
  return 0
end
if not marked then
  redis.call('del', KEYS[1])
elseif not redis.pcall('rename', KEYS[1], KEYS[5]).err then
  -- The hold becomes its own marker: one command instead of a DEL and a SET, and it keeps the
  -- hold's expiry, which the client vouched for (ARGV[9] ''), or is given one.
  if ARGV[9] ~= '' then
    redis.call('pexpire', KEYS[5], ARGV[9])
  end
else
  -- A user whose ACL predates RENAME in docs/redis.md's list (NOPERM): as before it was used, with
  -- the life the renamed hold would have had; SET refuses 0, which a hold in its last millisecond has.
  local life = ARGV[9]
  if life == '' then
    life = math.max(redis.call('pttl', KEYS[1]), 1)
  end
  redis.call('del', KEYS[1])
  redis.call('set', KEYS[5], attempt, 'px', life)
end
if not queued and ARGV[8] ~= '1' then
  -- Nobody queued since the lock was taken: nothing to hand on, nobody to tell.
  return 1
end
