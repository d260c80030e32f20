#!/usr/bin/env python3
"""Writes migrations 0036 (list positions: row_blocks, the kept counts of the lists, the indexes
that serve their filters, nubis_locate) and 0038 (the same for the lists added after it) for both
engines from the tables below: one trigger set per list, so the SQL's repetition has one source.
0036 has shipped: its tables stay as they are; a list added later goes into LISTS_38 (or a new
migration). Usage: scripts/gen-list-positions.py"""
LISTS = [  # table, kind, scope column, new kept count?
    ("vpcs", "vpcs", "account_id", False),
    ("instances", "instances", "account_id", False),
    ("firewalls", "firewalls", "account_id", False),
    ("nodebalancers", "nodebalancers", "account_id", False),
    ("events", "events", "account_id", True),
    ("users", "users", "account_id", True),
    ("vpc_subnets", "vpc_subnets", "vpc_id", True),
    ("nodebalancer_configs", "nodebalancer_configs", "nodebalancer_id", True),
    ("nodebalancer_nodes", "nodebalancer_nodes", "config_id", True),
    ("firewall_devices", "firewall_devices", "firewall_id", True),
    ("ip_addresses", "public_ips", "account_id", True, ("{r}.public", "public", "true")),
    ("tokens", "personal_tokens", "user_id", True, ("{r}.kind = 'pat'", "kind", "pat")),
    ("ssh_keys", "ssh_keys", "user_id", True),
    ("payments", "confirmed_payments", "account_id", True, ("{r}.status = 'confirmed'", "status", "confirmed")),
    ("invoices", "invoices", "account_id", True),
    ("invoice_items", "invoice_items", "invoice_id", True),
    ("payment_methods", "payment_methods", "account_id", True, ("{r}.active", "active", "true")),
    ("accounts", "child_accounts", "parent_id", True, ("{r}.parent_id IS NOT NULL", "", "")),
    ("instance_interfaces", "vpc_interfaces", "account_id", True, ("{r}.purpose = 'vpc'", "purpose", "vpc")),
    ("logins", "account_logins", "account_id", True,
     ("{r}.status = 'successful' AND {r}.account_id IS NOT NULL AND {r}.user_id IS NOT NULL", "status", "successful")),
    ("logins", "user_logins", "user_id", True,
     ("{r}.status = 'successful' AND {r}.account_id IS NOT NULL AND {r}.user_id IS NOT NULL", "status", "successful")),
]
INDEXES = [  # name, table, columns
    ("vpc_subnets_vpc_id", "vpc_subnets", "vpc_id, id"),
    ("nodebalancer_configs_balancer", "nodebalancer_configs", "nodebalancer_id, id"),
    ("nodebalancer_nodes_config", "nodebalancer_nodes", "config_id, id"),
    ("users_account", "users", "account_id, id"),
    ("vpcs_account_label", "vpcs", "account_id, label"),
    ("instances_account_label", "instances", "account_id, label"),
    ("instances_account_type", "instances", "account_id, type, id"),
    ("instances_account_image", "instances", "account_id, image, id"),
    ("instances_account_status", "instances", "account_id, status, id"),
    ("instances_account_group", "instances", "account_id, grp, id"),
    ("instances_account_created", "instances", "account_id, created, id"),
    ("firewalls_account_label", "firewalls", "account_id, label"),
    ("firewalls_account_created", "firewalls", "account_id, created, id"),
    ("nodebalancers_account_label", "nodebalancers", "account_id, label"),
    ("nodebalancers_account_region", "nodebalancers", "account_id, region, id"),
    ("nodebalancers_account_created", "nodebalancers", "account_id, created, id"),
    ("events_account_action", "events", "account_id, action, id"),
    ("events_account_created", "events", "account_id, created, id"),
    ("events_account_entity", "events", "account_id, entity_id, id"),
    ("events_account_entity_type", "events", "account_id, entity_type, id"),
    ("events_account_username", "events", "account_id, username, id"),
    ("events_account_status", "events", "account_id, status, id"),
    ("ip_addresses_account_address", "ip_addresses", "account_id, address"),
    ("vpcs_account_created", "vpcs", "account_id, created, id"),
    ("vpcs_account_updated", "vpcs", "account_id, updated, id"),
    ("instances_account_updated", "instances", "account_id, updated, id"),
    ("instances_account_region_id", "instances", "account_id, region, id"),
    ("firewalls_account_updated", "firewalls", "account_id, updated, id"),
    ("nodebalancers_account_ipv4", "nodebalancers", "account_id, ipv4"),
    ("nodebalancer_nodes_config_label", "nodebalancer_nodes", "config_id, label"),
    ("nodebalancer_nodes_config_address", "nodebalancer_nodes", "config_id, address, id"),
    ("users_account_username", "users", "account_id, username"),
    ("users_account_email", "users", "account_id, email, id"),
    ("vpc_subnets_vpc_label", "vpc_subnets", "vpc_id, label"),
    ("vpc_subnets_vpc_created", "vpc_subnets", "vpc_id, created, id"),
    ("events_created", "events", "created, id"),
    ("tokens_user_label", "tokens", "user_id, label"),
    ("tokens_user_created", "tokens", "user_id, created, id"),
    ("ssh_keys_user_label", "ssh_keys", "user_id, label"),
    ("ssh_keys_user_created", "ssh_keys", "user_id, created, id"),
    ("payments_account_date", "payments", "account_id, date, id"),
    ("invoices_account_date", "invoices", "account_id, date, id"),
    ("invoices_account_label", "invoices", "account_id, label, id"),
    ("invoices_account_total", "invoices", "account_id, total, id"),
    ("invoice_items_invoice", "invoice_items", "invoice_id, id"),
    ("invoice_items_invoice_label", "invoice_items", "invoice_id, label, id"),
    ("invoice_items_invoice_type", "invoice_items", "invoice_id, type, id"),
    ("invoice_items_invoice_region", "invoice_items", "invoice_id, region, id"),
    ("logins_account_datetime", "logins", "account_id, datetime, id"),
    ("logins_user", "logins", "user_id, id"),
    ("logins_user_datetime", "logins", "user_id, datetime, id"),
    ("logins_account_ip", "logins", "account_id, ip, id"),
    ("logins_account_username", "logins", "account_id, username, id"),
    ("logins_datetime", "logins", "datetime, id"),
    ("accounts_parent", "accounts", "parent_id, id"),
    ("instance_interfaces_instance", "instance_interfaces", "instance_id, id"),
    # The VPC interfaces of a subnet: most interfaces (public, VLAN) have no subnet, which made the
    # planner's statistics of the plain subnet index useless and SQLite built a temporary index
    # over every interface for each page of VPCs.
    ("instance_interfaces_vpc_subnet", "instance_interfaces", "subnet_id, id", "purpose = 'vpc'"),
    ("accounts_parent_company", "accounts", "parent_id, company, id"),
    ("accounts_parent_email", "accounts", "parent_id, email, id"),
]
# Added by 0038. An entry's sixth part: the id column the blocks count ("id"), and the trigger
# names' stem (the kind) when one list is kept from two columns (a transfer is in the list of the
# account that made it and of the one that accepted it).
LISTS_38 = [
    ("service_transfers", "service_transfers", "account_id", True, None, {"name": "service_transfers_sent"}),
    ("service_transfers", "service_transfers", "receiver_account_id", True, None, {"name": "service_transfers_received"}),
    ("firewall_rule_versions", "firewall_versions", "firewall_id", True, None, {"id": "version"}),
    ("instance_interface_history", "interface_history", "instance_id", True),
    ("firewall_rulesets", "firewall_rulesets", "account_id", True),
    ("instance_disks", "instance_disks", "instance_id", True),
    ("instance_configs", "instance_configs", "instance_id", True),
    ("oauth_clients", "oauth_clients", "account_id", True, None, {"id": "seq"}),
]
INDEXES_38 = [
    ("firewall_rule_versions_status", "firewall_rule_versions", "firewall_id, status, version"),
    ("firewall_rule_versions_created", "firewall_rule_versions", "firewall_id, created, version"),
    ("instance_interface_history_interface", "instance_interface_history", "instance_id, interface_id, id"),
    ("instance_interface_history_version", "instance_interface_history", "instance_id, version, id"),
    ("instance_interface_history_created", "instance_interface_history", "instance_id, created, id"),
    ("firewall_rulesets_created", "firewall_rulesets", "account_id, created, id"),
    ("oauth_clients_account_seq", "oauth_clients", "account_id, seq"),
    ("oauth_clients_seq", "oauth_clients", "seq"),
    ("oauth_clients_account_label", "oauth_clients", "account_id, label, seq"),
    ("instance_disks_label", "instance_disks", "instance_id, label, id"),
    ("instance_configs_label", "instance_configs", "instance_id, label, id"),
    ("service_transfers_token_account", "service_transfers", "account_id, token"),
    ("service_transfers_created", "service_transfers", "account_id, created, id"),
    ("service_transfers_received_created", "service_transfers", "receiver_account_id, created, id"),
]
HEAD_38 = """-- More lists kept by row_blocks and row_counts (0036): service transfers (in the list of the
-- account that made them and of the account that accepted them), firewall rule versions (by
-- version), interface history, rule sets, disks and configs; and the indexes that serve their
-- filters. Generated by scripts/gen-list-positions.py.
--
-- OAuth clients have text ids: their list is ordered by `seq`, the order they were made in
-- (oldest first, as before), which the blocks count.
ALTER TABLE oauth_clients ADD COLUMN seq BIGINT;
UPDATE oauth_clients SET seq = r.n FROM (SELECT id, row_number() OVER (ORDER BY created, id) AS n FROM oauth_clients) r
WHERE r.id = oauth_clients.id;
"""

