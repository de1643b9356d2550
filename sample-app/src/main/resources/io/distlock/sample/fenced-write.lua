-- Writes a new stock value unless a newer lock holder has already written.
-- KEYS[1]  the stock hash: field 'stock' -> units left, field 'fence' -> highest token applied
-- ARGV[1]  the writer's fencing token
-- ARGV[2]  the new stock value
-- Returns  1 written; 0 rejected (a write with a higher token was applied: this writer's lock is stale)
local applied = tonumber(redis.call('hget', KEYS[1], 'fence') or '0')
if tonumber(ARGV[1]) < applied then
  return 0
end
redis.call('hset', KEYS[1], 'stock', ARGV[2], 'fence', ARGV[1])
return 1
