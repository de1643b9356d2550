-- The least a reentrant lock kept in a Redis hash runs to take a lock: the floor any such lock
-- stands on (Redisson's and distlock's among them), measured beside SET NX PX.
-- KEYS[1] the lock hash; ARGV[1] the owner; ARGV[2] the lease in ms. Returns 1 taken or re-entered, 0 taken by another.
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
return 0
