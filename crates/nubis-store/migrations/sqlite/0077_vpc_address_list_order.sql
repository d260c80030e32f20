-- The account-wide VPC address lists (/v4/vpcs/ips, /v4/vpcs/ipv6s) in their own order: an index
-- on (account, id) holding their rows alone, as each VPC's lists have (migration 54). Without it
-- a page of the IPv6 list read every VPC interface with IPv6 of the account through an index in
-- another order and sorted them (PostgreSQL's plan for unknown values: 4,093 rows for a page of
-- 100, 9 ms), or walked every interface of the account in id order (docs/decisions.md, "The
-- account's VPC address lists read their own index").
CREATE INDEX IF NOT EXISTS instance_interfaces_vpc_account_id ON instance_interfaces(account_id, id) WHERE purpose = 'vpc';
CREATE INDEX IF NOT EXISTS instance_interfaces_v6_account_id ON instance_interfaces(account_id, id) WHERE purpose = 'vpc' AND vpc_ipv6_range IS NOT NULL;
