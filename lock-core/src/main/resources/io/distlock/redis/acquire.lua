-- Acquires or re-enters a reentrant lock.
-- KEYS[1]  the lock hash: field <owner id> -> hold count, field ':token' -> fencing token
-- KEYS[2]  the fencing counter: only ever incremented, so tokens grow across all holders
-- ARGV[1]  owner id (client id ':' thread id)
-- ARGV[2]  lease in milliseconds
-- ARGV[3]  the hold count the owner has now (0 for a first acquisition)
-- ARGV[4]  optional: an id of this attempt (Redlock), kept in field ':attempt' so that abandoning
--          a failed attempt later cannot delete the hold a newer attempt of the same owner took over
-- Returns  {1, token} acquired or re-entered; {0, pttl} held by another owner;
--          {-1, 0} the owner believed it held the lock but its hold is gone (lost).
-- The count is set to ARGV[3] + 1, not incremented, so a copy of this call re-sent after a
-- reconnect leaves the count as one call would.
local owner = ARGV[1]
local held = tonumber(ARGV[3])
if redis.call('exists', KEYS[1]) == 0 then
  if held > 0 then
    return {-1, 0}
  end
  local token = redis.call('incr', KEYS[2])
  redis.call('hset', KEYS[1], owner, 1, ':token', token)
  if ARGV[4] then
    redis.call('hset', KEYS[1], ':attempt', ARGV[4])
  end
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {1, token}
end
if redis.call('hexists', KEYS[1], owner) == 1 then
  redis.call('hset', KEYS[1], owner, held + 1)
  if ARGV[4] and held == 0 then
    redis.call('hset', KEYS[1], ':attempt', ARGV[4])
  end
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {1, tonumber(redis.call('hget', KEYS[1], ':token'))}
end
if held > 0 then
  return {-1, 0}
end
return {0, redis.call('pttl', KEYS[1])}
