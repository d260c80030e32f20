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

-- TG_ARGV: the kind, the scope column, whether row_counts counts this list here, and the column
-- and the value (as JSON text) a row must have to be in the list ('' when every row is). Writers
-- spread over 8 shards of each block (and 16 of each count, as in 0010), so that concurrent
-- inserts into one list rarely update the same row.
CREATE FUNCTION nubis_list_rows() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    k TEXT := TG_ARGV[0];
    s BIGINT := pg_backend_pid() % 8;
    o_scope BIGINT;
    n_scope BIGINT;
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') AND (TG_ARGV[3] = '' OR to_jsonb(OLD) ->> TG_ARGV[3] = TG_ARGV[4]) THEN
        o_scope := (to_jsonb(OLD) ->> TG_ARGV[1])::BIGINT;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND (TG_ARGV[3] = '' OR to_jsonb(NEW) ->> TG_ARGV[3] = TG_ARGV[4]) THEN
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

CREATE TRIGGER vpcs_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id ON vpcs FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('vpcs', 'account_id', 'blocks', '', '');
CREATE TRIGGER instances_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id ON instances FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('instances', 'account_id', 'blocks', '', '');
CREATE TRIGGER firewalls_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id ON firewalls FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('firewalls', 'account_id', 'blocks', '', '');
CREATE TRIGGER nodebalancers_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id ON nodebalancers FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('nodebalancers', 'account_id', 'blocks', '', '');
CREATE TRIGGER events_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id ON events FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('events', 'account_id', 'count', '', '');
CREATE TRIGGER users_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id ON users FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('users', 'account_id', 'count', '', '');
CREATE TRIGGER vpc_subnets_blocks AFTER INSERT OR DELETE OR UPDATE OF vpc_id ON vpc_subnets FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('vpc_subnets', 'vpc_id', 'count', '', '');
CREATE TRIGGER nodebalancer_configs_blocks AFTER INSERT OR DELETE OR UPDATE OF nodebalancer_id ON nodebalancer_configs FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('nodebalancer_configs', 'nodebalancer_id', 'count', '', '');
CREATE TRIGGER nodebalancer_nodes_blocks AFTER INSERT OR DELETE OR UPDATE OF config_id ON nodebalancer_nodes FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('nodebalancer_nodes', 'config_id', 'count', '', '');
CREATE TRIGGER firewall_devices_blocks AFTER INSERT OR DELETE OR UPDATE OF firewall_id ON firewall_devices FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('firewall_devices', 'firewall_id', 'count', '', '');
CREATE TRIGGER public_ips_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id, public ON ip_addresses FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('public_ips', 'account_id', 'count', 'public', 'true');
CREATE TRIGGER personal_tokens_blocks AFTER INSERT OR DELETE OR UPDATE OF user_id, kind ON tokens FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('personal_tokens', 'user_id', 'count', 'kind', 'pat');
CREATE TRIGGER ssh_keys_blocks AFTER INSERT OR DELETE OR UPDATE OF user_id ON ssh_keys FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('ssh_keys', 'user_id', 'count', '', '');
CREATE TRIGGER confirmed_payments_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id, status ON payments FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('confirmed_payments', 'account_id', 'count', 'status', 'confirmed');
CREATE TRIGGER invoices_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id ON invoices FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('invoices', 'account_id', 'count', '', '');
CREATE TRIGGER invoice_items_blocks AFTER INSERT OR DELETE OR UPDATE OF invoice_id ON invoice_items FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('invoice_items', 'invoice_id', 'count', '', '');
CREATE TRIGGER payment_methods_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id, active ON payment_methods FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('payment_methods', 'account_id', 'count', 'active', 'true');
CREATE TRIGGER child_accounts_blocks AFTER INSERT OR DELETE OR UPDATE OF parent_id ON accounts FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('child_accounts', 'parent_id', 'count', '', '');
CREATE TRIGGER vpc_interfaces_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id, purpose ON instance_interfaces FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('vpc_interfaces', 'account_id', 'count', 'purpose', 'vpc');
CREATE TRIGGER account_logins_blocks AFTER INSERT OR DELETE OR UPDATE OF account_id, status ON logins FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('account_logins', 'account_id', 'count', 'status', 'successful');
CREATE TRIGGER user_logins_blocks AFTER INSERT OR DELETE OR UPDATE OF user_id, status ON logins FOR EACH ROW EXECUTE FUNCTION nubis_list_rows('user_logins', 'user_id', 'count', 'status', 'successful');

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

-- Where the row at `off` of a list is (nubis-store/src/sql.rs, `Store::locate`): from the top
-- level down, the block whose counts pass `off` (at most 64 blocks a level, each the sum of its
-- shards); the 64-id block's first and last id and how many of its rows come before the row.
-- NULLs past the end.
CREATE FUNCTION nubis_locate(k TEXT, s BIGINT, off BIGINT, descending BOOLEAN,
    OUT first BIGINT, OUT last BIGINT, OUT skip BIGINT) LANGUAGE plpgsql STABLE AS $fn$
DECLARE
    lvl INT;
    r RECORD;
    before BIGINT := 0;
    found_block BIGINT;
    lo BIGINT := NULL;
BEGIN
    FOR lvl IN REVERSE 3..1 LOOP
        found_block := NULL;
        FOR r IN SELECT b.block, CAST(SUM(b.n) AS BIGINT) AS n FROM row_blocks b
                 WHERE b.kind = k AND b.scope_id = s AND b.level = lvl
                   AND (lo IS NULL OR (b.block >= lo AND b.block < lo + 64))
                 GROUP BY b.block ORDER BY CASE WHEN descending THEN -b.block ELSE b.block END LOOP
            IF before + r.n > off THEN
                found_block := r.block;
                EXIT;
            END IF;
            before := before + r.n;
        END LOOP;
        IF found_block IS NULL THEN
            RETURN;
        END IF;
        lo := found_block * 64;
    END LOOP;
    first := found_block * 64;
    last := first + 63;
    skip := off - before;
END
$fn$;


-- Cached pages read the block counts: their writes send change notices (as row_counts, 0025).
CREATE TRIGGER row_blocks_change_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON row_blocks
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_change_notice();
