-- The floor lock's release: one hold less, and the hash deleted at the last.
-- KEYS[1] the lock hash; ARGV[1] the owner. Returns 1 released, 0 still held, -1 not the owner.
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return -1
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) > 0 then
  return 0
end
redis.call('del', KEYS[1])
return 1
