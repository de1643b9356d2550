-- Renews the leases of several locks at once (the watchdog's batch).
-- KEYS[i]     a lock hash: field <owner id> -> hold count, ':attempt' -> the attempt that took the hold
-- ARGV[1]     the new lease in milliseconds
-- ARGV[2i]    the owner id whose hold of KEYS[i] is renewed
-- ARGV[2i+1]  the attempt that took that hold (acquire.lua's ARGV[4]), or '' for whatever hold the
--             owner has
-- Returns     a list: element i is 1 if that hold of KEYS[i] still lasted and was renewed, else 0.
-- Renewing only what the owner still holds is what keeps a late renewal from resurrecting a lock
-- that expired and now belongs to someone else. Renewing only the attempt's hold keeps a renewal
-- that lands after its hold's release from stretching the owner's next hold (taken with a shorter
-- lease, say) to the watchdog's lease; a release (release.lua) and a token (token.lua) name the hold
-- the same way. Holds handed over by an earlier distlock (a rolling upgrade) name it ':ticket'.
local renewed = {}
for i, key in ipairs(KEYS) do
  local attempt = ARGV[2 * i + 1]
  local hold = redis.call('hmget', key, ARGV[2 * i], ':attempt', ':ticket')
  if hold[1] and (attempt == '' or (hold[2] or hold[3]) == attempt) then
    redis.call('pexpire', key, ARGV[1])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
