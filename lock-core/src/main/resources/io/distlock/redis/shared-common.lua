-- Shared by the read-write locks' and the semaphores' scripts (acquire-shared.lua, release-shared.lua,
-- token-shared.lua, query-shared.lua) and by renew.lua: LockScripts puts announce.lua (announce),
-- fencing.lua (nextToken), grace.lua (startOrServeGrace) and this file before each of them.
--
-- One state hash per read-write lock (<prefix>:rw:{<name>}) or semaphore (<prefix>:sem:{<name>}):
--   'w:<owner>' | 'r:<owner>' | 'p:<owner>'  one field per holder and kind (write, read, permit):
--                '<count>:<deadline ms>:<attempt id>:<token or empty>'; the deadline is in Redis time
--                and is the holder's own lease, so a crashed reader's share ends with its lease
--                while the other readers renew theirs (the hash's TTL is only the latest deadline)
--   ':writer'    the owner of the write hold (read-write lock)
--   ':readers'   how many 'r:' fields there are (read-write lock); absent at zero
--   ':holders'   how many 'p:' fields there are (semaphore); absent at zero
--   ':permits'   the semaphore's permits, as its first user declared them
--   ':next'      at most the earliest holder deadline: holders are only looked through (HGETALL)
--                once it has passed, so a call costs O(1) until some lease may have run out
-- The queue, as acquire.lua's: a list of owner ids in arrival order, and a hash of their entries
-- owner -> '<deadline ms>:<lease ms>:<kind>:<attempt id>'.
-- Owner ids hold ':' (clientId:threadId); kinds are single letters, so 'r:' + owner is unambiguous.

local function clock()
  local t = redis.call('time')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), t
end

-- The attempt may hold ':' (the SPI does not forbid it): the token, digits only, follows the last one.
local function parseHold(value)
  local count, deadline, attempt, token = string.match(value or '', '^(%d+):(%d+):(.*):(%d*)$')
  if not count then
    return nil
  end
  return tonumber(count), tonumber(deadline), attempt, (token ~= '') and token or nil
end

local function holdValue(count, deadline, attempt, token)
  return string.format('%d:%.0f:%s:%s', count, deadline, attempt or '', token or '')
end

local COUNTERS = { r = ':readers', p = ':holders' }

-- Keeps the hash at least ms longer: its TTL only ever covers the latest holder deadline (and a queue).
local function extendTtl(h, ms)
  if ms > 0 and redis.call('pttl', h) < ms then
    redis.call('pexpire', h, math.ceil(ms))
  end
end

local function lowerNext(h, deadline)
  local next = tonumber(redis.call('hget', h, ':next') or '')
  if not next or deadline < next then
    redis.call('hset', h, ':next', string.format('%.0f', deadline))
  end
end

-- Sets a holder's field (new or not); a new one is counted.
local function putHolder(h, kind, who, count, deadline, attempt, token, now)
  if redis.call('hset', h, kind .. ':' .. who, holdValue(count, deadline, attempt, token)) == 1 then
    if kind == 'w' then
      redis.call('hset', h, ':writer', who)
    else
      redis.call('hincrby', h, COUNTERS[kind], 1)
    end
  end
  lowerNext(h, deadline)
  extendTtl(h, deadline - now)
end

local function removeHolder(h, kind, who)
  if redis.call('hdel', h, kind .. ':' .. who) == 0 then
    return
  end
  if kind == 'w' then
    redis.call('hdel', h, ':writer')
  elseif redis.call('hincrby', h, COUNTERS[kind], -1) <= 0 then
    redis.call('hdel', h, COUNTERS[kind])
  end
end

-- Drops the holders whose lease ran out (deadline < now); looks only once ':next' has passed.
-- Returns how many were dropped.
local function prune(h, now)
  local next = tonumber(redis.call('hget', h, ':next') or '')
  if not next or next >= now then
    return 0
  end
  local all = redis.call('hgetall', h)
  local pruned, least = 0, nil
  for i = 1, #all, 2 do
    local kind, who = string.match(all[i], '^([rwp]):(.*)$')
    if kind then
      local _, deadline = parseHold(all[i + 1])
      if not deadline or deadline < now then
        removeHolder(h, kind, who)
        pruned = pruned + 1
      elseif not least or deadline < least then
        least = deadline
      end
    end
  end
  if least then
    redis.call('hset', h, ':next', string.format('%.0f', least))
  else
    redis.call('hdel', h, ':next')
  end
  return pruned
end

local function hasHolders(h)
  return redis.call('hexists', h, ':writer') == 1 or redis.call('hexists', h, ':readers') == 1
      or redis.call('hexists', h, ':holders') == 1
end

-- Whether 'who' may take a first hold of this kind now, judged by the holders alone (the queue is
-- the caller's matter): a writer needs no holder at all; a reader needs no writer but itself (a
-- writer may also read: downgrade); a permit needs fewer holders than permits.
local function admissible(h, kind, who)
  if kind == 'r' then
    local writer = redis.call('hget', h, ':writer')
    return not writer or writer == who
  elseif kind == 'w' then
    return not hasHolders(h)
  end
  return tonumber(redis.call('hget', h, ':holders') or '0') < tonumber(redis.call('hget', h, ':permits') or '0')