HEAD = """-- Lists at scale (docs/decisions.md, "Pages located by kept block counts").
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
"""
LEVELS = [(1, 6), (2, 12), (3, 18)]

def norm(entry):
    """(table, kind, scope, count, when, id column, trigger name) of a LISTS entry."""
    table, kind, scope, count = entry[:4]
    when = entry[4] if len(entry) > 4 else None
    opts = entry[5] if len(entry) > 5 else {}
    return table, kind, scope, count, when, opts.get("id", "id"), opts.get("name", kind)

def sqlite(lists=LISTS, indexes=INDEXES, head=HEAD, merge=""):
    out = [head]
    for name, table, cols, *where in indexes:
        w = f" WHERE {where[0]}" if where else ""
        out.append(f"CREATE INDEX IF NOT EXISTS {name} ON {table}({cols}){w};")
    out.append("")
    for entry in lists:
        table, kind, scope, count, when, idc, tname = norm(entry)
        def rows(rec, sign, cond):
            # The statements that add `sign` for the row `rec` when `cond` (an SQL condition) holds.
            where = f" WHERE {rec}.{scope} IS NOT NULL" + (f" AND {cond}" if cond else "")
            vals = " UNION ALL ".join(f"SELECT '{kind}', {rec}.{scope}, {lv}, {rec}.{idc} >> {sh}, 0, {sign}" for lv, sh in LEVELS)
            body = [f"    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM ({vals}){where}\n"
                    f"    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;"]
            if count:
                body.append(f"    INSERT INTO row_counts (account_id, kind, shard, n) SELECT {rec}.{scope}, '{kind}', 0, {sign}{where}\n"
                            f"    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;")
            return body
        for op, rec, sign in (("INSERT", "NEW", "1"), ("DELETE", "OLD", "-1")):
            w = f" WHEN {when[0].format(r=rec)}" if when else ""
            out.append(f"CREATE TRIGGER {tname}_blocks_{op.lower()} AFTER {op} ON {table}{w} BEGIN\n" + "\n".join(rows(rec, sign, None)) + "\nEND;")
        # A row that moves to another scope (a service transfer moves instances), or in or out of the list.
        cols = f"{scope}, {when[1]}" if when and when[1] else scope
        change = f"OLD.{scope} IS NOT NEW.{scope}" + (f" OR OLD.{when[1]} IS NOT NEW.{when[1]}" if when and when[1] else "")
        mv = rows("OLD", "-1", when[0].format(r="OLD") if when else None) + rows("NEW", "1", when[0].format(r="NEW") if when else None)
        out.append(f"CREATE TRIGGER {tname}_blocks_move AFTER UPDATE OF {cols} ON {table}\n"
                   f"WHEN {change} BEGIN\n" + "\n".join(mv) + "\nEND;")
    out.append("")
    out.extend(fill(lists, merge))
    return "\n".join(out) + "\n"

