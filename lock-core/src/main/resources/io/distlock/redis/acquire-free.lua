-- The start of acquire.lua (see there for KEYS and ARGV): the free lock's path of a client without
-- a restart grace, which LockScripts puts before grace.lua and acquire.lua. Lua creates a closure for
-- every function definition it runs through, on every call: this path runs before any is defined.
local owner = ARGV[1]

-- One EXISTS for the lock and its queue: the uncontended path needs neither, and with both there
-- (the contended path) the lock is known to be taken without a second look.
local present = redis.call('exists', KEYS[1], KEYS[3])
-- Compared as text: Lua's tonumber costs more than the comparison, on every call.
-- This path repeats two pieces defined further on, which it cannot call without defining them on
-- every call: startOrServeGrace's test for a grace another client marked on the counter
-- (grace.lua), and take(false) (acquire.lua). A change to either is a change here too.
if present == 0 and ARGV[3] == '0' and ARGV[6] == '0' then
  -- Without a grace of its own the client serves one another client marked on the counter;
  -- otherwise the lock is this attempt's.
  local last = redis.call('get', KEYS[2])
  if not last or string.sub(last, 1, 6) ~= 'grace:' then
    if ARGV[4] ~= '' then
      redis.call('hset', KEYS[1], owner, '1', ':attempt', ARGV[4])
    else
      redis.call('hset', KEYS[1], owner, '1')
    end
    redis.call('pexpire', KEYS[1], ARGV[2])
    return {1, -2}
  end
end
