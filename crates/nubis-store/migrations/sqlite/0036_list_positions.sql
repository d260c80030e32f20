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

CREATE TRIGGER vpcs_blocks_insert AFTER INSERT ON vpcs BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpcs', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'vpcs', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'vpcs', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vpcs_blocks_delete AFTER DELETE ON vpcs BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpcs', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'vpcs', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'vpcs', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vpcs_blocks_move AFTER UPDATE OF account_id ON vpcs
WHEN OLD.account_id <> NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpcs', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'vpcs', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'vpcs', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpcs', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'vpcs', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'vpcs', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER instances_blocks_insert AFTER INSERT ON instances BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'instances', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'instances', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'instances', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER instances_blocks_delete AFTER DELETE ON instances BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'instances', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'instances', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'instances', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER instances_blocks_move AFTER UPDATE OF account_id ON instances
WHEN OLD.account_id <> NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'instances', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'instances', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'instances', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'instances', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'instances', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'instances', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER firewalls_blocks_insert AFTER INSERT ON firewalls BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewalls', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'firewalls', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'firewalls', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER firewalls_blocks_delete AFTER DELETE ON firewalls BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewalls', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'firewalls', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'firewalls', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER firewalls_blocks_move AFTER UPDATE OF account_id ON firewalls
WHEN OLD.account_id <> NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewalls', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'firewalls', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'firewalls', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewalls', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'firewalls', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'firewalls', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancers_blocks_insert AFTER INSERT ON nodebalancers BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancers', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'nodebalancers', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'nodebalancers', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancers_blocks_delete AFTER DELETE ON nodebalancers BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancers', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'nodebalancers', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'nodebalancers', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancers_blocks_move AFTER UPDATE OF account_id ON nodebalancers
WHEN OLD.account_id <> NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancers', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'nodebalancers', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'nodebalancers', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancers', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'nodebalancers', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'nodebalancers', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER events_blocks_insert AFTER INSERT ON events BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'events', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'events', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'events', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'events', 0, 1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER events_blocks_delete AFTER DELETE ON events BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'events', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'events', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'events', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'events', 0, -1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER events_blocks_move AFTER UPDATE OF account_id ON events
WHEN OLD.account_id <> NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'events', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'events', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'events', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'events', 0, -1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'events', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'events', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'events', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'events', 0, 1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER users_blocks_insert AFTER INSERT ON users BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'users', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'users', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'users', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'users', 0, 1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER users_blocks_delete AFTER DELETE ON users BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'users', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'users', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'users', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'users', 0, -1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER users_blocks_move AFTER UPDATE OF account_id ON users
WHEN OLD.account_id <> NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'users', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'users', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'users', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'users', 0, -1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'users', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'users', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'users', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'users', 0, 1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vpc_subnets_blocks_insert AFTER INSERT ON vpc_subnets BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpc_subnets', NEW.vpc_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'vpc_subnets', NEW.vpc_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'vpc_subnets', NEW.vpc_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.vpc_id, 'vpc_subnets', 0, 1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vpc_subnets_blocks_delete AFTER DELETE ON vpc_subnets BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpc_subnets', OLD.vpc_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'vpc_subnets', OLD.vpc_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'vpc_subnets', OLD.vpc_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.vpc_id, 'vpc_subnets', 0, -1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vpc_subnets_blocks_move AFTER UPDATE OF vpc_id ON vpc_subnets
WHEN OLD.vpc_id <> NEW.vpc_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpc_subnets', OLD.vpc_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'vpc_subnets', OLD.vpc_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'vpc_subnets', OLD.vpc_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.vpc_id, 'vpc_subnets', 0, -1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'vpc_subnets', NEW.vpc_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'vpc_subnets', NEW.vpc_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'vpc_subnets', NEW.vpc_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.vpc_id, 'vpc_subnets', 0, 1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancer_configs_blocks_insert AFTER INSERT ON nodebalancer_configs BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_configs', NEW.nodebalancer_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'nodebalancer_configs', NEW.nodebalancer_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'nodebalancer_configs', NEW.nodebalancer_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.nodebalancer_id, 'nodebalancer_configs', 0, 1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancer_configs_blocks_delete AFTER DELETE ON nodebalancer_configs BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_configs', OLD.nodebalancer_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'nodebalancer_configs', OLD.nodebalancer_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'nodebalancer_configs', OLD.nodebalancer_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.nodebalancer_id, 'nodebalancer_configs', 0, -1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancer_configs_blocks_move AFTER UPDATE OF nodebalancer_id ON nodebalancer_configs
WHEN OLD.nodebalancer_id <> NEW.nodebalancer_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_configs', OLD.nodebalancer_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'nodebalancer_configs', OLD.nodebalancer_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'nodebalancer_configs', OLD.nodebalancer_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.nodebalancer_id, 'nodebalancer_configs', 0, -1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_configs', NEW.nodebalancer_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'nodebalancer_configs', NEW.nodebalancer_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'nodebalancer_configs', NEW.nodebalancer_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.nodebalancer_id, 'nodebalancer_configs', 0, 1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancer_nodes_blocks_insert AFTER INSERT ON nodebalancer_nodes BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_nodes', NEW.config_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'nodebalancer_nodes', NEW.config_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'nodebalancer_nodes', NEW.config_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.config_id, 'nodebalancer_nodes', 0, 1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancer_nodes_blocks_delete AFTER DELETE ON nodebalancer_nodes BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_nodes', OLD.config_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'nodebalancer_nodes', OLD.config_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'nodebalancer_nodes', OLD.config_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.config_id, 'nodebalancer_nodes', 0, -1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER nodebalancer_nodes_blocks_move AFTER UPDATE OF config_id ON nodebalancer_nodes
WHEN OLD.config_id <> NEW.config_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_nodes', OLD.config_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'nodebalancer_nodes', OLD.config_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'nodebalancer_nodes', OLD.config_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.config_id, 'nodebalancer_nodes', 0, -1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'nodebalancer_nodes', NEW.config_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'nodebalancer_nodes', NEW.config_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'nodebalancer_nodes', NEW.config_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.config_id, 'nodebalancer_nodes', 0, 1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER firewall_devices_blocks_insert AFTER INSERT ON firewall_devices BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewall_devices', NEW.firewall_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'firewall_devices', NEW.firewall_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'firewall_devices', NEW.firewall_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.firewall_id, 'firewall_devices', 0, 1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER firewall_devices_blocks_delete AFTER DELETE ON firewall_devices BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewall_devices', OLD.firewall_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'firewall_devices', OLD.firewall_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'firewall_devices', OLD.firewall_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.firewall_id, 'firewall_devices', 0, -1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER firewall_devices_blocks_move AFTER UPDATE OF firewall_id ON firewall_devices
WHEN OLD.firewall_id <> NEW.firewall_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewall_devices', OLD.firewall_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'firewall_devices', OLD.firewall_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'firewall_devices', OLD.firewall_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.firewall_id, 'firewall_devices', 0, -1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'firewall_devices', NEW.firewall_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'firewall_devices', NEW.firewall_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'firewall_devices', NEW.firewall_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.firewall_id, 'firewall_devices', 0, 1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER ip_addresses_blocks_insert AFTER INSERT ON ip_addresses WHEN NEW.public BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'public_ips', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'public_ips', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'public_ips', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'public_ips', 0, 1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER ip_addresses_blocks_delete AFTER DELETE ON ip_addresses WHEN OLD.public BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'public_ips', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'public_ips', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'public_ips', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'public_ips', 0, -1 WHERE TRUE
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER ip_addresses_blocks_move AFTER UPDATE OF account_id, public ON ip_addresses
WHEN OLD.account_id <> NEW.account_id OR OLD.public IS NOT NEW.public BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'public_ips', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'public_ips', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'public_ips', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.public
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'public_ips', 0, -1 WHERE OLD.public
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'public_ips', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'public_ips', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'public_ips', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.public
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'public_ips', 0, 1 WHERE NEW.public
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;

INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpcs', account_id, 1, id >> 6, 0, COUNT(*) FROM vpcs GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpcs', account_id, 2, id >> 12, 0, COUNT(*) FROM vpcs GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpcs', account_id, 3, id >> 18, 0, COUNT(*) FROM vpcs GROUP BY account_id, id >> 18;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'instances', account_id, 1, id >> 6, 0, COUNT(*) FROM instances GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'instances', account_id, 2, id >> 12, 0, COUNT(*) FROM instances GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'instances', account_id, 3, id >> 18, 0, COUNT(*) FROM instances GROUP BY account_id, id >> 18;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'firewalls', account_id, 1, id >> 6, 0, COUNT(*) FROM firewalls GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'firewalls', account_id, 2, id >> 12, 0, COUNT(*) FROM firewalls GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'firewalls', account_id, 3, id >> 18, 0, COUNT(*) FROM firewalls GROUP BY account_id, id >> 18;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancers', account_id, 1, id >> 6, 0, COUNT(*) FROM nodebalancers GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancers', account_id, 2, id >> 12, 0, COUNT(*) FROM nodebalancers GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancers', account_id, 3, id >> 18, 0, COUNT(*) FROM nodebalancers GROUP BY account_id, id >> 18;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'events', account_id, 1, id >> 6, 0, COUNT(*) FROM events GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'events', account_id, 2, id >> 12, 0, COUNT(*) FROM events GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'events', account_id, 3, id >> 18, 0, COUNT(*) FROM events GROUP BY account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'events', 0, COUNT(*) FROM events GROUP BY account_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'users', account_id, 1, id >> 6, 0, COUNT(*) FROM users GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'users', account_id, 2, id >> 12, 0, COUNT(*) FROM users GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'users', account_id, 3, id >> 18, 0, COUNT(*) FROM users GROUP BY account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'users', 0, COUNT(*) FROM users GROUP BY account_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpc_subnets', vpc_id, 1, id >> 6, 0, COUNT(*) FROM vpc_subnets GROUP BY vpc_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpc_subnets', vpc_id, 2, id >> 12, 0, COUNT(*) FROM vpc_subnets GROUP BY vpc_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'vpc_subnets', vpc_id, 3, id >> 18, 0, COUNT(*) FROM vpc_subnets GROUP BY vpc_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT vpc_id, 'vpc_subnets', 0, COUNT(*) FROM vpc_subnets GROUP BY vpc_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancer_configs', nodebalancer_id, 1, id >> 6, 0, COUNT(*) FROM nodebalancer_configs GROUP BY nodebalancer_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancer_configs', nodebalancer_id, 2, id >> 12, 0, COUNT(*) FROM nodebalancer_configs GROUP BY nodebalancer_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancer_configs', nodebalancer_id, 3, id >> 18, 0, COUNT(*) FROM nodebalancer_configs GROUP BY nodebalancer_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT nodebalancer_id, 'nodebalancer_configs', 0, COUNT(*) FROM nodebalancer_configs GROUP BY nodebalancer_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancer_nodes', config_id, 1, id >> 6, 0, COUNT(*) FROM nodebalancer_nodes GROUP BY config_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancer_nodes', config_id, 2, id >> 12, 0, COUNT(*) FROM nodebalancer_nodes GROUP BY config_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'nodebalancer_nodes', config_id, 3, id >> 18, 0, COUNT(*) FROM nodebalancer_nodes GROUP BY config_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT config_id, 'nodebalancer_nodes', 0, COUNT(*) FROM nodebalancer_nodes GROUP BY config_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'firewall_devices', firewall_id, 1, id >> 6, 0, COUNT(*) FROM firewall_devices GROUP BY firewall_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'firewall_devices', firewall_id, 2, id >> 12, 0, COUNT(*) FROM firewall_devices GROUP BY firewall_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'firewall_devices', firewall_id, 3, id >> 18, 0, COUNT(*) FROM firewall_devices GROUP BY firewall_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT firewall_id, 'firewall_devices', 0, COUNT(*) FROM firewall_devices GROUP BY firewall_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'public_ips', account_id, 1, id >> 6, 0, COUNT(*) FROM ip_addresses WHERE public GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'public_ips', account_id, 2, id >> 12, 0, COUNT(*) FROM ip_addresses WHERE public GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'public_ips', account_id, 3, id >> 18, 0, COUNT(*) FROM ip_addresses WHERE public GROUP BY account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'public_ips', 0, COUNT(*) FROM ip_addresses WHERE public GROUP BY account_id;
