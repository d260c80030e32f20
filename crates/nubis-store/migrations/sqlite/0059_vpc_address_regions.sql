-- The VPC address lists (GET /v4/vpcs/ips, /v4/vpcs/ipv6s, and one VPC's) filtered by region
-- read the matching interfaces through these indexes, the account's or the VPC's, not every
-- interface of the list (issue 22). A filter by configuration reads the index on the
-- configuration (migration 22).
CREATE INDEX IF NOT EXISTS instance_interfaces_vpc_account_region ON instance_interfaces(account_id, region, id) WHERE purpose = 'vpc';
CREATE INDEX IF NOT EXISTS instance_interfaces_vpc_region ON instance_interfaces(vpc_id, region, id) WHERE purpose = 'vpc';
