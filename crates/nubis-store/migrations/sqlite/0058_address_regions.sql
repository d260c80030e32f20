-- The account's address list (GET /v4/networking/ips) filtered by region reads the account's
-- addresses of that region through this index, not the whole account's (issue 22); a filter by
-- instance reads the index on the instance (migration 3).
CREATE INDEX IF NOT EXISTS ip_addresses_account_region ON ip_addresses(account_id, region, id);
