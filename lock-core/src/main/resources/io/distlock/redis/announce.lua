-- Where the scripts announce releases and hand-offs; LockScripts puts this first. Classic pub/sub
-- (no shard channel): PUBLISH on the lock's channel, '<lock key>:released', and a hand-off on its
-- client's channel, '<grant prefix><client id>'. Sharded pub/sub (a Redis 7+ or Valkey Cluster,
-- the script given the lock's shard channel as its last ARGV): SPUBLISH on that shard channel, and
-- a hand-off on '<shard channel>:<client id>'. Both are in the lock's slot, so the message stays on
-- the shard that runs the script: a classic PUBLISH is sent to every node over the cluster bus,
-- where a second one back to back reached subscribers of other nodes some 40 ms late. The server
-- refuses a channel of a slot it does not serve ('non local key'); it does not check that the
-- channel is in the slot of the script's keys, which RedisKeys ensures.
local shardChannel = nil

-- ARGV's shard channel: '' or absent (a server without sharded pub/sub) leaves the classic ones.
local function announceOn(channel)
  if channel and channel ~= '' then
    shardChannel = channel
  end
end

-- The channel on which the lock with this key (a lock hash, or a state hash) announces a release.
local function lockChannelOf(key)
  return shardChannel or (key .. ':released')
end

-- The channel on which a hand-off to 'owner' is announced: its client's, the owner id up to its first ':'.
local function handOffChannel(grantPrefix, owner)
  local client = string.match(owner, '^[^:]*')
  if shardChannel then
    return shardChannel .. ':' .. client
  end
  return grantPrefix .. client
end

local function announce(channel, message)
  redis.call(shardChannel and 'spublish' or 'publish', channel, message)
end
