-- The next fencing token, shared by release.lua (a hand-off) and token.lua (a holder's first
-- request): LockScripts puts this file before each of them. KEYS[2] is the fencing counter.
-- One more than the last token handed out, and never below the server clock in microseconds, so
-- that a counter lost with the data restarts above every token handed out before (as long as the
-- server's clock does not step back); written to the counter so that later tokens rest on it rather
-- than on a clock that a failover to another server may set back. A counter that marks a restart
-- grace, or is missing where a grace is configured (grace: the restart grace in ms, 0 for none), is
-- acquire.lua's to set: writing it here would end a grace, or hide the loss of data a grace must be
-- served for. time: the server's TIME reply if the caller has it already (one command less), or nil.
-- Returns the token and its text.
local function nextToken(grace, time)
  local t = time or redis.call('time')
  local clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = redis.call('get', KEYS[2])
  local number = tonumber(last or '')
  local token = math.max((number or 0) + 1, clock)
  -- Formatted, not tostring(): Lua would write a 16-digit number in exponent notation.
  local text = string.format('%.0f', token)
  if number or (not last and tonumber(grace) <= 0) then
    redis.call('set', KEYS[2], text)
  end
  return token, text
end
