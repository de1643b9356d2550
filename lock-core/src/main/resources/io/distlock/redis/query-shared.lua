-- Read-only questions about a read-write lock or a semaphore (sent as EVAL, never
-- EVAL_RO, which needs Redis 7: it writes nothing, and holders past their deadline are only not
-- counted). LockScripts puts announce.lua, fencing.lua, grace.lua and shared-common.lua first.
-- KEYS[1]  the state hash
-- ARGV[1]  'held': ARGV[2] owner, ARGV[3] kind -> ms left of that owner's hold, or -1
--          'lease': ARGV[2] kind -> the longest ms left among holds of that kind, 0 if none
--                   (DistLock#remainingLease of the read or write lock; isLocked is lease > 0)
--          'available': ARGV[2] permits as this client declares them -> the permits not held,
--                   counted against the stored permits if there are any (DistSemaphore#availablePermits)
local h = KEYS[1]
local now = clock()
if ARGV[1] == 'held' then
  local count, deadline = parseHold(redis.call('hget', h, ARGV[3] .. ':' .. ARGV[2]))
  return (count and deadline >= now) and (deadline - now) or -1
end
local next = tonumber(redis.call('hget', h, ':next') or '')
if ARGV[1] == 'available' then
  local permits = tonumber(redis.call('hget', h, ':permits') or ARGV[2])
  local holders = tonumber(redis.call('hget', h, ':holders') or '0')
  if next and next < now then
    -- Some lease may have run out unpruned: count the live ones.
    holders = 0
    local all = redis.call('hgetall', h)
    for i = 1, #all, 2 do
      if string.sub(all[i], 1, 2) == 'p:' then
        local _, deadline = parseHold(all[i + 1])
        if deadline and deadline >= now then
          holders = holders + 1
        end
      end
    end
  end
  return math.max(permits - holders, 0)
end
local longest = 0
local all = redis.call('hgetall', h)
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 2) == ARGV[2] .. ':' then
    local _, deadline = parseHold(all[i + 1])
    if deadline and deadline - now > longest then
      longest = deadline - now
    end
  end
end
return longest
