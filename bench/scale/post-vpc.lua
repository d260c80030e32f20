-- wrk script: creates VPCs with unique labels.
local prefix = "wrk-" .. os.time() .. "-" .. math.random(1000, 9999)
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"label": "%s-%d", "region": "us-east"}', prefix, n)
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, body)
end
