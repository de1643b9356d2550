-- Renews the leases of several holds at once (the watchdog's batch), of any kinds. LockScripts puts
-- fencing.lua, grace.lua and shared-common.lua (parseHold, holdValue, clock) first.
-- KEYS[i]     the hold's key: an exclusive lock's hash (field <owner id> -> hold count, ':attempt' ->
--             the attempt that took the hold), or a read-write lock's / semaphore's state hash
-- ARGV[1]     the new lease in milliseconds
-- ARGV[2]     one letter per hold, in KEYS order: 'x' exclusive, 'r' read, 'w' write, 'p' permit
-- ARGV[2i+1]  the owner id whose hold of KEYS[i] is renewed
-- ARGV[2i+2]  the attempt that took that hold (acquire.lua's or acquire-shared.lua's ARGV[4]), or ''
--             for whatever hold the owner has
-- Returns     a list: element i is 1 if that hold of KEYS[i] still lasted and was renewed, else 0.
-- Renewing only what the owner still holds is what keeps a late renewal from resurrecting a lock
-- that expired and now belongs to someone else. Renewing only the attempt's hold keeps a renewal
-- that lands after its hold's release from stretching the owner's next hold (taken with a shorter
-- lease, say) to the watchdog's lease; a release (release.lua) and a token (token.lua) name the hold
-- the same way. Exclusive holds handed over by an earlier distlock (a rolling upgrade) name it ':ticket'.
-- A shared hold is renewed alone: its own deadline moves, never another reader's or permit
-- holder's (a crashed reader's share must end with its own lease while the others renew). One whose
-- deadline has passed is not renewed even if no script has pruned it yet: its owner is told it was
-- lost, as its lease promised.
local lease = tonumber(ARGV[1])
local kinds = ARGV[2]
local now = nil
local renewed = {}
for i, key in ipairs(KEYS) do
  local kind = string.sub(kinds, i, i)
  local owner = ARGV[2 * i + 1]
  local attempt = ARGV[2 * i + 2]
  renewed[i] = 0
  if kind == 'x' then
    local hold = redis.call('hmget', key, owner, ':attempt', ':ticket')
    if hold[1] and (attempt == '' or (hold[2] or hold[3]) == attempt) then
      redis.call('pexpire', key, ARGV[1])
      renewed[i] = 1
    end
  else
    -- Redis time only once a batch has a shared hold: exclusive batches cost what they did.
    now = now or clock()
    local field = kind .. ':' .. owner
    local count, deadline, holdAttempt, token = parseHold(redis.call('hget', key, field))
    if count and deadline >= now and (attempt == '' or holdAttempt == attempt) then
      redis.call('hset', key, field, holdValue(count, now + lease, holdAttempt, token))
      -- A shorter lease (unlockKeepingFor's renewal to 'keep') must lower ':next'.
      lowerNext(key, now + lease)
      extendTtl(key, lease)
      renewed[i] = 1
    end
  end
end
return renewed
