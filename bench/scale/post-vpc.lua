-- wrk script: creates VPCs with unique labels (the Authorization header comes from -H).
local prefix = "wrk-" .. os.time() .. "-" .. math.random(1000, 9999)
local n = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  n = n + 1
  local body = string.format('{"label": "%s-%d", "region": "us-east"}', prefix, n)
  return wrk.format(nil, nil, nil, body)
end
