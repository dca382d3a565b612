-- The wrk script of `bun run bench` (bench/bench-wrk.ts). Settings come from the environment:
--   WRK_METHOD    GET (default) or POST
--   WRK_BODY      a JSON body; every "{n}" in it becomes a number unique in the run (thread-request), so creates do
--                 not collide on names
--   WRK_SESSIONS  comma-separated zt-session tokens; each wrk thread (and so each of its connections) sends one
--   WRK_BEARERS   comma-separated OIDC access tokens, sent as Authorization: Bearer, one per thread likewise
-- done() prints one line "WRK_RESULT {json}" that bench-wrk.ts reads.

local sessions = {}
for token in string.gmatch(os.getenv("WRK_SESSIONS") or "", "[^,]+") do
  table.insert(sessions, token)
end
local bearers = {}
for token in string.gmatch(os.getenv("WRK_BEARERS") or "", "[^,]+") do
  table.insert(bearers, token)
end
local threadCount = 0

function setup(thread)
  threadCount = threadCount + 1
  thread:set("tid", threadCount)
  if #sessions > 0 then
    thread:set("session", sessions[((threadCount - 1) % #sessions) + 1])
  end
  if #bearers > 0 then
    thread:set("bearer", bearers[((threadCount - 1) % #bearers) + 1])
  end
end

function init(args)
  wrk.method = os.getenv("WRK_METHOD") or "GET"
  if session then
    wrk.headers["zt-session"] = session
  end
  if bearer then
    wrk.headers["authorization"] = "Bearer " .. bearer
  end
  if os.getenv("WRK_BODY") then
    wrk.headers["content-type"] = "application/json"
    wrk.body = os.getenv("WRK_BODY")
  end
end

-- a request function makes wrk build every request anew: only defined when the body has to change per request
local template = os.getenv("WRK_BODY")
if template and string.find(template, "{n}", 1, true) then
  local n = 0
  function request()
    n = n + 1
    local body = string.gsub(template, "{n}", tid .. "-" .. n)
    return wrk.format(nil, nil, nil, body)
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"durationUs":%d,"statusErrors":%d,"socketErrors":%d,"p50Us":%d,"p99Us":%d}\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
