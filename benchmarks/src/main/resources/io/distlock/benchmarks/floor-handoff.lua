-- The floor hand-off's release: delete the lock and tell the one waiting client on its channel,
-- as distlock's release.lua does at its shortest. KEYS[1] the lock; ARGV[1] the waiter's channel.
redis.call('del', KEYS[1])
return redis.call('publish', ARGV[1], 'grant')
