-- Lists at scale (docs/decisions.md, "Pages located by kept block counts").
--
-- row_blocks keeps, per list (kind) and scope (the account or the parent record), how many rows
-- fall in each block of ids at three levels: 64 ids (level 1), 4,096 (level 2) and 262,144
-- (level 3). A page deep in a list finds the block its first row is in by walking the counts
-- from the top level down (at most 64 blocks a level) and skips at most 63 rows there, so its
-- cost does not grow with the page number. Triggers keep the counts in the transaction of the
-- insert or delete (and of a move between scopes), like row_counts, which now also counts the
-- lists added here. Every list's filters and orders get an index that serves them.
CREATE TABLE row_blocks (
    kind TEXT NOT NULL,
    scope_id BIGINT NOT NULL,
    level BIGINT NOT NULL,
    block BIGINT NOT NULL,
    shard BIGINT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (kind, scope_id, level, block, shard)
);

CREATE INDEX IF NOT EXISTS vpc_subnets_vpc_id ON vpc_subnets(vpc_id, id);
CREATE INDEX IF NOT EXISTS nodebalancer_configs_balancer ON nodebalancer_configs(nodebalancer_id, id);
CREATE INDEX IF NOT EXISTS nodebalancer_nodes_config ON nodebalancer_nodes(config_id, id);
CREATE INDEX IF NOT EXISTS users_account ON users(account_id, id);
CREATE INDEX IF NOT EXISTS vpcs_account_label ON vpcs(account_id, label);
CREATE INDEX IF NOT EXISTS instances_account_label ON instances(account_id, label);
CREATE INDEX IF NOT EXISTS instances_account_type ON instances(account_id, type, id);
CREATE INDEX IF NOT EXISTS instances_account_image ON instances(account_id, image, id);
CREATE INDEX IF NOT EXISTS instances_account_status ON instances(account_id, status, id);
CREATE INDEX IF NOT EXISTS instances_account_group ON instances(account_id, grp, id);
CREATE INDEX IF NOT EXISTS instances_account_created ON instances(account_id, created, id);
CREATE INDEX IF NOT EXISTS firewalls_account_label ON firewalls(account_id, label);
CREATE INDEX IF NOT EXISTS firewalls_account_created ON firewalls(account_id, created, id);
CREATE INDEX IF NOT EXISTS nodebalancers_account_label ON nodebalancers(account_id, label);
CREATE INDEX IF NOT EXISTS nodebalancers_account_region ON nodebalancers(account_id, region, id);
CREATE INDEX IF NOT EXISTS nodebalancers_account_created ON nodebalancers(account_id, created, id);
CREATE INDEX IF NOT EXISTS events_account_action ON events(account_id, action, id);
CREATE INDEX IF NOT EXISTS events_account_created ON events(account_id, created, id);
CREATE INDEX IF NOT EXISTS events_account_entity ON events(account_id, entity_id, id);
CREATE INDEX IF NOT EXISTS events_account_entity_type ON events(account_id, entity_type, id);
CREATE INDEX IF NOT EXISTS events_account_username ON events(account_id, username, id);
CREATE INDEX IF NOT EXISTS events_account_status ON events(account_id, status, id);
CREATE INDEX IF NOT EXISTS ip_addresses_account_address ON ip_addresses(account_id, address);
CREATE INDEX IF NOT EXISTS vpcs_account_created ON vpcs(account_id, created, id);
CREATE INDEX IF NOT EXISTS vpcs_account_updated ON vpcs(account_id, updated, id);
CREATE INDEX IF NOT EXISTS instances_account_updated ON instances(account_id, updated, id);
CREATE INDEX IF NOT EXISTS instances_account_region_id ON instances(account_id, region, id);
CREATE INDEX IF NOT EXISTS firewalls_account_updated ON firewalls(account_id, updated, id);
CREATE INDEX IF NOT EXISTS nodebalancers_account_ipv4 ON nodebalancers(account_id, ipv4);
CREATE INDEX IF NOT EXISTS nodebalancer_nodes_config_label ON nodebalancer_nodes(config_id, label);
CREATE INDEX IF NOT EXISTS nodebalancer_nodes_config_address ON nodebalancer_nodes(config_id, address, id);
CREATE INDEX IF NOT EXISTS users_account_username ON users(account_id, username);
CREATE INDEX IF NOT EXISTS users_account_email ON users(account_id, email, id);
CREATE INDEX IF NOT EXISTS vpc_subnets_vpc_label ON vpc_subnets(vpc_id, label);
CREATE INDEX IF NOT EXISTS vpc_subnets_vpc_created ON vpc_subnets(vpc_id, created, id);
CREATE INDEX IF NOT EXISTS events_created ON events(created, id);
CREATE INDEX IF NOT EXISTS tokens_user_label ON tokens(user_id, label);
CREATE INDEX IF NOT EXISTS tokens_user_created ON tokens(user_id, created, id);
CREATE INDEX IF NOT EXISTS ssh_keys_user_label ON ssh_keys(user_id, label);
CREATE INDEX IF NOT EXISTS ssh_keys_user_created ON ssh_keys(user_id, created, id);
CREATE INDEX IF NOT EXISTS payments_account_date ON payments(account_id, date, id);
CREATE INDEX IF NOT EXISTS invoices_account_date ON invoices(account_id, date, id);
CREATE INDEX IF NOT EXISTS invoices_account_label ON invoices(account_id, label, id);
CREATE INDEX IF NOT EXISTS invoices_account_total ON invoices(account_id, total, id);
CREATE INDEX IF NOT EXISTS invoice_items_invoice ON invoice_items(invoice_id, id);
CREATE INDEX IF NOT EXISTS invoice_items_invoice_label ON invoice_items(invoice_id, label, id);
CREATE INDEX IF NOT EXISTS invoice_items_invoice_type ON invoice_items(invoice_id, type, id);
CREATE INDEX IF NOT EXISTS invoice_items_invoice_region ON invoice_items(invoice_id, region, id);
CREATE INDEX IF NOT EXISTS logins_account_datetime ON logins(account_id, datetime, id);
CREATE INDEX IF NOT EXISTS logins_user ON logins(user_id, id);
CREATE INDEX IF NOT EXISTS logins_user_datetime ON logins(user_id, datetime, id);
CREATE INDEX IF NOT EXISTS logins_account_ip ON logins(account_id, ip, id);
CREATE INDEX IF NOT EXISTS logins_account_username ON logins(account_id, username, id);
CREATE INDEX IF NOT EXISTS logins_datetime ON logins(datetime, id);
CREATE INDEX IF NOT EXISTS accounts_parent ON accounts(parent_id, id);
CREATE INDEX IF NOT EXISTS instance_interfaces_instance ON instance_interfaces(instance_id, id);
CREATE INDEX IF NOT EXISTS instance_interfaces_vpc_subnet ON instance_interfaces(subnet_id, id) WHERE purpose = 'vpc';
CREATE INDEX IF NOT EXISTS accounts_parent_company ON accounts(parent_id, company, id);
CREATE INDEX IF NOT EXISTS accounts_parent_email ON accounts(parent_id, email, id);