end

-- The restart grace (grace.lua) with the calling script's keys and arguments, which it sets before
-- anything may enter: {counter, lastSaveSeen, replicationIdSeen, grace ms, heldHere}. Served before
-- ANY new holder enters (a take or a grant), not only when the state is missing: a snapshot may have
-- kept the readers and lost the writer that came after them. Asked once per call: it may run INFO.
local graceArgs = nil
local graceChecked, graceMs = false, nil

-- Returns the ms left of a restart grace, or nil when a new holder may enter.
local function graceLeft()
  if not graceChecked then
    graceChecked = true
    if graceArgs then
      graceMs = startOrServeGrace(graceArgs[1], graceArgs[2], graceArgs[3], graceArgs[4], graceArgs[5])
    end
  end
  return graceMs
end

-- Grants queued owners, first come first served, while the head may enter: a writer at the head
-- waits for the readers to leave and every reader behind it waits too (no writer starvation); a
-- release that frees the lock for readers grants every reader up to the next writer. Lapsed entries
-- (waiters gone without leaving) are dropped on the way, so readers behind a writer that timed
-- out or crashed move up. Each grant gets its own fencing token (a stale grant is told apart by
-- it) and a lease of at most 'place' ms until its owner takes it up, and is announced on its
-- owner's client channel: one message per grant, so several readers of one client are woken at
-- once, each by its ticket. 'self' (the calling owner, or nil) is not announced but taken for its
-- own lease, and for the kind it asks for now (selfKind): its entry may be left from an earlier
-- attempt of another kind whose leave never landed. Returns whether self was taken and how many
-- others were granted.
local function admit(h, q, e, now, time, self, selfLease, selfAttempt, place, grantPrefix, grace, selfKind)
  local selfTaken, granted = false, 0
  while true do
    local head = redis.call('lindex', q, 0)
    if not head then
      break
    end
    local deadline, lease, kind, attempt = string.match(redis.call('hget', e, head) or '', '^(%d+):(%d+):([rwp]):(.*)$')
    if head == self and selfKind then
      kind = selfKind
    end
    if not deadline or tonumber(deadline) < now then
      redis.call('lpop', q)
      redis.call('hdel', e, head)
    elseif not admissible(h, kind, head) or graceLeft() then
      break
    else
      redis.call('lpop', q)
      redis.call('hdel', e, head)
      if head == self then
        putHolder(h, kind, head, 1, now + selfLease, selfAttempt, nil, now)
        selfTaken = true
      else
        local _, token = nextToken(grace, time)
        putHolder(h, kind, head, 1, now + math.min(tonumber(lease), place), attempt, token, now)
        announce(handOffChannel(grantPrefix, head), 'grant ' .. token .. ' ' .. head .. ' ' .. attempt .. ' '
          .. lockChannelOf(h))
        granted = granted + 1
      end
    end
  end
  return selfTaken, granted
end

-- Queues or re-queues (keeping the place) an owner for queueFor ms; the state hash lives at least
-- as long as its queue, so a semaphore's ':permits' is kept while anybody waits.
local function enqueue(h, q, e, now, who, queueFor, lease, kind, attempt)
  if queueFor <= 0 then
    return
  end
  if redis.call('hset', e, who, string.format('%.0f:%d:%s:%s', now + queueFor, lease, kind, attempt)) == 1 then
    redis.call('rpush', q, who)
  end
  if redis.call('pttl', q) < queueFor then
    redis.call('pexpire', q, queueFor)
    redis.call('pexpire', e, queueFor)
  end
  extendTtl(h, queueFor)
end

-- After a release (of kind 'released') or a leave (nil): with no holder and nobody queued the state
-- goes (a semaphore's permits with it: a change of permits takes effect once it is idle) and the
-- lock's channel says 'released'. With nobody queued but holders left, the channel is told only if
-- a newcomer could now enter: a permit is free, or a downgraded writer left only read holds.
-- Queued waiters are told by their grants; a waiter that is not queued (its place lapsed, or its
-- backend call failed) is woken by 'released' and asks again.
local function settle(h, q, released)
  if redis.call('llen', q) > 0 then
    return
  end
  local channel = lockChannelOf(h)
  if not hasHolders(h) then
    redis.call('del', h)
    announce(channel, 'released')
  elseif released == 'p' then
    if tonumber(redis.call('hget', h, ':holders') or '0') < tonumber(redis.call('hget', h, ':permits') or '0') then
      announce(channel, 'released')
    end
  elseif released == 'w' and redis.call('hexists', h, ':writer') == 0 then
    announce(channel, 'released')
  end
end

-- acquire.lua's lastToken: what a refusal carries so that a hand-off made before it is known stale.
local function lastToken(counter)
  local last = tonumber(redis.call('get', counter) or '')
  if last then
    return last
  end
  local t = redis.call('time')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
