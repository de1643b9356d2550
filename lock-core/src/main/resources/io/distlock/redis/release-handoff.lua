-- The rest of release.lua (see there): the lock was freed and someone may be queued, or a waiter
-- that does not queue (Redlock's) must be told. Hands the lock to the first live queued waiter, or
-- announces the release on the lock's channel.
announceOn(ARGV[10])
local channel = lockChannelOf(KEYS[1])
-- Popping the head straight away: with nobody queued this costs what an EXISTS would.
local head = redis.call('lpop', KEYS[3])
if not head and ARGV[8] ~= '1' then
  return 1
end
if head then
  local time = redis.call('time')
  local t = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  while head do
    local entry = redis.call('hget', KEYS[4], head)
    redis.call('hdel', KEYS[4], head)
    local deadline, lease, ticket = string.match(entry or '', '^(%d+):(%d+):(.*)$')
    if deadline and tonumber(deadline) >= t then
      local _, token = nextToken(ARGV[7], time)
      -- ':q': others may still be queued behind the new holder.
      redis.call('hset', KEYS[1], head, '1', ':token', token, ':attempt', ticket, ':q', '1')
      redis.call('pexpire', KEYS[1], math.min(tonumber(lease), tonumber(ARGV[5])))
      announce(handOffChannel(ARGV[6], head), 'grant ' .. token .. ' ' .. head .. ' ' .. ticket .. ' ' .. channel)
      return 1
    end
    head = redis.call('lpop', KEYS[3])
  end
end
announce(channel, 'released')
return 1
