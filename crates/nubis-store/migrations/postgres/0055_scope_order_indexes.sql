-- Indexes that give a list's page its order without sorting (docs/decisions.md, "Pages whose
-- plan does not depend on the statistics").
--
-- An index on (scope, id) for the lists that had none: a shallow page of a whole list is read
-- with its scope as a range and first in its order, which only such an index gives.
CREATE INDEX IF NOT EXISTS vlans_account ON vlans(account_id, id);
CREATE INDEX IF NOT EXISTS payment_methods_account_active ON payment_methods(account_id, id) WHERE active = TRUE;
-- An index on (scope, field, id) for each order by a field that had only a unique (scope,
-- field): a page in that order reads its keys from `(field, id) >= key` in the index alone.
-- Without the id, PostgreSQL sorts every row of the scope past the key whenever it plans for
-- unknown values (a generic plan: 7.5 ms for a page of a balancer config's 10,000 nodes by
-- label, 0.2 ms with the index). SQLite's indexes end with the row id already.
CREATE INDEX IF NOT EXISTS accounts_parent_euuid_id ON accounts(parent_id, euuid, id);
CREATE INDEX IF NOT EXISTS firewall_rulesets_account_label_id ON firewall_rulesets(account_id, label, id);
CREATE INDEX IF NOT EXISTS firewalls_account_label_id ON firewalls(account_id, label, id);
CREATE INDEX IF NOT EXISTS instances_account_label_id ON instances(account_id, label, id);
CREATE INDEX IF NOT EXISTS nodebalancer_configs_balancer_port_id ON nodebalancer_configs(nodebalancer_id, port, id);
CREATE INDEX IF NOT EXISTS nodebalancer_nodes_config_label_id ON nodebalancer_nodes(config_id, label, id);
CREATE INDEX IF NOT EXISTS nodebalancers_account_ipv4_id ON nodebalancers(account_id, ipv4, id);
CREATE INDEX IF NOT EXISTS nodebalancers_account_label_id ON nodebalancers(account_id, label, id);
CREATE INDEX IF NOT EXISTS tokens_user_label_id ON tokens(user_id, label, id) WHERE kind = 'pat';
CREATE INDEX IF NOT EXISTS ssh_keys_user_label_id ON ssh_keys(user_id, label, id);
CREATE INDEX IF NOT EXISTS users_account_username_id ON users(account_id, username, id);
CREATE INDEX IF NOT EXISTS vlans_account_region_id ON vlans(account_id, region, id);
CREATE INDEX IF NOT EXISTS vpcs_account_label_id ON vpcs(account_id, label, id);
CREATE INDEX IF NOT EXISTS vpc_subnets_vpc_label_id ON vpc_subnets(vpc_id, label, id);