def fill(lists, merge):
    """The statements that count the rows already there; `merge` (an ON CONFLICT clause's
    start) adds to counts another entry of the same kind wrote."""
    out = []
    for entry in lists:
        table, kind, scope, count, when, idc, _ = norm(entry)
        where = f" WHERE {scope} IS NOT NULL" + (f" AND {when[0].format(r=table)}" if when else "")
        for lv, sh in LEVELS:
            out.append(f"INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) "
                       f"SELECT '{kind}', {scope}, {lv}, {idc} >> {sh}, 0, COUNT(*) FROM {table}{where} GROUP BY {scope}, {idc} >> {sh}"
                       + (f"{merge} (kind, scope_id, level, block, shard) DO UPDATE SET n = row_blocks.n + excluded.n" if merge else "") + ";")
        if count:
            out.append(f"INSERT INTO row_counts (account_id, kind, shard, n) SELECT {scope}, '{kind}', 0, COUNT(*) FROM {table}{where} GROUP BY {scope}"
                       + (f"{merge} (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n" if merge else "") + ";")
    return out

LIST_ROWS_FN = """
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
"""

def list_rows_fn_by_column():
    """nubis_list_rows again, its id column named by TG_ARGV[5] ('id' when not given)."""
    f = LIST_ROWS_FN.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION")
    f = f.replace("-- TG_ARGV: the kind,", "-- (0038: TG_ARGV[5], when given, names the id column the blocks count; 'id' otherwise.)\n-- TG_ARGV: the kind,")
    f = f.replace("    n_scope BIGINT;\n", "    n_scope BIGINT;\n    idc TEXT := CASE WHEN TG_NARGS > 5 THEN TG_ARGV[5] ELSE 'id' END;\n    o_id BIGINT;\n    n_id BIGINT;\n")
    f = f.replace("        o_scope := (to_jsonb(OLD) ->> TG_ARGV[1])::BIGINT;\n", "        o_scope := (to_jsonb(OLD) ->> TG_ARGV[1])::BIGINT;\n        o_id := (to_jsonb(OLD) ->> idc)::BIGINT;\n")
    f = f.replace("        n_scope := (to_jsonb(NEW) ->> TG_ARGV[1])::BIGINT;\n", "        n_scope := (to_jsonb(NEW) ->> TG_ARGV[1])::BIGINT;\n        n_id := (to_jsonb(NEW) ->> idc)::BIGINT;\n")
    f = f.replace("OLD.id >>", "o_id >>").replace("NEW.id >>", "n_id >>")
    assert f.count("o_id >>") == 3 and f.count("n_id >>") == 3 and "idc TEXT" in f
    return f

