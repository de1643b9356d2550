-- Issues the fencing token of a hold on first request (acquire.lua defers it: most holders never
-- ask, and each token costs a counter update), or returns the one issued before.
-- KEYS[1]  the lock hash: field <owner id> -> hold count, ':attempt', ':token'
-- KEYS[2]  the fencing counter: the last token handed out
-- ARGV[1]  owner id
-- ARGV[2]  the attempt that took the hold, or '' for whatever hold the owner has
-- ARGV[3]  the restart grace in ms, 0 for none (see acquire.lua)
-- Returns  the token; -1 if the owner no longer holds the lock (expired, or the server lost it): a
--          token must never be issued to a holder whose lock may be someone else's by now.
-- The token comes from nextToken (fencing.lua, which LockScripts puts before this file). Issued while
-- the owner holds the lock, it is above every token of the lock's earlier holders, which were issued
-- before this hold began.
-- Holds handed over by an earlier distlock (a rolling upgrade) name their attempt ':ticket'.
local hold = redis.call('hmget', KEYS[1], ARGV[1], ':attempt', ':ticket')
if not hold[1] or (ARGV[2] ~= '' and (hold[2] or hold[3]) ~= ARGV[2]) then
  return -1
end
local issued = redis.call('hget', KEYS[1], ':token')
if issued then
  return tonumber(issued)
end
local token, text = nextToken(ARGV[3])
redis.call('hset', KEYS[1], ':token', text)
return token
