-- Every list whose rows meet a condition of their own (a successful sign-in, a confirmed payment,
-- a maintenance window not canceled or still pending, a personal token, a VPC address with an
-- IPv6 range) gets, for each order by a field with fences, an index on (scope, field, id) that
-- holds only the rows meeting it. A deep page's keys (the rows it skips, then its ids) are then
-- read from that index alone; with an index on the columns alone each skipped row was also read
-- from the table to check the condition (docs/decisions.md, "The keys of a page from one index
-- alone"). The test every_fenced_order_reads_its_keys_from_one_index_alone checks every order.
-- SQLite reads an index alone only when it holds every column the read names, the condition's
-- too (its own WHERE does not stand in for them), so those columns follow the id, where they do
-- not change the order.
CREATE INDEX IF NOT EXISTS logins_ok_account_datetime ON logins(account_id, datetime, id, user_id, status) WHERE status = 'successful' AND account_id IS NOT NULL AND user_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS logins_ok_account_ip ON logins(account_id, ip, id, user_id, status) WHERE status = 'successful' AND account_id IS NOT NULL AND user_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS logins_ok_account_username ON logins(account_id, username, id, user_id, status) WHERE status = 'successful' AND account_id IS NOT NULL AND user_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS logins_ok_user_datetime ON logins(user_id, datetime, id, account_id, status) WHERE status = 'successful' AND account_id IS NOT NULL AND user_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS logins_ok_user_ip ON logins(user_id, ip, id, account_id, status) WHERE status = 'successful' AND account_id IS NOT NULL AND user_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS logins_ok_user_username ON logins(user_id, username, id, account_id, status) WHERE status = 'successful' AND account_id IS NOT NULL AND user_id IS NOT NULL;
-- The sign-in list's reads all name the condition now; the indexes on the columns alone served
-- nothing else.
DROP INDEX IF EXISTS logins_account_datetime;
DROP INDEX IF EXISTS logins_account_ip;
DROP INDEX IF EXISTS logins_account_username;
DROP INDEX IF EXISTS logins_user_datetime;
DROP INDEX IF EXISTS logins_user_ip;
DROP INDEX IF EXISTS logins_user_username;
CREATE INDEX IF NOT EXISTS payments_confirmed_date ON payments(account_id, date, id) WHERE status = 'confirmed';
CREATE INDEX IF NOT EXISTS maintenance_live_type ON maintenance(account_id, type, id, status) WHERE status <> 'canceled';
CREATE INDEX IF NOT EXISTS maintenance_live_when ON maintenance(account_id, when_ts, id, status) WHERE status <> 'canceled';
CREATE INDEX IF NOT EXISTS maintenance_pending_when ON maintenance(account_id, when_ts, id) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS tokens_pat_created ON tokens(user_id, created, id) WHERE kind = 'pat';
CREATE INDEX IF NOT EXISTS instance_interfaces_v6_account_instance ON instance_interfaces(account_id, instance_id, id, vpc_ipv6_range) WHERE purpose = 'vpc' AND vpc_ipv6_range IS NOT NULL;
CREATE INDEX IF NOT EXISTS instance_interfaces_v6_account_subnet ON instance_interfaces(account_id, subnet_id, id, vpc_ipv6_range) WHERE purpose = 'vpc' AND vpc_ipv6_range IS NOT NULL;
CREATE INDEX IF NOT EXISTS instance_interfaces_v6_account_vpc ON instance_interfaces(account_id, vpc_id, id, vpc_ipv6_range) WHERE purpose = 'vpc' AND vpc_ipv6_range IS NOT NULL;
CREATE INDEX IF NOT EXISTS instance_interfaces_v6_vpc_instance ON instance_interfaces(vpc_id, instance_id, id, vpc_ipv6_range) WHERE purpose = 'vpc' AND vpc_ipv6_range IS NOT NULL;
CREATE INDEX IF NOT EXISTS instance_interfaces_v6_vpc_subnet ON instance_interfaces(vpc_id, subnet_id, id, vpc_ipv6_range) WHERE purpose = 'vpc' AND vpc_ipv6_range IS NOT NULL;
-- (PostgreSQL also has one by label; SQLite's unique index on (user, label) has no condition.)
CREATE INDEX IF NOT EXISTS tokens_pat_label ON tokens(user_id, label, id) WHERE kind = 'pat';
