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

-- TG_ARGV: the kind, the scope column, whether row_counts counts this list here, and the boolean
-- column a row must have true to be in the list ('' when every row is). Writers
-- spread over 8 shards of each block (and 16 of each count, as in 0010), so that concurrent
-- inserts into one list rarely update the same row.
CREATE FUNCTION nubis_list_rows() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    k TEXT := TG_ARGV[0];
    s BIGINT := pg_backend_pid() % 8;
    o_scope BIGINT;
    n_scope BIGINT;
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') AND (TG_ARGV[3] = '' OR (to_jsonb(OLD) ->> TG_ARGV[3])::BOOLEAN) THEN
        o_scope := (to_jsonb(OLD) ->> TG_ARGV[1])::BIGINT;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND (TG_ARGV[3] = '' OR (to_jsonb(NEW) ->> TG_ARGV[3])::BOOLEAN) THEN
        n_scope := (to_jsonb(NEW) ->> TG_ARGV[1])::BIGINT;
    END IF;
    IF TG_OP = 'UPDATE' AND o_scope IS NOT DISTINCT FROM n_scope THEN
        RETURN NEW;
    END IF;
    IF o_scope IS NOT NULL THEN
        INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
        VALUES (k, o_scope, 1, OLD.id >> 6, s, -1), (k, o_scope, 2, OLD.id >> 12, s, -1), (k, o_scope, 3, OLD.id >> 18, s, -1)
        ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = row_blocks.n + excluded.n;
        IF TG_ARGV[2] = 'count' THEN
            INSERT INTO row_counts (account_id, kind, shard, n) VALUES (o_scope, k, pg_backend_pid() % 16, -1)
            ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n - 1;
        END IF;
    END IF;
    IF n_scope IS NOT NULL THEN
        INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
        VALUES (k, n_scope, 1, NEW.id >> 6, s, 1), (k, n_scope, 2, NEW.id >> 12, s, 1), (k, n_scope, 3, NEW.id >> 18, s, 1)
        ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = row_blocks.n + excluded.n;
        IF TG_ARGV[2] = 'count' THEN
            INSERT INTO row_counts (account_id, kind, shard, n) VALUES (n_scope, k, pg_backend_pid() % 16, 1)
            ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + 1;
        END IF;
    END IF;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER vpcs_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id ON vpcs FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('vpcs', 'account_id', 'blocks', '');
CREATE TRIGGER instances_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id ON instances FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('instances', 'account_id', 'blocks', '');
CREATE TRIGGER firewalls_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id ON firewalls FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('firewalls', 'account_id', 'blocks', '');
CREATE TRIGGER nodebalancers_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id ON nodebalancers FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('nodebalancers', 'account_id', 'blocks', '');
CREATE TRIGGER events_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id ON events FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('events', 'account_id', 'count', '');
CREATE TRIGGER users_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id ON users FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('users', 'account_id', 'count', '');
CREATE TRIGGER vpc_subnets_blocks AFTER INSERT OR DELETE OR UPDATE OF vpc_id ON vpc_subnets FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('vpc_subnets', 'vpc_id', 'count', '');
CREATE TRIGGER nodebalancer_configs_blocks AFTER INSERT OR DELETE OR UPDATE OF nodebalancer_id ON nodebalancer_configs FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('nodebalancer_configs', 'nodebalancer_id', 'count', '');
CREATE TRIGGER nodebalancer_nodes_blocks AFTER INSERT OR DELETE OR UPDATE OF config_id ON nodebalancer_nodes FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('nodebalancer_nodes', 'config_id', 'count', '');
CREATE TRIGGER firewall_devices_blocks AFTER INSERT OR DELETE OR UPDATE OF firewall_id ON firewall_devices FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('firewall_devices', 'firewall_id', 'count', '');
CREATE TRIGGER ip_addresses_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id, public ON ip_addresses FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('public_ips', 'account_id', 'count', 'public');

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

-- Cached pages read the block counts: their writes send change notices (as row_counts, 0025).
CREATE TRIGGER row_blocks_change_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON row_blocks
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_change_notice();
