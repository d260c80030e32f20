-- wrk script: creates personal access tokens.
wrk.method = "POST"
wrk.body = '{"label": "bench-token"}'
wrk.headers["Content-Type"] = "application/json"
