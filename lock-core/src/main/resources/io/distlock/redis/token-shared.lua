-- Issues the fencing token of a read, write or permit hold on first request, or returns the one
-- issued before (token.lua for the shared kinds; LockScripts puts fencing.lua, grace.lua and
-- shared-common.lua first).
-- KEYS[1]  the state hash; KEYS[2] the fencing counter
-- ARGV[1]  owner id; ARGV[2] the attempt that took the hold, or ''; ARGV[3] the restart grace in ms;
-- ARGV[4]  the kind: 'r', 'w' or 'p'
-- Returns  the token; -1 if the owner no longer holds (its lease ran out, or the server lost it).
-- Every kind draws from nextToken, so: a write hold's token is above every token issued before it
-- (every earlier write hold's and read hold's); a read hold's token is above every earlier write
-- hold's and below every later one's. Two readers' tokens say nothing about each other.
local h = KEYS[1]
local field = ARGV[4] .. ':' .. ARGV[1]
local now = clock()
local count, deadline, attempt, token = parseHold(redis.call('hget', h, field))
if not count or deadline < now or (ARGV[2] ~= '' and attempt ~= ARGV[2]) then
  return -1
end
if token then
  return tonumber(token)
end
local issued, text = nextToken(ARGV[3])
redis.call('hset', h, field, holdValue(count, deadline, attempt, text))
return issued