CREATE TRIGGER vpcs_blocks_insert AFTER INSERT ON vpcs BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpcs', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'vpcs', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'vpcs', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vpcs_blocks_delete AFTER DELETE ON vpcs BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpcs', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'vpcs', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'vpcs', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vpcs_blocks_move AFTER UPDATE OF account_id ON vpcs
WHEN OLD.account_id IS NOT NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpcs', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'vpcs', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'vpcs', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpcs', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'vpcs', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'vpcs', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER instances_blocks_insert AFTER INSERT ON instances BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'instances', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'instances', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'instances', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER instances_blocks_delete AFTER DELETE ON instances BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'instances', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'instances', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'instances', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER instances_blocks_move AFTER UPDATE OF account_id ON instances
WHEN OLD.account_id IS NOT NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'instances', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'instances', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'instances', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'instances', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'instances', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'instances', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER firewalls_blocks_insert AFTER INSERT ON firewalls BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewalls', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'firewalls', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'firewalls', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER firewalls_blocks_delete AFTER DELETE ON firewalls BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewalls', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'firewalls', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'firewalls', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER firewalls_blocks_move AFTER UPDATE OF account_id ON firewalls
WHEN OLD.account_id IS NOT NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewalls', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'firewalls', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'firewalls', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewalls', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'firewalls', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'firewalls', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancers_blocks_insert AFTER INSERT ON nodebalancers BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancers', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'nodebalancers', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'nodebalancers', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancers_blocks_delete AFTER DELETE ON nodebalancers BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancers', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'nodebalancers', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'nodebalancers', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancers_blocks_move AFTER UPDATE OF account_id ON nodebalancers
WHEN OLD.account_id IS NOT NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancers', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'nodebalancers', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'nodebalancers', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancers', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'nodebalancers', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'nodebalancers', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER events_blocks_insert AFTER INSERT ON events BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'events', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'events', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'events', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'events', 0, 1 WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER events_blocks_delete AFTER DELETE ON events BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'events', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'events', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'events', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'events', 0, -1 WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER events_blocks_move AFTER UPDATE OF account_id ON events
WHEN OLD.account_id IS NOT NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'events', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'events', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'events', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'events', 0, -1 WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'events', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'events', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'events', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'events', 0, 1 WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER users_blocks_insert AFTER INSERT ON users BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'users', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'users', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'users', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'users', 0, 1 WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER users_blocks_delete AFTER DELETE ON users BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'users', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'users', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'users', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'users', 0, -1 WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER users_blocks_move AFTER UPDATE OF account_id ON users
WHEN OLD.account_id IS NOT NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'users', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'users', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'users', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'users', 0, -1 WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'users', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'users', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'users', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'users', 0, 1 WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vpc_subnets_blocks_insert AFTER INSERT ON vpc_subnets BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpc_subnets', NEW.vpc_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'vpc_subnets', NEW.vpc_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'vpc_subnets', NEW.vpc_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.vpc_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.vpc_id, 'vpc_subnets', 0, 1 WHERE NEW.vpc_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vpc_subnets_blocks_delete AFTER DELETE ON vpc_subnets BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpc_subnets', OLD.vpc_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'vpc_subnets', OLD.vpc_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'vpc_subnets', OLD.vpc_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.vpc_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.vpc_id, 'vpc_subnets', 0, -1 WHERE OLD.vpc_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vpc_subnets_blocks_move AFTER UPDATE OF vpc_id ON vpc_subnets
WHEN OLD.vpc_id IS NOT NEW.vpc_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpc_subnets', OLD.vpc_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'vpc_subnets', OLD.vpc_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'vpc_subnets', OLD.vpc_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.vpc_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.vpc_id, 'vpc_subnets', 0, -1 WHERE OLD.vpc_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpc_subnets', NEW.vpc_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'vpc_subnets', NEW.vpc_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'vpc_subnets', NEW.vpc_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.vpc_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.vpc_id, 'vpc_subnets', 0, 1 WHERE NEW.vpc_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancer_configs_blocks_insert AFTER INSERT ON nodebalancer_configs BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_configs', NEW.nodebalancer_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'nodebalancer_configs', NEW.nodebalancer_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'nodebalancer_configs', NEW.nodebalancer_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.nodebalancer_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.nodebalancer_id, 'nodebalancer_configs', 0, 1 WHERE NEW.nodebalancer_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancer_configs_blocks_delete AFTER DELETE ON nodebalancer_configs BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_configs', OLD.nodebalancer_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'nodebalancer_configs', OLD.nodebalancer_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'nodebalancer_configs', OLD.nodebalancer_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.nodebalancer_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.nodebalancer_id, 'nodebalancer_configs', 0, -1 WHERE OLD.nodebalancer_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancer_configs_blocks_move AFTER UPDATE OF nodebalancer_id ON nodebalancer_configs
WHEN OLD.nodebalancer_id IS NOT NEW.nodebalancer_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_configs', OLD.nodebalancer_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'nodebalancer_configs', OLD.nodebalancer_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'nodebalancer_configs', OLD.nodebalancer_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.nodebalancer_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.nodebalancer_id, 'nodebalancer_configs', 0, -1 WHERE OLD.nodebalancer_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_configs', NEW.nodebalancer_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'nodebalancer_configs', NEW.nodebalancer_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'nodebalancer_configs', NEW.nodebalancer_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.nodebalancer_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.nodebalancer_id, 'nodebalancer_configs', 0, 1 WHERE NEW.nodebalancer_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancer_nodes_blocks_insert AFTER INSERT ON nodebalancer_nodes BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_nodes', NEW.config_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'nodebalancer_nodes', NEW.config_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'nodebalancer_nodes', NEW.config_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.config_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.config_id, 'nodebalancer_nodes', 0, 1 WHERE NEW.config_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancer_nodes_blocks_delete AFTER DELETE ON nodebalancer_nodes BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_nodes', OLD.config_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'nodebalancer_nodes', OLD.config_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'nodebalancer_nodes', OLD.config_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.config_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.config_id, 'nodebalancer_nodes', 0, -1 WHERE OLD.config_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancer_nodes_blocks_move AFTER UPDATE OF config_id ON nodebalancer_nodes
WHEN OLD.config_id IS NOT NEW.config_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_nodes', OLD.config_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'nodebalancer_nodes', OLD.config_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'nodebalancer_nodes', OLD.config_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.config_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.config_id, 'nodebalancer_nodes', 0, -1 WHERE OLD.config_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_nodes', NEW.config_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'nodebalancer_nodes', NEW.config_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'nodebalancer_nodes', NEW.config_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.config_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.config_id, 'nodebalancer_nodes', 0, 1 WHERE NEW.config_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER firewall_devices_blocks_insert AFTER INSERT ON firewall_devices BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewall_devices', NEW.firewall_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'firewall_devices', NEW.firewall_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'firewall_devices', NEW.firewall_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.firewall_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.firewall_id, 'firewall_devices', 0, 1 WHERE NEW.firewall_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER firewall_devices_blocks_delete AFTER DELETE ON firewall_devices BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewall_devices', OLD.firewall_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'firewall_devices', OLD.firewall_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'firewall_devices', OLD.firewall_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.firewall_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.firewall_id, 'firewall_devices', 0, -1 WHERE OLD.firewall_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER firewall_devices_blocks_move AFTER UPDATE OF firewall_id ON firewall_devices
WHEN OLD.firewall_id IS NOT NEW.firewall_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewall_devices', OLD.firewall_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'firewall_devices', OLD.firewall_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'firewall_devices', OLD.firewall_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.firewall_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.firewall_id, 'firewall_devices', 0, -1 WHERE OLD.firewall_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewall_devices', NEW.firewall_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'firewall_devices', NEW.firewall_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'firewall_devices', NEW.firewall_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.firewall_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.firewall_id, 'firewall_devices', 0, 1 WHERE NEW.firewall_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER public_ips_blocks_insert AFTER INSERT ON ip_addresses WHEN NEW.public BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'public_ips', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'public_ips', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'public_ips', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'public_ips', 0, 1 WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER public_ips_blocks_delete AFTER DELETE ON ip_addresses WHEN OLD.public BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'public_ips', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'public_ips', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'public_ips', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'public_ips', 0, -1 WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER public_ips_blocks_move AFTER UPDATE OF account_id, public ON ip_addresses
WHEN OLD.account_id IS NOT NEW.account_id OR OLD.public IS NOT NEW.public BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'public_ips', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'public_ips', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'public_ips', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL AND OLD.public
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'public_ips', 0, -1 WHERE OLD.account_id IS NOT NULL AND OLD.public
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'public_ips', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'public_ips', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'public_ips', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL AND NEW.public
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'public_ips', 0, 1 WHERE NEW.account_id IS NOT NULL AND NEW.public
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER personal_tokens_blocks_insert AFTER INSERT ON tokens WHEN NEW.kind = 'pat' BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'personal_tokens', NEW.user_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'personal_tokens', NEW.user_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'personal_tokens', NEW.user_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.user_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.user_id, 'personal_tokens', 0, 1 WHERE NEW.user_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER personal_tokens_blocks_delete AFTER DELETE ON tokens WHEN OLD.kind = 'pat' BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'personal_tokens', OLD.user_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'personal_tokens', OLD.user_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'personal_tokens', OLD.user_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.user_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.user_id, 'personal_tokens', 0, -1 WHERE OLD.user_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER personal_tokens_blocks_move AFTER UPDATE OF user_id, kind ON tokens
WHEN OLD.user_id IS NOT NEW.user_id OR OLD.kind IS NOT NEW.kind BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'personal_tokens', OLD.user_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'personal_tokens', OLD.user_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'personal_tokens', OLD.user_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.user_id IS NOT NULL AND OLD.kind = 'pat'
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.user_id, 'personal_tokens', 0, -1 WHERE OLD.user_id IS NOT NULL AND OLD.kind = 'pat'
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'personal_tokens', NEW.user_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'personal_tokens', NEW.user_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'personal_tokens', NEW.user_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.user_id IS NOT NULL AND NEW.kind = 'pat'
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.user_id, 'personal_tokens', 0, 1 WHERE NEW.user_id IS NOT NULL AND NEW.kind = 'pat'
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER ssh_keys_blocks_insert AFTER INSERT ON ssh_keys BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'ssh_keys', NEW.user_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'ssh_keys', NEW.user_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'ssh_keys', NEW.user_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.user_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.user_id, 'ssh_keys', 0, 1 WHERE NEW.user_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER ssh_keys_blocks_delete AFTER DELETE ON ssh_keys BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'ssh_keys', OLD.user_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'ssh_keys', OLD.user_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'ssh_keys', OLD.user_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.user_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.user_id, 'ssh_keys', 0, -1 WHERE OLD.user_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER ssh_keys_blocks_move AFTER UPDATE OF user_id ON ssh_keys
WHEN OLD.user_id IS NOT NEW.user_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'ssh_keys', OLD.user_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'ssh_keys', OLD.user_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'ssh_keys', OLD.user_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.user_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.user_id, 'ssh_keys', 0, -1 WHERE OLD.user_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'ssh_keys', NEW.user_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'ssh_keys', NEW.user_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'ssh_keys', NEW.user_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.user_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.user_id, 'ssh_keys', 0, 1 WHERE NEW.user_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER confirmed_payments_blocks_insert AFTER INSERT ON payments WHEN NEW.status = 'confirmed' BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'confirmed_payments', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'confirmed_payments', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'confirmed_payments', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'confirmed_payments', 0, 1 WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER confirmed_payments_blocks_delete AFTER DELETE ON payments WHEN OLD.status = 'confirmed' BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'confirmed_payments', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'confirmed_payments', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'confirmed_payments', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'confirmed_payments', 0, -1 WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER confirmed_payments_blocks_move AFTER UPDATE OF account_id, status ON payments
WHEN OLD.account_id IS NOT NEW.account_id OR OLD.status IS NOT NEW.status BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'confirmed_payments', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'confirmed_payments', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'confirmed_payments', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL AND OLD.status = 'confirmed'
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'confirmed_payments', 0, -1 WHERE OLD.account_id IS NOT NULL AND OLD.status = 'confirmed'
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'confirmed_payments', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'confirmed_payments', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'confirmed_payments', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL AND NEW.status = 'confirmed'
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'confirmed_payments', 0, 1 WHERE NEW.account_id IS NOT NULL AND NEW.status = 'confirmed'
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER invoices_blocks_insert AFTER INSERT ON invoices BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'invoices', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'invoices', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'invoices', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'invoices', 0, 1 WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER invoices_blocks_delete AFTER DELETE ON invoices BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'invoices', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'invoices', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'invoices', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'invoices', 0, -1 WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER invoices_blocks_move AFTER UPDATE OF account_id ON invoices
WHEN OLD.account_id IS NOT NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'invoices', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'invoices', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'invoices', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'invoices', 0, -1 WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'invoices', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'invoices', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'invoices', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'invoices', 0, 1 WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER invoice_items_blocks_insert AFTER INSERT ON invoice_items BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'invoice_items', NEW.invoice_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'invoice_items', NEW.invoice_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'invoice_items', NEW.invoice_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.invoice_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.invoice_id, 'invoice_items', 0, 1 WHERE NEW.invoice_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER invoice_items_blocks_delete AFTER DELETE ON invoice_items BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'invoice_items', OLD.invoice_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'invoice_items', OLD.invoice_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'invoice_items', OLD.invoice_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.invoice_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.invoice_id, 'invoice_items', 0, -1 WHERE OLD.invoice_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER invoice_items_blocks_move AFTER UPDATE OF invoice_id ON invoice_items
WHEN OLD.invoice_id IS NOT NEW.invoice_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'invoice_items', OLD.invoice_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'invoice_items', OLD.invoice_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'invoice_items', OLD.invoice_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.invoice_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.invoice_id, 'invoice_items', 0, -1 WHERE OLD.invoice_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'invoice_items', NEW.invoice_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'invoice_items', NEW.invoice_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'invoice_items', NEW.invoice_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.invoice_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.invoice_id, 'invoice_items', 0, 1 WHERE NEW.invoice_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER payment_methods_blocks_insert AFTER INSERT ON payment_methods WHEN NEW.active BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'payment_methods', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'payment_methods', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'payment_methods', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'payment_methods', 0, 1 WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER payment_methods_blocks_delete AFTER DELETE ON payment_methods WHEN OLD.active BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'payment_methods', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'payment_methods', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'payment_methods', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'payment_methods', 0, -1 WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER payment_methods_blocks_move AFTER UPDATE OF account_id, active ON payment_methods
WHEN OLD.account_id IS NOT NEW.account_id OR OLD.active IS NOT NEW.active BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'payment_methods', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'payment_methods', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'payment_methods', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL AND OLD.active
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'payment_methods', 0, -1 WHERE OLD.account_id IS NOT NULL AND OLD.active
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'payment_methods', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'payment_methods', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'payment_methods', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL AND NEW.active
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'payment_methods', 0, 1 WHERE NEW.account_id IS NOT NULL AND NEW.active
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER child_accounts_blocks_insert AFTER INSERT ON accounts WHEN NEW.parent_id IS NOT NULL BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'child_accounts', NEW.parent_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'child_accounts', NEW.parent_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'child_accounts', NEW.parent_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.parent_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.parent_id, 'child_accounts', 0, 1 WHERE NEW.parent_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER child_accounts_blocks_delete AFTER DELETE ON accounts WHEN OLD.parent_id IS NOT NULL BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'child_accounts', OLD.parent_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'child_accounts', OLD.parent_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'child_accounts', OLD.parent_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.parent_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.parent_id, 'child_accounts', 0, -1 WHERE OLD.parent_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER child_accounts_blocks_move AFTER UPDATE OF parent_id ON accounts
WHEN OLD.parent_id IS NOT NEW.parent_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'child_accounts', OLD.parent_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'child_accounts', OLD.parent_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'child_accounts', OLD.parent_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.parent_id IS NOT NULL AND OLD.parent_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.parent_id, 'child_accounts', 0, -1 WHERE OLD.parent_id IS NOT NULL AND OLD.parent_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'child_accounts', NEW.parent_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'child_accounts', NEW.parent_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'child_accounts', NEW.parent_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.parent_id IS NOT NULL AND NEW.parent_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.parent_id, 'child_accounts', 0, 1 WHERE NEW.parent_id IS NOT NULL AND NEW.parent_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vpc_interfaces_blocks_insert AFTER INSERT ON instance_interfaces WHEN NEW.purpose = 'vpc' BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpc_interfaces', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'vpc_interfaces', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'vpc_interfaces', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'vpc_interfaces', 0, 1 WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vpc_interfaces_blocks_delete AFTER DELETE ON instance_interfaces WHEN OLD.purpose = 'vpc' BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpc_interfaces', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'vpc_interfaces', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'vpc_interfaces', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'vpc_interfaces', 0, -1 WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vpc_interfaces_blocks_move AFTER UPDATE OF account_id, purpose ON instance_interfaces
WHEN OLD.account_id IS NOT NEW.account_id OR OLD.purpose IS NOT NEW.purpose BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpc_interfaces', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'vpc_interfaces', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'vpc_interfaces', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL AND OLD.purpose = 'vpc'
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'vpc_interfaces', 0, -1 WHERE OLD.account_id IS NOT NULL AND OLD.purpose = 'vpc'
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpc_interfaces', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'vpc_interfaces', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'vpc_interfaces', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL AND NEW.purpose = 'vpc'
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'vpc_interfaces', 0, 1 WHERE NEW.account_id IS NOT NULL AND NEW.purpose = 'vpc'
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER account_logins_blocks_insert AFTER INSERT ON logins WHEN NEW.status = 'successful' AND NEW.account_id IS NOT NULL AND NEW.user_id IS NOT NULL BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'account_logins', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'account_logins', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'account_logins', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'account_logins', 0, 1 WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER account_logins_blocks_delete AFTER DELETE ON logins WHEN OLD.status = 'successful' AND OLD.account_id IS NOT NULL AND OLD.user_id IS NOT NULL BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'account_logins', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'account_logins', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'account_logins', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'account_logins', 0, -1 WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER account_logins_blocks_move AFTER UPDATE OF account_id, status ON logins
WHEN OLD.account_id IS NOT NEW.account_id OR OLD.status IS NOT NEW.status BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'account_logins', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'account_logins', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'account_logins', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL AND OLD.status = 'successful' AND OLD.account_id IS NOT NULL AND OLD.user_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'account_logins', 0, -1 WHERE OLD.account_id IS NOT NULL AND OLD.status = 'successful' AND OLD.account_id IS NOT NULL AND OLD.user_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'account_logins', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'account_logins', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'account_logins', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL AND NEW.status = 'successful' AND NEW.account_id IS NOT NULL AND NEW.user_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'account_logins', 0, 1 WHERE NEW.account_id IS NOT NULL AND NEW.status = 'successful' AND NEW.account_id IS NOT NULL AND NEW.user_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER user_logins_blocks_insert AFTER INSERT ON logins WHEN NEW.status = 'successful' AND NEW.account_id IS NOT NULL AND NEW.user_id IS NOT NULL BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'user_logins', NEW.user_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'user_logins', NEW.user_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'user_logins', NEW.user_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.user_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.user_id, 'user_logins', 0, 1 WHERE NEW.user_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER user_logins_blocks_delete AFTER DELETE ON logins WHEN OLD.status = 'successful' AND OLD.account_id IS NOT NULL AND OLD.user_id IS NOT NULL BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'user_logins', OLD.user_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'user_logins', OLD.user_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'user_logins', OLD.user_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.user_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.user_id, 'user_logins', 0, -1 WHERE OLD.user_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER user_logins_blocks_move AFTER UPDATE OF user_id, status ON logins
WHEN OLD.user_id IS NOT NEW.user_id OR OLD.status IS NOT NEW.status BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'user_logins', OLD.user_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'user_logins', OLD.user_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'user_logins', OLD.user_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.user_id IS NOT NULL AND OLD.status = 'successful' AND OLD.account_id IS NOT NULL AND OLD.user_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.user_id, 'user_logins', 0, -1 WHERE OLD.user_id IS NOT NULL AND OLD.status = 'successful' AND OLD.account_id IS NOT NULL AND OLD.user_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'user_logins', NEW.user_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'user_logins', NEW.user_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'user_logins', NEW.user_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.user_id IS NOT NULL AND NEW.status = 'successful' AND NEW.account_id IS NOT NULL AND NEW.user_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.user_id, 'user_logins', 0, 1 WHERE NEW.user_id IS NOT NULL AND NEW.status = 'successful' AND NEW.account_id IS NOT NULL AND NEW.user_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;

INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpcs', account_id, 1, id >> 6, 0, COUNT(*) FROM vpcs WHERE account_id IS NOT NULL GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpcs', account_id, 2, id >> 12, 0, COUNT(*) FROM vpcs WHERE account_id IS NOT NULL GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpcs', account_id, 3, id >> 18, 0, COUNT(*) FROM vpcs WHERE account_id IS NOT NULL GROUP BY account_id, id >> 18;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'instances', account_id, 1, id >> 6, 0, COUNT(*) FROM instances WHERE account_id IS NOT NULL GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'instances', account_id, 2, id >> 12, 0, COUNT(*) FROM instances WHERE account_id IS NOT NULL GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'instances', account_id, 3, id >> 18, 0, COUNT(*) FROM instances WHERE account_id IS NOT NULL GROUP BY account_id, id >> 18;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'firewalls', account_id, 1, id >> 6, 0, COUNT(*) FROM firewalls WHERE account_id IS NOT NULL GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'firewalls', account_id, 2, id >> 12, 0, COUNT(*) FROM firewalls WHERE account_id IS NOT NULL GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'firewalls', account_id, 3, id >> 18, 0, COUNT(*) FROM firewalls WHERE account_id IS NOT NULL GROUP BY account_id, id >> 18;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancers', account_id, 1, id >> 6, 0, COUNT(*) FROM nodebalancers WHERE account_id IS NOT NULL GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancers', account_id, 2, id >> 12, 0, COUNT(*) FROM nodebalancers WHERE account_id IS NOT NULL GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancers', account_id, 3, id >> 18, 0, COUNT(*) FROM nodebalancers WHERE account_id IS NOT NULL GROUP BY account_id, id >> 18;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'events', account_id, 1, id >> 6, 0, COUNT(*) FROM events WHERE account_id IS NOT NULL GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'events', account_id, 2, id >> 12, 0, COUNT(*) FROM events WHERE account_id IS NOT NULL GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'events', account_id, 3, id >> 18, 0, COUNT(*) FROM events WHERE account_id IS NOT NULL GROUP BY account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'events', 0, COUNT(*) FROM events WHERE account_id IS NOT NULL GROUP BY account_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'users', account_id, 1, id >> 6, 0, COUNT(*) FROM users WHERE account_id IS NOT NULL GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'users', account_id, 2, id >> 12, 0, COUNT(*) FROM users WHERE account_id IS NOT NULL GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'users', account_id, 3, id >> 18, 0, COUNT(*) FROM users WHERE account_id IS NOT NULL GROUP BY account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'users', 0, COUNT(*) FROM users WHERE account_id IS NOT NULL GROUP BY account_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpc_subnets', vpc_id, 1, id >> 6, 0, COUNT(*) FROM vpc_subnets WHERE vpc_id IS NOT NULL GROUP BY vpc_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpc_subnets', vpc_id, 2, id >> 12, 0, COUNT(*) FROM vpc_subnets WHERE vpc_id IS NOT NULL GROUP BY vpc_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpc_subnets', vpc_id, 3, id >> 18, 0, COUNT(*) FROM vpc_subnets WHERE vpc_id IS NOT NULL GROUP BY vpc_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT vpc_id, 'vpc_subnets', 0, COUNT(*) FROM vpc_subnets WHERE vpc_id IS NOT NULL GROUP BY vpc_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancer_configs', nodebalancer_id, 1, id >> 6, 0, COUNT(*) FROM nodebalancer_configs WHERE nodebalancer_id IS NOT NULL GROUP BY nodebalancer_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancer_configs', nodebalancer_id, 2, id >> 12, 0, COUNT(*) FROM nodebalancer_configs WHERE nodebalancer_id IS NOT NULL GROUP BY nodebalancer_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancer_configs', nodebalancer_id, 3, id >> 18, 0, COUNT(*) FROM nodebalancer_configs WHERE nodebalancer_id IS NOT NULL GROUP BY nodebalancer_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT nodebalancer_id, 'nodebalancer_configs', 0, COUNT(*) FROM nodebalancer_configs WHERE nodebalancer_id IS NOT NULL GROUP BY nodebalancer_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancer_nodes', config_id, 1, id >> 6, 0, COUNT(*) FROM nodebalancer_nodes WHERE config_id IS NOT NULL GROUP BY config_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancer_nodes', config_id, 2, id >> 12, 0, COUNT(*) FROM nodebalancer_nodes WHERE config_id IS NOT NULL GROUP BY config_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancer_nodes', config_id, 3, id >> 18, 0, COUNT(*) FROM nodebalancer_nodes WHERE config_id IS NOT NULL GROUP BY config_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT config_id, 'nodebalancer_nodes', 0, COUNT(*) FROM nodebalancer_nodes WHERE config_id IS NOT NULL GROUP BY config_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'firewall_devices', firewall_id, 1, id >> 6, 0, COUNT(*) FROM firewall_devices WHERE firewall_id IS NOT NULL GROUP BY firewall_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'firewall_devices', firewall_id, 2, id >> 12, 0, COUNT(*) FROM firewall_devices WHERE firewall_id IS NOT NULL GROUP BY firewall_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'firewall_devices', firewall_id, 3, id >> 18, 0, COUNT(*) FROM firewall_devices WHERE firewall_id IS NOT NULL GROUP BY firewall_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT firewall_id, 'firewall_devices', 0, COUNT(*) FROM firewall_devices WHERE firewall_id IS NOT NULL GROUP BY firewall_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'public_ips', account_id, 1, id >> 6, 0, COUNT(*) FROM ip_addresses WHERE account_id IS NOT NULL AND ip_addresses.public GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'public_ips', account_id, 2, id >> 12, 0, COUNT(*) FROM ip_addresses WHERE account_id IS NOT NULL AND ip_addresses.public GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'public_ips', account_id, 3, id >> 18, 0, COUNT(*) FROM ip_addresses WHERE account_id IS NOT NULL AND ip_addresses.public GROUP BY account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'public_ips', 0, COUNT(*) FROM ip_addresses WHERE account_id IS NOT NULL AND ip_addresses.public GROUP BY account_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'personal_tokens', user_id, 1, id >> 6, 0, COUNT(*) FROM tokens WHERE user_id IS NOT NULL AND tokens.kind = 'pat' GROUP BY user_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'personal_tokens', user_id, 2, id >> 12, 0, COUNT(*) FROM tokens WHERE user_id IS NOT NULL AND tokens.kind = 'pat' GROUP BY user_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'personal_tokens', user_id, 3, id >> 18, 0, COUNT(*) FROM tokens WHERE user_id IS NOT NULL AND tokens.kind = 'pat' GROUP BY user_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT user_id, 'personal_tokens', 0, COUNT(*) FROM tokens WHERE user_id IS NOT NULL AND tokens.kind = 'pat' GROUP BY user_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'ssh_keys', user_id, 1, id >> 6, 0, COUNT(*) FROM ssh_keys WHERE user_id IS NOT NULL GROUP BY user_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'ssh_keys', user_id, 2, id >> 12, 0, COUNT(*) FROM ssh_keys WHERE user_id IS NOT NULL GROUP BY user_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'ssh_keys', user_id, 3, id >> 18, 0, COUNT(*) FROM ssh_keys WHERE user_id IS NOT NULL GROUP BY user_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT user_id, 'ssh_keys', 0, COUNT(*) FROM ssh_keys WHERE user_id IS NOT NULL GROUP BY user_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'confirmed_payments', account_id, 1, id >> 6, 0, COUNT(*) FROM payments WHERE account_id IS NOT NULL AND payments.status = 'confirmed' GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'confirmed_payments', account_id, 2, id >> 12, 0, COUNT(*) FROM payments WHERE account_id IS NOT NULL AND payments.status = 'confirmed' GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'confirmed_payments', account_id, 3, id >> 18, 0, COUNT(*) FROM payments WHERE account_id IS NOT NULL AND payments.status = 'confirmed' GROUP BY account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'confirmed_payments', 0, COUNT(*) FROM payments WHERE account_id IS NOT NULL AND payments.status = 'confirmed' GROUP BY account_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'invoices', account_id, 1, id >> 6, 0, COUNT(*) FROM invoices WHERE account_id IS NOT NULL GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'invoices', account_id, 2, id >> 12, 0, COUNT(*) FROM invoices WHERE account_id IS NOT NULL GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'invoices', account_id, 3, id >> 18, 0, COUNT(*) FROM invoices WHERE account_id IS NOT NULL GROUP BY account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'invoices', 0, COUNT(*) FROM invoices WHERE account_id IS NOT NULL GROUP BY account_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'invoice_items', invoice_id, 1, id >> 6, 0, COUNT(*) FROM invoice_items WHERE invoice_id IS NOT NULL GROUP BY invoice_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'invoice_items', invoice_id, 2, id >> 12, 0, COUNT(*) FROM invoice_items WHERE invoice_id IS NOT NULL GROUP BY invoice_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'invoice_items', invoice_id, 3, id >> 18, 0, COUNT(*) FROM invoice_items WHERE invoice_id IS NOT NULL GROUP BY invoice_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT invoice_id, 'invoice_items', 0, COUNT(*) FROM invoice_items WHERE invoice_id IS NOT NULL GROUP BY invoice_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'payment_methods', account_id, 1, id >> 6, 0, COUNT(*) FROM payment_methods WHERE account_id IS NOT NULL AND payment_methods.active GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'payment_methods', account_id, 2, id >> 12, 0, COUNT(*) FROM payment_methods WHERE account_id IS NOT NULL AND payment_methods.active GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'payment_methods', account_id, 3, id >> 18, 0, COUNT(*) FROM payment_methods WHERE account_id IS NOT NULL AND payment_methods.active GROUP BY account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'payment_methods', 0, COUNT(*) FROM payment_methods WHERE account_id IS NOT NULL AND payment_methods.active GROUP BY account_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'child_accounts', parent_id, 1, id >> 6, 0, COUNT(*) FROM accounts WHERE parent_id IS NOT NULL AND accounts.parent_id IS NOT NULL GROUP BY parent_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'child_accounts', parent_id, 2, id >> 12, 0, COUNT(*) FROM accounts WHERE parent_id IS NOT NULL AND accounts.parent_id IS NOT NULL GROUP BY parent_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'child_accounts', parent_id, 3, id >> 18, 0, COUNT(*) FROM accounts WHERE parent_id IS NOT NULL AND accounts.parent_id IS NOT NULL GROUP BY parent_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT parent_id, 'child_accounts', 0, COUNT(*) FROM accounts WHERE parent_id IS NOT NULL AND accounts.parent_id IS NOT NULL GROUP BY parent_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpc_interfaces', account_id, 1, id >> 6, 0, COUNT(*) FROM instance_interfaces WHERE account_id IS NOT NULL AND instance_interfaces.purpose = 'vpc' GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpc_interfaces', account_id, 2, id >> 12, 0, COUNT(*) FROM instance_interfaces WHERE account_id IS NOT NULL AND instance_interfaces.purpose = 'vpc' GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpc_interfaces', account_id, 3, id >> 18, 0, COUNT(*) FROM instance_interfaces WHERE account_id IS NOT NULL AND instance_interfaces.purpose = 'vpc' GROUP BY account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'vpc_interfaces', 0, COUNT(*) FROM instance_interfaces WHERE account_id IS NOT NULL AND instance_interfaces.purpose = 'vpc' GROUP BY account_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'account_logins', account_id, 1, id >> 6, 0, COUNT(*) FROM logins WHERE account_id IS NOT NULL AND logins.status = 'successful' AND logins.account_id IS NOT NULL AND logins.user_id IS NOT NULL GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'account_logins', account_id, 2, id >> 12, 0, COUNT(*) FROM logins WHERE account_id IS NOT NULL AND logins.status = 'successful' AND logins.account_id IS NOT NULL AND logins.user_id IS NOT NULL GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'account_logins', account_id, 3, id >> 18, 0, COUNT(*) FROM logins WHERE account_id IS NOT NULL AND logins.status = 'successful' AND logins.account_id IS NOT NULL AND logins.user_id IS NOT NULL GROUP BY account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'account_logins', 0, COUNT(*) FROM logins WHERE account_id IS NOT NULL AND logins.status = 'successful' AND logins.account_id IS NOT NULL AND logins.user_id IS NOT NULL GROUP BY account_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'user_logins', user_id, 1, id >> 6, 0, COUNT(*) FROM logins WHERE user_id IS NOT NULL AND logins.status = 'successful' AND logins.account_id IS NOT NULL AND logins.user_id IS NOT NULL GROUP BY user_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'user_logins', user_id, 2, id >> 12, 0, COUNT(*) FROM logins WHERE user_id IS NOT NULL AND logins.status = 'successful' AND logins.account_id IS NOT NULL AND logins.user_id IS NOT NULL GROUP BY user_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'user_logins', user_id, 3, id >> 18, 0, COUNT(*) FROM logins WHERE user_id IS NOT NULL AND logins.status = 'successful' AND logins.account_id IS NOT NULL AND logins.user_id IS NOT NULL GROUP BY user_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT user_id, 'user_logins', 0, COUNT(*) FROM logins WHERE user_id IS NOT NULL AND logins.status = 'successful' AND logins.account_id IS NOT NULL AND logins.user_id IS NOT NULL GROUP BY user_id;
