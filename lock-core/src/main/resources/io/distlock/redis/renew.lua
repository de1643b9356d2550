-- Renews the leases of several locks at once (the watchdog's batch).
-- KEYS[i]    a lock hash
-- ARGV[1]    the new lease in milliseconds
-- ARGV[i+1]  the owner id whose hold of KEYS[i] is renewed
-- Returns    a list: element i is 1 if the owner still held KEYS[i] and it was renewed, else 0.
-- Renewing only what the owner still holds is what keeps a late renewal from resurrecting a lock
-- that expired and now belongs to someone else.
local renewed = {}
for i, key in ipairs(KEYS) do
  if redis.call('hexists', key, ARGV[i + 1]) == 1 then
    redis.call('pexpire', key, ARGV[1])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
