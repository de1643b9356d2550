-- The seeds' naive release: delete the key only if it still holds this owner's value.
-- KEYS[1] the lock key; ARGV[1] the owner's random value. Returns 1 deleted, 0 not the owner.
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