def postgres(lists=LISTS, indexes=INDEXES, head=HEAD, merge="", functions=True):
    out = [head]
    for name, table, cols, *where in indexes:
        w = f" WHERE {where[0]}" if where else ""
        out.append(f"CREATE INDEX IF NOT EXISTS {name} ON {table}({cols}){w};")
    if functions:
        out.append(LIST_ROWS_FN)
    else:
        out.append(list_rows_fn_by_column())
    for entry in lists:
        table, kind, scope, count, when, idc, tname = norm(entry)
        when = when or ("", "", "")
        flag = "count" if count else "blocks"
        cols = f"{scope}, {when[1]}" if when[1] else scope
        extra = f", '{idc}'" if idc != "id" else ""
        out.append(f"CREATE TRIGGER {tname}_blocks AFTER INSERT OR DELETE OR UPDATE OF {cols} ON {table} FOR EACH ROW "
                   f"EXECUTE FUNCTION nubis_list_rows('{kind}', '{scope}', '{flag}', '{when[1]}', '{when[2]}'{extra});")
    out.append("")
    out.extend(fill(lists, merge))
    if not functions:
        return "\n".join(out) + "\n"
    out.append("""
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
""")
    out.append("""
-- Cached pages read the block counts: their writes send change notices (as row_counts, 0025).
CREATE TRIGGER row_blocks_change_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON row_blocks
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_change_notice();""")
    return "\n".join(out) + "\n"

if __name__ == "__main__":
    import os
    base = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "crates/nubis-store/migrations")
    open(f"{base}/sqlite/0036_list_positions.sql", "w").write(sqlite())
    open(f"{base}/postgres/0036_list_positions.sql", "w").write(postgres())
    open(f"{base}/sqlite/0038_more_list_positions.sql", "w").write(sqlite(LISTS_38, INDEXES_38, HEAD_38, " ON CONFLICT"))
    open(f"{base}/postgres/0038_more_list_positions.sql", "w").write(
        postgres(LISTS_38, INDEXES_38, HEAD_38, " ON CONFLICT", functions=False))
