-- PROTOTYPE (issue #29). The watchdog's batch, for holds of every kind in one script (replaces
-- renew.lua; shared-common.lua goes first).
-- KEYS[i]    the hold's key: an exclusive lock's hash, or a read-write lock's / semaphore's state hash
-- ARGV[1]    the new lease in ms
-- ARGV[2]    one letter per hold, in KEYS order: 'x' exclusive, 'r' read, 'w' write, 'p' permit
-- ARGV[i+2]  the owner id whose hold of KEYS[i] is renewed
-- Returns    a list: element i is 1 if the owner still held KEYS[i] and it was renewed, else 0.
-- A shared hold is renewed alone: its own deadline moves, never another reader's or permit
-- holder's (Redisson renewed every reader's timeout keys from any reader's watchdog, which kept a
-- crashed reader's share alive). A hold whose deadline has passed is not renewed even if no script
-- has pruned it yet: its owner is told it was lost, as its lease promised.
local lease = tonumber(ARGV[1])
local kinds = ARGV[2]
local now = clock()
local renewed = {}
for i, key in ipairs(KEYS) do
  local kind = string.sub(kinds, i, i)
  local owner = ARGV[i + 2]
  renewed[i] = 0
  if kind == 'x' then
    if redis.call('hexists', key, owner) == 1 then
      redis.call('pexpire', key, lease)
      renewed[i] = 1
    end
  else
    local field = kind .. ':' .. owner
    local count, deadline, attempt, token = parseHold(redis.call('hget', key, field))
    if count and deadline >= now then
      redis.call('hset', key, field, holdValue(count, now + lease, attempt, token))
      -- A shorter lease (unlockKeepingFor's renewal to 'keep') must lower ':next'.
      lowerNext(key, now + lease)
      extendTtl(key, lease)
      renewed[i] = 1
    end
  end
end
return renewed
