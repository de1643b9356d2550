-- release.lua as the previous distlock version ran it (announce.lua, fencing.lua and release.lua of
-- commit d84c3e9, in that order): the release of an instance not upgraded yet, in rolling-upgrade tests.
-- Where the scripts announce releases and hand-offs; LockScripts puts this first. Classic pub/sub
-- (no shard channel): PUBLISH on the lock's channel, '<lock key>:released', and a hand-off on its
-- client's channel, '<grant prefix><client id>'. Sharded pub/sub (a Redis 7+ or Valkey Cluster,
-- the script given the lock's shard channel as its last ARGV): SPUBLISH on that shard channel, and
-- a hand-off on '<shard channel>:<client id>'. Both are in the lock's slot, so the message stays on
-- the shard that runs the script: a classic PUBLISH is sent to every node over the cluster bus,
-- where a second one back to back reached subscribers of other nodes some 40 ms late. The server
-- refuses a channel of a slot it does not serve ('non local key'); it does not check that the
-- channel is in the slot of the script's keys, which RedisKeys ensures.
local shardChannel = nil

-- ARGV's shard channel: '' or absent (a server without sharded pub/sub) leaves the classic ones.
local function announceOn(channel)
  if channel and channel ~= '' then
    shardChannel = channel
  end
end

-- The channel on which the lock with this key (a lock hash, or a state hash) announces a release.
local function lockChannelOf(key)
  return shardChannel or (key .. ':released')
end

-- The channel on which a hand-off to 'owner' is announced: its client's, the owner id up to its first ':'.
local function handOffChannel(grantPrefix, owner)
  local client = string.match(owner, '^[^:]*')
  if shardChannel then
    return shardChannel .. ':' .. client
  end
  return grantPrefix .. client
end

local function announce(channel, message)
  redis.call(shardChannel and 'spublish' or 'publish', channel, message)
end

-- The next fencing token, shared by release.lua (a hand-off) and token.lua (a holder's first
-- request): LockScripts puts this file before each of them. KEYS[2] is the fencing counter.
-- One more than the last token handed out, and never below the server clock in microseconds, so
-- that a counter lost with the data restarts above every token handed out before (as long as the
-- server's clock does not step back); written to the counter so that later tokens rest on it rather
-- than on a clock that a failover to another server may set back. A counter that marks a restart
-- grace, or is missing where a grace is configured (grace: the restart grace in ms, 0 for none), is
-- acquire.lua's to set: writing it here would end a grace, or hide the loss of data a grace must be
-- served for. time: the server's TIME reply if the caller has it already (one command less), or nil.
-- Returns the token and its text.
local function nextToken(grace, time)
  local t = time or redis.call('time')
  local clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = redis.call('get', KEYS[2])
  local number = tonumber(last or '')
  local token = math.max((number or 0) + 1, clock)
  -- Formatted, not tostring(): Lua would write a 16-digit number in exponent notation.
  local text = string.format('%.0f', token)
  if number or (not last and tonumber(grace) <= 0) then
    redis.call('set', KEYS[2], text)
  end
  return token, text
end

-- Releases one hold of a reentrant lock. At zero the lock goes straight to the first live queued
-- waiter (that waiter's client is told on the channel), or, with nobody queued, is deleted and
-- waiters are woken. Also takes a waiting attempt out of the queue ('leave', 'dequeue').
-- KEYS[1]  the lock hash: field <owner id> -> hold count, ':attempt' -> the attempt that took the
--          hold, ':token' -> its fencing token if one was issued
-- KEYS[2]  the fencing counter: the last token handed out
-- KEYS[3]  the wait queue: a list of owner ids in arrival order
-- KEYS[4]  the queue's entries: owner id -> '<deadline ms>:<lease ms>:<attempt id>' (deadline in Redis time)
-- KEYS[5]  this owner's release marker: the attempt id of the hold it last released, kept 15 s
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
-- ARGV[9]  (only on a Cluster with sharded pub/sub) the lock's shard channel: announcements go out
--          with SPUBLISH there and on '<ARGV[9]>:<client id>' instead (see announce.lua)
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
-- A hand-off's token comes from nextToken (fencing.lua, which LockScripts puts before this file, after
-- announce.lua).

-- The attempt that took a hold. Holds handed over by an earlier distlock (a rolling upgrade) name it ':ticket'.
local function attemptOf(hold)
  return hold or redis.call('hget', KEYS[1], ':ticket')
end

local owner = ARGV[1]
local attempt = ARGV[4]
announceOn(ARGV[9])
local channel = lockChannelOf(KEYS[1])
local remaining
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
      or attemptOf(redis.call('hget', KEYS[1], ':attempt')) ~= attempt then
    return 2
  end
  remaining = 0
else
  -- One HMGET for the owner's count and the hold's attempt.
  local hold = redis.call('hmget', KEYS[1], owner, ':attempt')
  if not hold[1] or (attempt ~= '' and attemptOf(hold[2]) ~= attempt) then
    if attempt ~= '' and redis.call('get', KEYS[5]) == attempt then
      return 3
    end
    return -1
  end
  remaining = tonumber(ARGV[2]) - 1
  if remaining <= 0 and attempt ~= '' then
    -- Lettuce re-sends commands that were unanswered when a connection dropped, after it reconnects;
    -- the copy must find this mark rather than report the hold lost. One key per owner: releases
    -- of other owners in the meantime (a hand-off under contention) must not wipe it.
    redis.call('set', KEYS[5], attempt, 'px', 15000)
  end
end
if remaining > 0 then
  redis.call('hset', KEYS[1], owner, remaining)
  return 0
end
redis.call('del', KEYS[1])
-- Popping the head straight away: with nobody queued this costs what an EXISTS would.
local head = redis.call('lpop', KEYS[3])
if not head and ARGV[8] ~= '1' then
  return 1
end
if head then
  local time = redis.call('time')
  local t = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  while head do
    local entry = redis.call('hget', KEYS[4], head)
    redis.call('hdel', KEYS[4], head)
    local deadline, lease, ticket = string.match(entry or '', '^(%d+):(%d+):(.*)$')
    if deadline and tonumber(deadline) >= t then
      local _, token = nextToken(ARGV[7], time)
      redis.call('hset', KEYS[1], head, 1, ':token', token, ':attempt', ticket)
      redis.call('pexpire', KEYS[1], math.min(tonumber(lease), tonumber(ARGV[5])))
      announce(handOffChannel(ARGV[6], head), 'grant ' .. token .. ' ' .. head .. ' ' .. ticket .. ' ' .. channel)
      return 1
    end
    head = redis.call('lpop', KEYS[3])
  end
end
announce(channel, 'released')
return 1

