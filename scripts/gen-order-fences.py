#!/usr/bin/env python3
"""Writes migrations 0039 (order fences: deep pages of a list in the order of one of its fields),
0040 (the maintenance list on the same mechanism), 0041 (its pending windows), 0043 (the IPv6
ranges of VPC interfaces), 0044 (the firewalls of a service), 0047 (orders by fields that may be
NULL), 0048 (an instance's balancers), 0049 (VLANs), 0050 (an instance's balancers' orders) and 0052
(more orders: sign-ins, OAuth clients by id, VPC addresses), 0053 (the PostgreSQL functions
again, an update's rows summed by sign) 0054 (one VPC's addresses, kept per VPC) 0061 (the account's
addresses in three orders), 0062 (VPC addresses by `active`), 0063 (VPC addresses by region and
profile), 0064 (more fields of five lists), 0065 (booleans, the transfers' columns), 0066 (a
transfer's status), 0068 (a sign-in's restricted), 0071 (a balancer's configurations and nodes), 0072 (the
transfer list's halves), 0079 (the last plain fields of four lists), 0080 (a service's firewalls by
their fields) and 0081 (a reader's marks on events) for both engines from the tables below: one trigger set per list, so the SQL's
repetition has one source (0042, which numbers the fences in key order, is written by hand). Usage: scripts/gen-order-fences.py

A list ordered by a field (`+order_by`) is cut into ranges by fences: keys (value, id) in that
order. Triggers count, in the write transaction, how many rows of each scope fall between a fence
and the next (`order_fence_counts`); fence 0 is the range below the first fence. The fences
themselves are placed by nubis (`Store::fences_split`), outside any request: a range that grows
past a bound is cut into pieces of a fixed size; an empty one is dropped. A deep page sums the
counts of the ranges in order to find the range its first row is in, then reads from that
range's key, skipping fewer rows than a range holds. Only fields that are never NULL are fenced.
"""
import os

# table, list kind (as in row_counts), scope column, (SQLite condition with {r}, column, value)
# or None when every row of the scope is in the list, id column, [(field path, column, type)].
FENCES = [
    ("instances", "instances", "account_id", None, "id",
     [("label", "label", "text"), ("region", "region", "text"), ("type", "type", "text"),
      ("status", "status", "text"), ("group", "grp", "text"), ("created", "created", "text"),
      ("updated", "updated", "text")]),
    ("firewalls", "firewalls", "account_id", None, "id",
     [("label", "label", "text"), ("created", "created", "text"), ("updated", "updated", "text")]),
    ("nodebalancers", "nodebalancers", "account_id", None, "id",
     [("label", "label", "text"), ("region", "region", "text"), ("ipv4", "ipv4", "text")]),
    ("vpcs", "vpcs", "account_id", None, "id",
     [("label", "label", "text"), ("region", "region", "text"), ("created", "created", "text"),
      ("updated", "updated", "text")]),
    ("vpc_subnets", "vpc_subnets", "vpc_id", None, "id", [("label", "label", "text"), ("created", "created", "text")]),
    ("nodebalancer_configs", "nodebalancer_configs", "nodebalancer_id", None, "id", [("port", "port", "int")]),
    ("nodebalancer_nodes", "nodebalancer_nodes", "config_id", None, "id",
     [("label", "label", "text"), ("address", "address", "text")]),
    ("users", "users", "account_id", None, "id", [("username", "username", "text"), ("email", "email", "text")]),
    ("tokens", "personal_tokens", "user_id", ("{r}.kind = 'pat'", "kind", "pat"), "id",
     [("label", "label", "text"), ("created", "created", "text")]),
    ("ssh_keys", "ssh_keys", "user_id", None, "id", [("label", "label", "text"), ("created", "created", "text")]),
    ("payments", "confirmed_payments", "account_id", ("{r}.status = 'confirmed'", "status", "confirmed"), "id",
     [("date", "date", "text")]),
    ("invoices", "invoices", "account_id", None, "id",
     [("date", "date", "text"), ("label", "label", "text"), ("total", "total", "int")]),
    ("invoice_items", "invoice_items", "invoice_id", None, "id", [("label", "label", "text"), ("type", "type", "text")]),
    ("accounts", "child_accounts", "parent_id", None, "id",
     [("euuid", "euuid", "text"), ("company", "company", "text"), ("email", "email", "text")]),
    ("firewall_rule_versions", "firewall_versions", "firewall_id", None, "version",
     [("updated", "created", "text"), ("status", "status", "text")]),
    ("instance_interface_history", "interface_history", "instance_id", None, "id",
     [("interface_id", "interface_id", "int"), ("version", "version", "int"), ("created", "created", "text")]),
    ("firewall_rulesets", "firewall_rulesets", "account_id", None, "id",
     [("label", "label", "text"), ("created", "created", "text")]),
    ("instance_disks", "instance_disks", "instance_id", None, "id", [("label", "label", "text")]),
    ("instance_configs", "instance_configs", "instance_id", None, "id", [("label", "label", "text")]),
    ("oauth_clients", "oauth_clients", "account_id", None, "seq", [("label", "label", "text")]),
    ("events", "events", "account_id", None, "id",
     [("action", "action", "text"), ("created", "created", "text"), ("status", "status", "text")]),
]

HEAD = """-- Order fences (docs/decisions.md, "Deep pages in a field's order"). Generated by
-- scripts/gen-order-fences.py: edit that, not this file.
--
-- A list ordered by a field is cut into ranges at fences, keys (value, id) in that order;
-- order_fence_counts counts the rows of each range per scope (fence 0: below the first fence),
-- kept by triggers in the write transaction like row_counts. nubis places the fences (a range
-- past a bound is cut, an empty one dropped); a deep page finds its range from the counts.
-- order_fence_kinds says, for nubis, which column of which table each kind orders by.
CREATE TABLE order_fence_kinds (
    kind TEXT PRIMARY KEY,
    tbl TEXT NOT NULL,
    scope_col TEXT NOT NULL,
    col TEXT NOT NULL,
    id_col TEXT NOT NULL,
    is_int BOOLEAN NOT NULL,
    cond TEXT NOT NULL
);
CREATE TABLE order_fences (
    kind TEXT NOT NULL,
    scope_id BIGINT NOT NULL,
    fence BIGINT NOT NULL,
    k_int BIGINT,
    k_text TEXT,
    k_id BIGINT NOT NULL,
    PRIMARY KEY (kind, scope_id, fence)
);
CREATE INDEX order_fences_int ON order_fences(kind, scope_id, k_int, k_id);
CREATE INDEX order_fences_text ON order_fences(kind, scope_id, k_text, k_id);
CREATE TABLE order_fence_counts (
    kind TEXT NOT NULL,
    scope_id BIGINT NOT NULL,
    fence BIGINT NOT NULL,
    shard BIGINT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (kind, scope_id, fence, shard)
);
"""


def key_expr(rec, col, null, typ="text"):
    """The fence key's value of a row (`rec` its alias, or None for the bare column): the column,
    for one that may be NULL the column with NULL as `null`, the lowest value, and for a boolean
    0 or 1 (a BOOLEAN on PostgreSQL, 0 or 1 on SQLite: the one expression is an integer on both)."""
    c = f"{rec}.{col}" if rec else col
    if typ == "bool":
        return f"(CASE WHEN {c} THEN 1 ELSE 0 END)"
    return f"COALESCE({c}, {null})" if null is not None else c


def int_key(typ):
    """Whether a field's fence keys are integers (`k_int`), else text (`k_text`)."""
    return typ in ("int", "bool")


def stem(kind, opts):
    """The name of a list's fence triggers: its kind, or the name its options give (a list kept
    from two scope columns has a trigger set for each)."""
    return (opts[0] if opts else {}).get("name", kind)


def fields_of(fields):
    """Fields as (path, column, type, NULL's value or None)."""
    return [tuple(f) + (None,) * (4 - len(f)) for f in fields]


def kinds(fences=FENCES):
    out = []
    for table, kind, scope, when, idc, fields, *opts in fences:
        o = opts[0] if opts else {}
        if not o.get("kinds", True):
            continue
        cond = when[0].format(r=table) if when else ""
        for path, col, typ, null in fields_of(fields):
            expr = key_expr(None, col, null, typ).replace("'", "''")
            out.append(f"INSERT INTO order_fence_kinds (kind, tbl, scope_col, col, id_col, is_int, cond) VALUES "
                       f"('{kind}.{path}', '{table}', '{o.get('scope_cols', scope)}', '{expr}', '{idc}', {'TRUE' if int_key(typ) else 'FALSE'}, "
                       f"'{cond.replace(chr(39), chr(39) * 2)}');")
    return out


def fill(fences=FENCES):
    """Every row already there is in fence 0 until nubis places fences."""
    out = []
    for table, kind, scope, when, idc, fields, *opts in fences:
        where = f" WHERE {scope} IS NOT NULL" + (f" AND {when[0].format(r=table)}" if when else "")
        shard = (opts[0] if opts else {}).get("shard", 0)
        for path, *_ in fields:
            out.append(f"INSERT INTO order_fence_counts (kind, scope_id, fence, shard, n) "
                       f"SELECT '{kind}.{path}', {scope}, 0, {shard}, COUNT(*) FROM {table}{where} GROUP BY {scope};")
    return out


def sqlite(fences=FENCES, head=HEAD, suffix=""):
    out = [head]
    out.extend(kinds(fences))
    out.append("")
    for table, kind, scope, when, idc, fields, *opts in fences:
        def add(rec, sign, path, col, typ, null, extra):
            k = f"{kind}.{path}"
            key = "k_int" if int_key(typ) else "k_text"
            cond = f" AND {when[0].format(r=rec)}" if when else ""
            return (f"    INSERT INTO order_fence_counts (kind, scope_id, fence, shard, n)\n"
                    f"    SELECT '{k}', {rec}.{scope}, COALESCE((SELECT f.fence FROM order_fences f WHERE f.kind = '{k}' "
                    f"AND f.scope_id = {rec}.{scope} AND ({key}, k_id) <= ({key_expr(rec, col, null, typ)}, {rec}.{idc}) "
                    f"ORDER BY {key} DESC, k_id DESC LIMIT 1), 0), 0, {sign}\n"
                    f"    WHERE {rec}.{scope} IS NOT NULL{cond}{extra}\n"
                    f"    ON CONFLICT (kind, scope_id, fence, shard) DO UPDATE SET n = n + excluded.n;")
        for op, rec, sign in (("INSERT", "NEW", "1"), ("DELETE", "OLD", "-1")):
            body = [add(rec, sign, p, c, t, z, "") for p, c, t, z in fields_of(fields)]
            out.append(f"CREATE TRIGGER {stem(kind, opts)}_fences{suffix}_{op.lower()} AFTER {op} ON {table} BEGIN\n" + "\n".join(body) + "\nEND;")
        # A change of a field, of the scope or of the list's condition moves the row between ranges.
        watched = [scope] + ([when[1]] if when and when[1] else []) + [f[1] for f in fields]
        body = []
        for p, c, t, z in fields_of(fields):
            moved = f" AND (OLD.{c} IS NOT NEW.{c} OR OLD.{scope} IS NOT NEW.{scope}" + \
                (f" OR OLD.{when[1]} IS NOT NEW.{when[1]}" if when and when[1] else "") + ")"
            body.append(add("OLD", "-1", p, c, t, z, moved))
            body.append(add("NEW", "1", p, c, t, z, moved))
        out.append(f"CREATE TRIGGER {stem(kind, opts)}_fences{suffix}_update AFTER UPDATE OF {', '.join(dict.fromkeys(watched))} ON {table} "
                   f"BEGIN\n" + "\n".join(body) + "\nEND;")
    out.append("")
    out.extend(fill(fences))
    return "\n".join(out) + "\n"


def _module():
    """The lists of migrations 0036 and 0038 (scripts/gen-list-positions.py)."""
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("gen_list_positions", os.path.join(here, "gen-list-positions.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _lists():
    """The lists of migrations 0036 and 0038 (scripts/gen-list-positions.py)."""
    mod = _module()
    return [mod.norm(e) for e in mod.LISTS + mod.LISTS_38]


PG_HEAD = """
-- On PostgreSQL the triggers that keep the lists' counts run once per statement, over the rows
-- it changed (transition tables), not once per row: a statement that writes many rows of one
-- list updates each count once instead of once per row (each update of a row in one
-- transaction leaves a version behind that the next must step over). The per-row triggers of
-- 0036 and 0038 are replaced the same way.
--
-- Writers of a fenced list hold its lock of the scope shared, so that nubis placing fences
-- (exclusively, Tx::fence_place) sees every count they wrote. Scopes share 64 locks per list:
-- a statement that writes rows of 100,000 scopes must not take 100,000 locks (the lock table
-- is bounded); sharing only makes a placement wait for writers of other scopes too.
CREATE FUNCTION nubis_fence_lock(k TEXT, sc BIGINT) RETURNS void LANGUAGE sql AS $fn$
    SELECT pg_advisory_xact_lock_shared(hashtextextended(k || ':' || (sc % 64), 0));
$fn$;

-- Cached pages read the counts: their writes send change notices (as row_counts, 0025).
CREATE TRIGGER order_fence_counts_change_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON order_fence_counts
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_change_notice();
CREATE TRIGGER order_fences_change_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON order_fences
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_change_notice();
"""


def pg_cond(when, rec):
    return f" AND {when[0].format(r=rec)}" if when else ""


def pg_changed(scope, when, cols):
    """The condition that a row (o before, n after) moved: its scope, its membership or a column."""
    watched = [scope] + ([when[1]] if when and when[1] else []) + cols
    return " OR ".join(f"o.{c} IS DISTINCT FROM n.{c}" for c in dict.fromkeys(watched))


def pg_function(name, parts, replace=False):
    """A trigger function running `parts[op]` (statements) for TG_OP; `replace`: a new body for
    the function of an earlier migration."""
    body = []
    for op in ("INSERT", "DELETE", "UPDATE"):
        if parts.get(op):
            body.append(f"    IF TG_OP = '{op}' THEN\n" + "\n".join(parts[op]) + "\n    END IF;")
    create = "CREATE OR REPLACE FUNCTION" if replace else "CREATE FUNCTION"
    return (f"{create} {name}() RETURNS trigger LANGUAGE plpgsql AS $fn$\nBEGIN\n" + "\n".join(body)
            + "\n    RETURN NULL;\nEND\n$fn$;")


def pg_triggers(name, table, fn):
    return [
        f"CREATE TRIGGER {name}_ins AFTER INSERT ON {table} REFERENCING NEW TABLE AS new_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}();",
        f"CREATE TRIGGER {name}_del AFTER DELETE ON {table} REFERENCING OLD TABLE AS old_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}();",
        f"CREATE TRIGGER {name}_upd AFTER UPDATE ON {table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}();",
    ]


# The columns that tell a row before and after an update apart, where they are not `id`.
PRIMARY_KEYS = {"firewall_rule_versions": ["firewall_id", "version"], "address_balancers": ["scope", "nodebalancer_id"]}


# 0053 on: an update's rows before (each counted -1) and after (+1) in one FROM item, their sign
# in `sgn`. A statement sums the signs per count and writes the sums that are not 0: a row that
# did not move adds 0. Migrations 0039-0052 paired each row before with the row after by a join
# of the two transition tables instead; PL/pgSQL plans a statement at its first run in a
# connection, usually for one row, and kept that plan (a nested loop over both tables) for a
# statement that updates 10,000 rows: 10^8 comparisons per statement (docs/decisions.md,
# "Statement triggers that sum signs").
SIGNED_UPDATE = "(SELECT o.*, -1 AS sgn FROM old_rows o UNION ALL SELECT n.*, 1 AS sgn FROM new_rows n) r"


def tally(sign):
    """The count a statement adds for its source's rows, and the condition on its groups: `sign`
    is "" (rows added), "-" (removed) or "±" (SIGNED_UPDATE, each row's own sign)."""
    return ("SUM(r.sgn)", " HAVING SUM(r.sgn) <> 0") if sign == "±" else (f"{sign}COUNT(*)", "")


def pg_moves(table, scope, when, cols, signed=False):
    """FROM items and signs of the rows a statement adds and removes, per TG_OP, as
    (op, [(source, sign)]) where a source is a FROM clause naming the row `r` (signed: an
    update's as SIGNED_UPDATE)."""
    if signed:
        return {"INSERT": [("new_rows r", "")], "DELETE": [("old_rows r", "-")], "UPDATE": [(SIGNED_UPDATE, "±")]}
    changed = pg_changed(scope, when, cols)
    same = " AND ".join(f"n.{c} = o.{c}" for c in PRIMARY_KEYS.get(table, ["id"]))
    upd_old = f"(SELECT o.* FROM old_rows o JOIN new_rows n ON {same} WHERE {changed}) r"
    upd_new = f"(SELECT n.* FROM old_rows o JOIN new_rows n ON {same} WHERE {changed}) r"
    return {"INSERT": [("new_rows r", "")], "DELETE": [("old_rows r", "-")], "UPDATE": [(upd_old, "-"), (upd_new, "")]}


# The lists whose kept counts migrations 0010 and 0012 keep by per-row triggers, replaced here.
ROW_COUNTED = ["vpcs", "instances", "firewalls", "nodebalancers"]


def pg_list_rows(lists=None, signed=False, triggers=True):
    """The per-statement functions and triggers of `lists` (normalized entries); by default those
    of 0036 and 0038, replacing their per-row triggers and those of 0010 and 0012. `signed`: an
    update's rows summed by sign (pg_moves); without `triggers`, new bodies for the functions of
    an earlier migration, whose triggers stay."""
    out = []
    replace = lists is None
    if replace:
        for table in ROW_COUNTED:
            out.append(f"DROP TRIGGER IF EXISTS {table}_count ON {table};")
            out.append(f"DROP TRIGGER IF EXISTS {table}_count_move ON {table};")
        out.append("DROP FUNCTION nubis_count_rows();")
        out.append("DROP FUNCTION nubis_count_rows_moved();")
        lists = _lists()
    for table, kind, scope, count, when, idc, tname in lists:
        count = count or kind in ROW_COUNTED
        if replace:
            out.append(f"DROP TRIGGER IF EXISTS {tname}_blocks ON {table};")
        parts = {}
        for op, sources in pg_moves(table, scope, when, [], signed).items():
            stmts = []
            for src, sign in sources:
                where = f"WHERE r.{scope} IS NOT NULL{pg_cond(when, 'r')}"
                n, having = tally(sign)
                stmts.append(
                    f"        INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)\n"
                    f"        SELECT '{kind}', r.{scope}, l.level, r.{idc} >> l.shift, pg_backend_pid() % 8, {n}\n"
                    f"        FROM {src} CROSS JOIN (VALUES (1, 6), (2, 12), (3, 18)) AS l(level, shift)\n"
                    f"        {where} GROUP BY r.{scope}, l.level, r.{idc} >> l.shift{having}\n"
                    f"        ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = row_blocks.n + excluded.n;")
                if count:
                    stmts.append(
                        f"        INSERT INTO row_counts (account_id, kind, shard, n)\n"
                        f"        SELECT r.{scope}, '{kind}', pg_backend_pid() % 16, {n} FROM {src}\n"
                        f"        {where} GROUP BY r.{scope}{having}\n"
                        f"        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n;")
            parts[op] = stmts
        out.append(pg_function(f"nubis_{tname}_rows", parts, not triggers))
        if triggers:
            out.extend(pg_triggers(f"{tname}_rows", table, f"nubis_{tname}_rows"))
    return out


def pg_fences(fences=FENCES, suffix="", signed=False, triggers=True):
    """The per-statement functions and triggers that count the rows of `fences`' lists between
    their fences; `signed` and `triggers` as in pg_list_rows."""
    out = []
    for table, kind, scope, when, idc, fields, *opts in fences:
        parts = {}
        for op, sources in pg_moves(table, scope, when, [f[1] for f in fields], signed).items():
            stmts = []
            for src, sign in sources:
                where = f"WHERE r.{scope} IS NOT NULL{pg_cond(when, 'r')}"
                n, having = tally(sign)
                for path, col, typ, null in fields_of(fields):
                    k = f"{kind}.{path}"
                    key = "k_int" if int_key(typ) else "k_text"
                    stmts.append(
                        f"        PERFORM nubis_fence_lock('{k}', s.scope) FROM (SELECT DISTINCT r.{scope} AS scope FROM {src} {where}) s;\n"
                        f"        INSERT INTO order_fence_counts (kind, scope_id, fence, shard, n)\n"
                        f"        SELECT '{k}', r.{scope}, COALESCE(f.fence, 0), pg_backend_pid() % 8, {n} FROM {src}\n"
                        f"        LEFT JOIN LATERAL (SELECT o.fence FROM order_fences o WHERE o.kind = '{k}' AND o.scope_id = r.{scope}\n"
                        f"            AND (o.{key}, o.k_id) <= ({key_expr('r', col, null, typ)}, r.{idc}) ORDER BY o.{key} DESC, o.k_id DESC LIMIT 1) f ON TRUE\n"
                        f"        {where} GROUP BY r.{scope}, COALESCE(f.fence, 0){having}\n"
                        f"        ON CONFLICT (kind, scope_id, fence, shard) DO UPDATE SET n = order_fence_counts.n + excluded.n;")
            parts[op] = stmts
        name = stem(kind, opts)
        out.append(pg_function(f"nubis_{name}_fences{suffix}", parts, not triggers))
        if triggers:
            out.extend(pg_triggers(f"{name}_fences{suffix}", table, f"nubis_{name}_fences{suffix}"))
    return out


def postgres():
    out = [HEAD]
    out.extend(kinds())
    out.append(PG_HEAD)
    out.extend(pg_list_rows())
    out.append("DROP FUNCTION nubis_list_rows();")
    out.append("")
    out.extend(pg_fences())
    out.append("")
    out.extend(fill())
    return "\n".join(out) + "\n"


# Added by 0040: the maintenance list, on the kept counts, blocks and fences like the lists
# above. A window leaves the list when its instance is deleted and follows the instance to
# another account, so that what the counts count is what the list shows.
MAINTENANCE = ("maintenance", "maintenance", "account_id", True, ("{r}.status <> 'canceled'", "status", "canceled"))
FENCES_40 = [
    ("maintenance", "maintenance", "account_id", MAINTENANCE[4], "id",
     [("status", "status", "text"), ("type", "type", "text"), ("when", "when_ts", "text")]),
]
INDEXES_40 = [
    ("maintenance_account_id", "maintenance", "account_id, id"),
    ("maintenance_account_status", "maintenance", "account_id, status, id"),
    ("maintenance_account_type", "maintenance", "account_id, type, id"),
    ("maintenance_account_when", "maintenance", "account_id, when_ts, id"),
    ("maintenance_instance", "maintenance", "instance_id"),
]
HEAD_40 = """-- The maintenance list at scale (docs/decisions.md, "Pages located by kept block counts" and
-- "Deep pages in a field's order"): its kept count (windows not canceled), id blocks and order
-- fences, and indexes for its filters and orders. Generated by scripts/gen-order-fences.py.
--
-- A window of a deleted instance leaves the list (the list shows windows of existing instances
-- only), and a window follows its instance to another account (a service transfer).
"""
CLEANUP_40_SQLITE = """DELETE FROM maintenance WHERE instance_id NOT IN (SELECT id FROM instances);
UPDATE maintenance SET account_id = (SELECT i.account_id FROM instances i WHERE i.id = maintenance.instance_id)
WHERE account_id <> (SELECT i.account_id FROM instances i WHERE i.id = maintenance.instance_id);
CREATE TRIGGER instances_maintenance_delete AFTER DELETE ON instances BEGIN
    DELETE FROM maintenance WHERE instance_id = OLD.id;
END;
CREATE TRIGGER instances_maintenance_move AFTER UPDATE OF account_id ON instances
WHEN OLD.account_id IS NOT NEW.account_id BEGIN
    UPDATE maintenance SET account_id = NEW.account_id WHERE instance_id = NEW.id;
END;
"""
CLEANUP_40_POSTGRES = """DELETE FROM maintenance m WHERE NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = m.instance_id);
UPDATE maintenance m SET account_id = i.account_id FROM instances i WHERE i.id = m.instance_id AND m.account_id <> i.account_id;
CREATE FUNCTION nubis_instances_maintenance() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM maintenance m USING old_rows o WHERE m.instance_id = o.id;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        UPDATE maintenance m SET account_id = n.account_id FROM new_rows n
        WHERE m.instance_id = n.id AND m.account_id <> n.account_id;
    END IF;
    RETURN NULL;
END
$fn$;
CREATE TRIGGER instances_maintenance_del AFTER DELETE ON instances REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_instances_maintenance();
CREATE TRIGGER instances_maintenance_upd AFTER UPDATE ON instances REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_instances_maintenance();
"""




# Added by 0041: the pending windows (the notifications' list) kept the same way.
PENDING = ("maintenance", "maintenance_pending", "account_id", True, ("{r}.status = 'pending'", "status", "pending"))
FENCES_41 = [("maintenance", "maintenance_pending", "account_id", PENDING[4], "id", [("when", "when_ts", "text")])]
HEAD_41 = """-- The pending maintenance windows, one notification each: their kept count, id blocks and
-- order fences on `when`, so that a page of notifications reads its windows alone.
-- Generated by scripts/gen-order-fences.py.
"""




# Added by 0043: the IPv6 ranges of VPC interfaces (`/v4/vpcs/ipv6s`), counted and blocked like
# the VPC addresses of 0036.
VPC_IPV6 = ("instance_interfaces", "vpc_ipv6_interfaces", "account_id", True,
            ("{r}.purpose = 'vpc' AND {r}.vpc_ipv6_range IS NOT NULL", "vpc_ipv6_range", ""))
HEAD_43 = """-- The IPv6 ranges of VPC interfaces (/v4/vpcs/ipv6s): their kept count and id blocks, so that
-- a page of them is located like the VPC addresses' (0036). Generated by
-- scripts/gen-order-fences.py.
"""




# Added by 0044: the firewalls of an instance and of a balancer, read from the devices in the
# order of their firewall ids (which the blocks count).
SERVICE_FIREWALLS = [
    ("firewall_devices", "instance_firewalls", "instance_id", True, None, {"id": "firewall_id"}),
    ("firewall_devices", "nodebalancer_firewalls", "nodebalancer_id", True, None, {"id": "firewall_id"}),
]
INDEXES_44 = [
    ("firewall_devices_instance_firewall", "firewall_devices", "instance_id, firewall_id"),
    ("firewall_devices_nodebalancer_firewall", "firewall_devices", "nodebalancer_id, firewall_id"),
]
HEAD_44 = """-- The firewalls of an instance and of a balancer: kept counts and blocks of firewall ids per
-- service, so that a page of them is read from the service's devices in firewall order.
-- Generated by scripts/gen-order-fences.py.
"""




def later_migration(engine, head, lists, fences=(), indexes=(), cleanup=("", ""), suffix="", signed=False):
    """A migration that puts more lists on the mechanism: the lists' kept counts and blocks
    (entries as in scripts/gen-list-positions.py), their fences, indexes, and SQL that runs
    first (`cleanup`, per engine). `suffix` names its fence triggers apart from those an
    earlier migration made on the same tables; `signed` (0054 on) as in pg_list_rows."""
    mod = _module()
    if engine == "sqlite":
        out = head + cleanup[0] + mod.sqlite(lists, list(indexes), head="")
        return out + (sqlite(list(fences), head="", suffix=suffix) if fences else "")
    out = [head + cleanup[1]]
    out.extend(f"CREATE INDEX IF NOT EXISTS {name} ON {table}({cols})" + (f" WHERE {where[0]}" if where else "") + ";"
               for name, table, cols, *where in indexes)
    out.extend(kinds(fences))
    out.extend(pg_list_rows([mod.norm(e) for e in lists], signed))
    out.extend(pg_fences(fences, suffix, signed))
    out.append("")
    out.extend(mod.fill(lists, ""))
    out.extend(fill(fences))
    return "\n".join(out) + "\n"


# Added by 0047: orders by fields that may be NULL, keyed by the field with NULL as its lowest
# value (0 or the empty string, which no row holds), the expression each order's index is on.
FENCES_47 = [
    ("events", "events", "account_id", None, "id",
     [("entity.id", "entity_id", "int", "0"), ("entity.type", "entity_type", "text", "''"),
      ("username", "username", "text", "''")]),
    ("instances", "instances", "account_id", None, "id", [("image", "image", "text", "''")]),
]
INDEXES_47 = [
    ("events_account_entity_order", "events", "account_id, COALESCE(entity_id, 0), id"),
    ("events_account_entity_type_order", "events", "account_id, COALESCE(entity_type, ''), id"),
    ("events_account_username_order", "events", "account_id, COALESCE(username, ''), id"),
    ("instances_account_image_order", "instances", "account_id, COALESCE(image, ''), id"),
]
HEAD_47 = """-- Orders by fields that may be NULL (docs/decisions.md, "Orders by a field that may be NULL"):
-- the list is ordered by the field with NULL as its lowest value, through an index on that
-- expression, and its deep pages start at order fences keyed by it. Generated by
-- scripts/gen-order-fences.py.
"""


# Added by 0048: an instance's balancers (those with a node on its private address), kept as
# rows per address and account: `scope` is the balancer's account * 2^32 + the address (v4 is
# unique across regions), `nodes` how many of the balancer's nodes are on the address. The rows
# follow the nodes in their write transactions; the list's kept counts and blocks are those of
# these rows, in balancer id order.
def address_scope(rec=""):
    """The scope of a node's row (`rec` its alias with a dot, or none): the balancer's account
    * 2^32 + the address (`address_scope` in nubis-store's balancer reads)."""
    return f"{rec}account_id * 4294967296 + {rec}v4"


ADDRESS_BALANCERS = [("address_balancers", "address_balancers", "scope", True, None, {"id": "nodebalancer_id"})]
HEAD_48 = f"""-- An instance's balancers as rows (docs/decisions.md, "An instance's balancers as rows"): one
-- per private address, balancer account and balancer with nodes there, kept from the nodes by
-- triggers, with kept counts and blocks so that a page of them is located like any list's.
-- Generated by scripts/gen-order-fences.py.
CREATE TABLE address_balancers (
    scope BIGINT NOT NULL,
    nodebalancer_id BIGINT NOT NULL,
    nodes BIGINT NOT NULL,
    PRIMARY KEY (scope, nodebalancer_id)
);
INSERT INTO address_balancers (scope, nodebalancer_id, nodes)
SELECT {address_scope()}, nodebalancer_id, COUNT(*) FROM nodebalancer_nodes
GROUP BY {address_scope()}, nodebalancer_id;
"""


# Rows kept per group of another table's rows (an address's balancers, an account's VLANs):
# one row per group with a count of its members, inserted with the first member and deleted with
# the last, by triggers on the members' table in their write transactions.
def group_side(table, count, keys, sign, extra=()):
    """SQLite: the statements that count one member in (sign 1) or out (-1) of its group's row
    of `table`: `keys` the (column, value) pairs that name the group, `extra` those a new row
    also takes."""
    cols = ", ".join(c for c, _ in keys)
    if sign > 0:
        names = ", ".join([c for c, _ in keys + list(extra)] + [count])
        vals = ", ".join([v for _, v in keys + list(extra)] + ["1"])
        return (f"    INSERT INTO {table} ({names}) VALUES ({vals})\n"
                f"    ON CONFLICT ({cols}) DO UPDATE SET {count} = {count} + 1;")
    match = " AND ".join(f"{c} = {v}" for c, v in keys)
    return (f"    UPDATE {table} SET {count} = {count} - 1 WHERE {match};\n"
            f"    DELETE FROM {table} WHERE {match} AND {count} <= 0;")


def sqlite_groups(name, child, watched, moved, side, member=None):
    """SQLite: the triggers on `child` that keep its groups' rows. `side(rec, sign)` gives the
    statements for the member `rec` (NEW or OLD), `moved` the condition that a row changed
    group, `member` (with {r}) that a row is a member at all (None: every row is)."""
    def when(rec):
        return f" WHEN {member.format(r=rec)}" if member else ""
    out = (f"CREATE TRIGGER {name}_insert AFTER INSERT ON {child}{when('NEW')} BEGIN\n{side('NEW', 1)}\nEND;\n"
           f"CREATE TRIGGER {name}_delete AFTER DELETE ON {child}{when('OLD')} BEGIN\n{side('OLD', -1)}\nEND;\n")
    update = f"AFTER UPDATE OF {watched} ON {child}\nWHEN "
    if member is None:
        return out + f"CREATE TRIGGER {name}_update {update}{moved} BEGIN\n{side('OLD', -1)}\n{side('NEW', 1)}\nEND;\n"
    # Each side only where that row is a member.
    return out + "".join(f"CREATE TRIGGER {name}_update_{tag} {update}({moved}) AND {member.format(r=rec)} BEGIN\n"
                         f"{side(rec, sign)}\nEND;\n" for tag, rec, sign in (("old", "OLD", -1), ("new", "NEW", 1)))


def pg_group_side(table, count, keys, src, sign, extra=()):
    """PostgreSQL: the statements that count the members of `src` (a FROM item naming them `r`)
    in (sign 1) or out (-1) of their groups' rows: `keys` (column, expression) name the group,
    `extra` (column, aggregate) the values a new row takes."""
    cols = ", ".join(c for c, _ in keys)
    by = ", ".join(str(i + 1) for i in range(len(keys)))
    if sign > 0:
        names = ", ".join([c for c, _ in keys + list(extra)] + [count])
        vals = ", ".join([e for _, e in keys + list(extra)] + ["COUNT(*)"])
        return (f"        INSERT INTO {table} ({names})\n"
                f"        SELECT {vals} FROM {src} GROUP BY {by}\n"
                f"        ON CONFLICT ({cols}) DO UPDATE SET {count} = {table}.{count} + excluded.{count};")
    named = ", ".join(e if e == f"r.{c}" else f"{e} AS {c}" for c, e in keys)
    return (f"        UPDATE {table} x SET {count} = x.{count} - d.n\n"
            f"        FROM (SELECT {named}, COUNT(*) AS n FROM {src} GROUP BY {by}) d\n"
            f"        WHERE {' AND '.join(f'x.{c} = d.{c}' for c, _ in keys)};\n"
            f"        DELETE FROM {table} x USING {src}\n"
            f"        WHERE {' AND '.join(f'x.{c} = {e}' for c, e in keys)} AND x.{count} <= 0;")


def pg_groups(name, child, moved, side, member=None, replace=False):
    """PostgreSQL: the function and statement triggers on `child` that keep its groups' rows;
    `side(src, sign)`, `moved` (rows o before, n after) and `member` (with {r}) as in
    `sqlite_groups`. `replace`: a new body for the function of an earlier migration, whose
    triggers stay."""
    def rows(table, rec):
        return f"{table} r" if member is None else f"(SELECT * FROM {table} {rec} WHERE {member.format(r=rec)}) r"
    def changed(rec):
        also = f" AND {member.format(r=rec)}" if member else ""
        cond = f"({moved}){also}" if member else moved
        return f"(SELECT {rec}.* FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE {cond}) r"
    fn = f"nubis_{name}"
    create = "CREATE OR REPLACE FUNCTION" if replace else "CREATE FUNCTION"
    body = f"""{create} {fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'INSERT' THEN
{side(rows("new_rows", "n"), 1)}
    END IF;
    IF TG_OP = 'DELETE' THEN
{side(rows("old_rows", "o"), -1)}
    END IF;
    IF TG_OP = 'UPDATE' THEN
{side(changed("o"), -1)}
{side(changed("n"), 1)}
    END IF;
    RETURN NULL;
END
$fn$;
"""
    if replace:
        return body
    return body + f"""CREATE TRIGGER {name}_ins AFTER INSERT ON {child} REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION {fn}();
CREATE TRIGGER {name}_del AFTER DELETE ON {child} REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION {fn}();
CREATE TRIGGER {name}_upd AFTER UPDATE ON {child}
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION {fn}();
"""


def pg_group_net(table, count, keys, src, sign, extra=()):
    """PostgreSQL (0053 on): the statements that move the members of `src` (a FROM item naming
    them `r`, each with its sign in `sgn`) into and out of their groups' rows: a group whose sum
    is above 0 gains rows (made if it was not there, with `extra` (column, aggregate) as its
    values), one below 0 loses them and goes when it has none left. `sign` says which can occur:
    1 (only added rows), -1 (only removed) or 0 (both). Each statement reads the members'
    groups and looks their rows up by the groups' key, whatever its plan assumed of the rows'
    number."""
    cols = ", ".join(c for c, _ in keys)
    by = ", ".join(str(i + 1) for i in range(len(keys)))
    on = " AND ".join(f"x.{c} = d.{c}" for c, _ in keys)
    named = ", ".join(e if e == f"r.{c}" else f"{e} AS {c}" for c, e in keys)
    out = []
    if sign >= 0:
        names = ", ".join([c for c, _ in keys + list(extra)] + [count])
        vals = ", ".join([e for _, e in keys + list(extra)] + ["SUM(r.sgn)"])
        out.append(f"        INSERT INTO {table} ({names})\n"
                   f"        SELECT {vals} FROM {src} GROUP BY {by} HAVING SUM(r.sgn) > 0\n"
                   f"        ON CONFLICT ({cols}) DO UPDATE SET {count} = {table}.{count} + excluded.{count};")
    if sign <= 0:
        lost = f"(SELECT {named}, SUM(r.sgn) AS n FROM {src} GROUP BY {by} HAVING SUM(r.sgn) < 0) d"
        out.append(f"        UPDATE {table} x SET {count} = x.{count} + d.n\n"
                   f"        FROM {lost}\n"
                   f"        WHERE {on};\n"
                   f"        DELETE FROM {table} x USING {lost}\n"
                   f"        WHERE {on} AND x.{count} <= 0;")
    return "\n".join(out)


def pg_groups_net(name, side, member=None):
    """PostgreSQL (0053 on): the new body of the function of `pg_groups` `name`, whose members
    are counted by sign (SIGNED_UPDATE) instead of paired by a join; `side(src, sign)` as
    `pg_group_net`'s, `member` as in `sqlite_groups`."""
    def rows(table, rec, sgn):
        cond = f" WHERE {member.format(r=rec)}" if member else ""
        return f"(SELECT {rec}.*, {sgn} AS sgn FROM {table} {rec}{cond}) r"
    both = "o.*, -1 AS sgn FROM old_rows o UNION ALL SELECT n.*, 1 AS sgn FROM new_rows n"
    changed = f"(SELECT * FROM (SELECT {both}) u WHERE {member.format(r='u')}) r" if member else f"(SELECT {both}) r"
    return pg_function(f"nubis_{name}", {"INSERT": [side(rows("new_rows", "n", 1), 1)],
                                         "DELETE": [side(rows("old_rows", "o", -1), -1)],
                                         "UPDATE": [side(changed, 0)]}, replace=True)


def node_keys(rec):
    return [("scope", address_scope(f"{rec}.")), ("nodebalancer_id", f"{rec}.nodebalancer_id")]


NODES_48_SQLITE = sqlite_groups(
    "nodes_address_balancers", "nodebalancer_nodes", "v4, account_id, nodebalancer_id",
    "OLD.v4 IS NOT NEW.v4 OR OLD.account_id IS NOT NEW.account_id OR OLD.nodebalancer_id IS NOT NEW.nodebalancer_id",
    lambda rec, sign: group_side("address_balancers", "nodes", node_keys(rec), sign))
NODES_48_POSTGRES = pg_groups(
    "nodes_address_balancers", "nodebalancer_nodes",
    "o.v4 <> n.v4 OR o.account_id <> n.account_id OR o.nodebalancer_id <> n.nodebalancer_id",
    lambda src, sign: pg_group_side("address_balancers", "nodes", node_keys("r"), src, sign))


# Added by 0050: an instance's balancers in the order of their label or region. The rows of
# address_balancers carry their balancer's label and region (a new row takes them, a renamed
# balancer's rows follow), so that the orders have fences and indexes like any list's.
def node_extra(rec):
    """The label and region a new row of address_balancers takes from its balancer."""
    return [(c, f"(SELECT b.{c} FROM nodebalancers b WHERE b.id = {rec}.nodebalancer_id)") for c in ("label", "region")]


FENCES_50 = [("address_balancers", "address_balancers", "scope", None, "nodebalancer_id",
              [("label", "label", "text"), ("region", "region", "text")])]
INDEXES_50 = [("address_balancers_label", "address_balancers", "scope, label, nodebalancer_id"),
              ("address_balancers_region", "address_balancers", "scope, region, nodebalancer_id"),
              ("address_balancers_balancer", "address_balancers", "nodebalancer_id")]
HEAD_50 = """-- An instance's balancers in the order of their label or region (docs/decisions.md, "An
-- instance's balancers as rows"): the rows carry their balancer's label and region, kept by
-- triggers, with indexes and fences for both orders. Generated by scripts/gen-order-fences.py.
ALTER TABLE address_balancers ADD COLUMN label TEXT NOT NULL DEFAULT '';
ALTER TABLE address_balancers ADD COLUMN region TEXT NOT NULL DEFAULT '';
UPDATE address_balancers SET label = (SELECT b.label FROM nodebalancers b WHERE b.id = address_balancers.nodebalancer_id),
    region = (SELECT b.region FROM nodebalancers b WHERE b.id = address_balancers.nodebalancer_id);
"""
NODES_50_SQLITE = ("".join(f"DROP TRIGGER nodes_address_balancers_{op};\n" for op in ("insert", "delete", "update"))
                   + sqlite_groups(
                       "nodes_address_balancers", "nodebalancer_nodes", "v4, account_id, nodebalancer_id",
                       "OLD.v4 IS NOT NEW.v4 OR OLD.account_id IS NOT NEW.account_id OR OLD.nodebalancer_id IS NOT NEW.nodebalancer_id",
                       lambda rec, sign: group_side("address_balancers", "nodes", node_keys(rec), sign, node_extra(rec)))
                   + """CREATE TRIGGER nodebalancers_address_label AFTER UPDATE OF label ON nodebalancers
WHEN OLD.label IS NOT NEW.label BEGIN
    UPDATE address_balancers SET label = NEW.label WHERE nodebalancer_id = NEW.id;
END;
""")
NODES_50_POSTGRES = pg_groups(
    "nodes_address_balancers", "nodebalancer_nodes",
    "o.v4 <> n.v4 OR o.account_id <> n.account_id OR o.nodebalancer_id <> n.nodebalancer_id",
    lambda src, sign: pg_group_side("address_balancers", "nodes", node_keys("r"), src, sign, node_extra("r")),
    replace=True) + """CREATE FUNCTION nubis_nodebalancers_address_label() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE address_balancers x SET label = n.label FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE o.label IS DISTINCT FROM n.label AND x.nodebalancer_id = n.id;
    RETURN NULL;
END
$fn$;
CREATE TRIGGER nodebalancers_address_label AFTER UPDATE ON nodebalancers
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_nodebalancers_address_label();
"""


# Added by 0052: the orders of the lists that still skipped to a deep page. The sign-ins of an
# account and of a user by time, address and username; OAuth clients by their id (a text, apart
# from the `seq` the list is kept in); the VPC addresses and IPv6 ranges by instance, VPC and
# subnet; the transfers by creation. Each list's condition is the one its kept counts and blocks count by (0036, 0043).
SIGNED_IN = ("{r}.status = 'successful' AND {r}.account_id IS NOT NULL AND {r}.user_id IS NOT NULL", "status", "successful")
LOGIN_FIELDS = [("datetime", "datetime", "text"), ("ip", "ip", "text"), ("username", "username", "text")]
VPC_ADDRESS_FIELDS = [("instance_id", "instance_id", "int"), ("vpc_id", "vpc_id", "int"), ("subnet_id", "subnet_id", "int")]
FENCES_52 = [
    ("logins", "account_logins", "account_id", SIGNED_IN, "id", LOGIN_FIELDS),
    ("logins", "user_logins", "user_id", SIGNED_IN, "id", LOGIN_FIELDS),
    ("oauth_clients", "oauth_clients", "account_id", None, "seq", [("id", "id", "text")]),
    ("instance_interfaces", "vpc_interfaces", "account_id", ("{r}.purpose = 'vpc'", "purpose", "vpc"), "id",
     VPC_ADDRESS_FIELDS),
    ("instance_interfaces", "vpc_ipv6_interfaces", "account_id", VPC_IPV6[4], "id", VPC_ADDRESS_FIELDS),
    # A transfer is in the list of the account that made it and of the one that accepted it: one
    # kind counted from both columns, each with its trigger set; the range's rows are read from
    # both (`scope_cols`). The second's rows already there are counted in shard 1.
    ("service_transfers", "service_transfers", "account_id", None, "id", [("created", "created", "text")],
     {"name": "service_transfers_sent", "scope_cols": "account_id,receiver_account_id"}),
    ("service_transfers", "service_transfers", "receiver_account_id", None, "id", [("created", "created", "text")],
     {"name": "service_transfers_received", "kinds": False, "shard": 1}),
]
INDEXES_52 = [
    ("logins_user_ip", "logins", "user_id, ip, id"),
    ("logins_user_username", "logins", "user_id, username, id"),
    ("oauth_clients_account_id_order", "oauth_clients", "account_id, id, seq"),
    ("instance_interfaces_vpc_account_instance", "instance_interfaces", "account_id, instance_id, id", "purpose = 'vpc'"),
    ("instance_interfaces_vpc_account_vpc", "instance_interfaces", "account_id, vpc_id, id", "purpose = 'vpc'"),
    ("instance_interfaces_vpc_account_subnet", "instance_interfaces", "account_id, subnet_id, id", "purpose = 'vpc'"),
]
HEAD_52 = """-- Deep pages in more orders (docs/decisions.md, "Deep pages in a field's order"): sign-ins by
-- time, address and username, OAuth clients by id, VPC addresses and IPv6 ranges by instance,
-- VPC and subnet, transfers by creation, with an index for each order. Generated by scripts/gen-order-fences.py.
"""


# Added by 0049: an account's VLANs as rows, one per region and label its VLAN interfaces carry
# (docs/decisions.md, "VLANs"), with an id in the order they came into being, kept counts and
# blocks, and fences for the orders by label and region.
VLANS = [("vlans", "vlans", "account_id", True)]
FENCES_49 = [("vlans", "vlans", "account_id", None, "id", [("label", "label", "text"), ("region", "region", "text")])]
# The order by region reads the unique index (account_id, region, label): an account has at most
# ten VLANs in a region, so a page sorts at most ten rows of a region by id. An index on
# (account_id, region, id) would let PostgreSQL, before it has statistics of the table, look a
# VLAN up by it and filter the region's rows by label.
INDEXES_49 = [("vlans_account_label", "vlans", "account_id, label, id")]
HEAD_49 = """-- An account's VLANs as rows (docs/decisions.md, "VLANs"): one per account, region and label
-- that VLAN interfaces carry, made with the first and deleted with the last by triggers on the
-- interfaces, with kept counts, blocks and fences so that a page of them is located like any
-- list's. Generated by scripts/gen-order-fences.py.
"""
VLAN_TABLE = """CREATE TABLE vlans (
    id {id},
    account_id BIGINT NOT NULL,
    region TEXT NOT NULL,
    label TEXT NOT NULL,
    created TEXT NOT NULL,
    interfaces BIGINT NOT NULL,
    UNIQUE (account_id, region, label)
);
INSERT INTO vlans (account_id, region, label, created, interfaces)
SELECT account_id, region, label, MIN(created), COUNT(*) FROM instance_interfaces
WHERE purpose = 'vlan' AND label IS NOT NULL
GROUP BY account_id, region, label ORDER BY MIN(created), region, label;
"""
VLAN_MEMBER = "{r}.purpose = 'vlan' AND {r}.label IS NOT NULL"


def vlan_keys(rec):
    return [(c, f"{rec}.{c}") for c in ("account_id", "region", "label")]


VLANS_49_SQLITE = VLAN_TABLE.format(id="INTEGER PRIMARY KEY AUTOINCREMENT") + sqlite_groups(
    "interfaces_vlans", "instance_interfaces", "account_id, region, purpose, label",
    " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in ("account_id", "region", "purpose", "label")),
    lambda rec, sign: group_side("vlans", "interfaces", vlan_keys(rec), sign, [("created", f"{rec}.created")]),
    VLAN_MEMBER)
VLANS_49_POSTGRES = VLAN_TABLE.format(id="BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY") + pg_groups(
    "interfaces_vlans", "instance_interfaces",
    " OR ".join(f"o.{c} IS DISTINCT FROM n.{c}" for c in ("account_id", "region", "purpose", "label")),
    lambda src, sign: pg_group_side("vlans", "interfaces", vlan_keys("r"), src, sign, [("created", "MIN(r.created)")]),
    VLAN_MEMBER)


# Added by 0053: the PostgreSQL trigger functions of every list above (counts and blocks, fences,
# groups) again, with an update's rows counted by their sign (SIGNED_UPDATE) instead of paired by
# a join. Their triggers stay. SQLite's triggers run per row and pair nothing.
HEAD_53 = """-- Statement triggers that sum signs (docs/decisions.md): the PostgreSQL functions that keep
-- the lists' counts, blocks, fence counts and groups, with an update's rows before and after
-- counted by their sign in one pass instead of paired by a join of the transition tables.
-- Generated by scripts/gen-order-fences.py.
"""
LABEL_53 = """CREATE OR REPLACE FUNCTION nubis_nodebalancers_address_label() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE address_balancers x SET label = n.label FROM new_rows n
    WHERE x.nodebalancer_id = n.id AND x.label IS DISTINCT FROM n.label;
    RETURN NULL;
END
$fn$;"""


def transition_sums():
    mod = _module()
    later = [MAINTENANCE, PENDING, VPC_IPV6] + SERVICE_FIREWALLS + ADDRESS_BALANCERS + VLANS
    out = [HEAD_53]
    out.extend(pg_list_rows(_lists() + [mod.norm(e) for e in later], signed=True, triggers=False))
    for fences, suffix in ((FENCES, ""), (FENCES_40, ""), (FENCES_41, ""), (FENCES_47, "_nullable"),
                           (FENCES_49, ""), (FENCES_50, ""), (FENCES_52, "_more")):
        out.extend(pg_fences(fences, suffix, signed=True, triggers=False))
    out.append(pg_groups_net("nodes_address_balancers", lambda src, sign: pg_group_net(
        "address_balancers", "nodes", node_keys("r"), src, sign, node_extra("r"))))
    out.append(pg_groups_net("interfaces_vlans", lambda src, sign: pg_group_net(
        "vlans", "interfaces", vlan_keys("r"), src, sign, [("created", "MIN(r.created) FILTER (WHERE r.sgn > 0)")]),
        VLAN_MEMBER))
    out.append(LABEL_53)
    return "\n".join(out) + "\n"


# Added by 0054: the addresses of one VPC (/v4/vpcs/{vpc_id}/ips and /ipv6s) as lists of their
# own, scoped by the VPC: kept counts, blocks and fences per VPC (the account's lists above
# counted and skipped a VPC's rows among the account's), with an index for each order and
# filter within a VPC. Their PostgreSQL triggers sum an update's rows by sign (0053).
VPC_MEMBER = ("{r}.purpose = 'vpc'", "purpose", "vpc")
VPC_OWN = [("instance_interfaces", "vpc_interfaces_of_vpc", "vpc_id", True, VPC_MEMBER),
           ("instance_interfaces", "vpc_ipv6_interfaces_of_vpc", "vpc_id", True, VPC_IPV6[4])]
FENCES_54 = [("instance_interfaces", "vpc_interfaces_of_vpc", "vpc_id", VPC_MEMBER, "id", VPC_ADDRESS_FIELDS),
             ("instance_interfaces", "vpc_ipv6_interfaces_of_vpc", "vpc_id", VPC_IPV6[4], "id", VPC_ADDRESS_FIELDS)]
INDEXES_54 = [
    ("instance_interfaces_vpc_vpc", "instance_interfaces", "vpc_id, id", "purpose = 'vpc'"),
    ("instance_interfaces_vpc_vpc_instance", "instance_interfaces", "vpc_id, instance_id, id", "purpose = 'vpc'"),
    ("instance_interfaces_vpc_vpc_subnet", "instance_interfaces", "vpc_id, subnet_id, id", "purpose = 'vpc'"),
]
HEAD_54 = """-- The addresses of one VPC as lists of their own (docs/decisions.md, "Lists of one parent"):
-- kept counts, blocks and fences per VPC, with an index for each order and filter within a VPC.
-- Generated by scripts/gen-order-fences.py.
"""


# Added by 0057: the groups' rows (an instance's balancers, VLANs) moved through their key alone.
# 0053's statements joined a removed group to its row by its columns; the planner weighs the
# indexes that share the key's first columns by the table's statistics, which a statement that
# grows the table by thousands of rows leaves stale, and took an order's index on (account,
# region, id) for the key (account, region, label): each removed VLAN then read every VLAN of its
# region (an instance with 8,000 VLAN interfaces took over 10 s to delete). ON CONFLICT finds a
# row through the key's own unique index whatever the statistics say, and emptied rows are found
# through an index holding only them.
def pg_group_keyed(table, count, keys, src, sign, extra=()):
    """PostgreSQL (0057 on): the statements that move the members of `src` (as `pg_group_net`)
    into and out of their groups' rows by the groups' key alone: every group's sum is added to
    its row through the key's unique index (a row made if it was not there, with `extra`
    (column, aggregate) as its values, which a group that only loses rows never uses), then the
    rows left with none are deleted through `{table}_emptied`, the index of the rows with none."""
    cols = ", ".join(c for c, _ in keys)
    by = ", ".join(str(i + 1) for i in range(len(keys)))
    names = ", ".join([c for c, _ in keys + list(extra)] + [count])
    vals = ", ".join([e for _, e in keys + list(extra)] + ["SUM(r.sgn)"])
    out = [f"        INSERT INTO {table} ({names})\n"
           f"        SELECT {vals} FROM {src} GROUP BY {by} HAVING SUM(r.sgn) {'>' if sign > 0 else '<>'} 0\n"
           f"        ON CONFLICT ({cols}) DO UPDATE SET {count} = {table}.{count} + excluded.{count};"]
    if sign <= 0:
        out.append(f"        DELETE FROM {table} WHERE {count} <= 0;")
    return "\n".join(out)


HEAD_57 = """-- The rows of groups (an instance's balancers, VLANs) found through their key alone
-- (docs/decisions.md, "Rows of groups found by their key"): the PostgreSQL functions that move
-- members into and out of them add each group's sum through the key's unique index (ON
-- CONFLICT), and delete the rows left empty through an index holding only those.
-- Generated by scripts/gen-order-fences.py.
"""


def keyed_groups():
    balancer = [(c, f"COALESCE((SELECT b.{c} FROM nodebalancers b WHERE b.id = r.nodebalancer_id), '')")
                for c in ("label", "region")]
    out = [HEAD_57,
           "CREATE INDEX IF NOT EXISTS address_balancers_emptied ON address_balancers(nodes) WHERE nodes <= 0;",
           "CREATE INDEX IF NOT EXISTS vlans_emptied ON vlans(interfaces) WHERE interfaces <= 0;"]
    out.append(pg_groups_net("nodes_address_balancers", lambda src, sign: pg_group_keyed(
        "address_balancers", "nodes", node_keys("r"), src, sign, balancer)))
    created = "COALESCE(MIN(r.created) FILTER (WHERE r.sgn > 0), MIN(r.created))"
    out.append(pg_groups_net("interfaces_vlans", lambda src, sign: pg_group_keyed(
        "vlans", "interfaces", vlan_keys("r"), src, sign, [("created", created)]), VLAN_MEMBER))
    return "\n".join(out) + "\n"


# Added by 0061: the account's address list (/v4/networking/ips) in the order of its address,
# region or instance. Its public addresses get fences for each order and an index for each
# (partial: only public addresses are listed); its IPv6 ranges, at most one per region, are read
# whole and merged with a window of addresses (Store::ips_page).
PUBLIC = ("{r}.public", "public", "true")
FENCES_61 = [("ip_addresses", "public_ips", "account_id", PUBLIC, "id",
              [("address", "address", "text"), ("region", "region", "text"), ("instance_id", "instance_id", "int")])]
# Each index also holds `public`: SQLite reads a partial index's own condition from its columns,
# so only then does the index alone answer a read of the list's keys.
INDEXES_61 = [
    ("ip_addresses_public_address", "ip_addresses", "account_id, address, id, public", "public"),
    ("ip_addresses_public_region", "ip_addresses", "account_id, region, id, public", "public"),
    ("ip_addresses_public_instance", "ip_addresses", "account_id, instance_id, id, public", "public"),
]
HEAD_61 = """-- The account's address list in the order of its address, region or instance (docs/decisions.md,
-- "The address list's orders"): fences and a partial index for each order of its public
-- addresses. Generated by scripts/gen-order-fences.py.
"""


# Added by 0062: the VPC address lists filtered and ordered by `active` (the interface's instance
# is powered on with the interface's profile). The interfaces keep it as a column (0 or 1), set
# by triggers in the write transactions of the instance and of the interface (ACTIVE_62_*), with
# fences and an index for each of the four lists.
VPC_ACTIVE = [("active", "active", "int")]
FENCES_62 = [("instance_interfaces", "vpc_interfaces", "account_id", VPC_MEMBER, "id", VPC_ACTIVE),
             ("instance_interfaces", "vpc_ipv6_interfaces", "account_id", VPC_IPV6[4], "id", VPC_ACTIVE),
             ("instance_interfaces", "vpc_interfaces_of_vpc", "vpc_id", VPC_MEMBER, "id", VPC_ACTIVE),
             ("instance_interfaces", "vpc_ipv6_interfaces_of_vpc", "vpc_id", VPC_IPV6[4], "id", VPC_ACTIVE)]
INDEXES_62 = [
    ("instance_interfaces_vpc_account_active", "instance_interfaces", "account_id, active, id", "purpose = 'vpc'"),
    ("instance_interfaces_vpc_vpc_active", "instance_interfaces", "vpc_id, active, id", "purpose = 'vpc'"),
    ("instance_interfaces_v6_account_active", "instance_interfaces", "account_id, active, id, vpc_ipv6_range",
     "purpose = 'vpc' AND vpc_ipv6_range IS NOT NULL"),
    ("instance_interfaces_v6_vpc_active", "instance_interfaces", "vpc_id, active, id, vpc_ipv6_range",
     "purpose = 'vpc' AND vpc_ipv6_range IS NOT NULL"),
]
# Whether an interface (`f`) of an instance (`i`) is active: the one place the rule is written.
ACTIVE = ("CASE WHEN {i}.status IN ('booting', 'running', 'shutting_down', 'rebooting') "
          "AND ({f}.config_id IS NULL OR {f}.config_id = {i}.boot_config_id) THEN 1 ELSE 0 END")


def active_of(f):
    """An interface's `active` from its instance's row (`f`: the interface's alias)."""
    return f"COALESCE((SELECT {ACTIVE.format(i='i', f=f)} FROM instances i WHERE i.id = {f}.instance_id), 0)"


ACTIVE_62_SQLITE = f"""ALTER TABLE instance_interfaces ADD COLUMN active INTEGER NOT NULL DEFAULT 0;
UPDATE instance_interfaces SET active = {active_of('instance_interfaces')};
CREATE TRIGGER instance_interfaces_active_insert AFTER INSERT ON instance_interfaces BEGIN
    UPDATE instance_interfaces SET active = {active_of('NEW')} WHERE id = NEW.id AND active <> {active_of('NEW')};
END;
CREATE TRIGGER instance_interfaces_active_update AFTER UPDATE OF instance_id, config_id ON instance_interfaces BEGIN
    UPDATE instance_interfaces SET active = {active_of('NEW')} WHERE id = NEW.id AND active <> {active_of('NEW')};
END;
CREATE TRIGGER instances_interfaces_active AFTER UPDATE OF status, boot_config_id ON instances BEGIN
    UPDATE instance_interfaces SET active = {ACTIVE.format(i='NEW', f='instance_interfaces')}
    WHERE instance_id = NEW.id AND active <> {ACTIVE.format(i='NEW', f='instance_interfaces')};
END;
"""
ACTIVE_62_POSTGRES = f"""ALTER TABLE instance_interfaces ADD COLUMN active BIGINT NOT NULL DEFAULT 0;
UPDATE instance_interfaces f SET active = {active_of('f')} WHERE f.active <> {active_of('f')};
CREATE FUNCTION nubis_interface_active() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    NEW.active := {active_of('NEW')};
    RETURN NEW;
END
$fn$;
CREATE TRIGGER instance_interfaces_active BEFORE INSERT OR UPDATE OF instance_id, config_id ON instance_interfaces
  FOR EACH ROW EXECUTE FUNCTION nubis_interface_active();
CREATE FUNCTION nubis_instance_interfaces_active() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE instance_interfaces f SET active = {ACTIVE.format(i='NEW', f='f')}
    WHERE f.instance_id = NEW.id AND f.active <> {ACTIVE.format(i='NEW', f='f')};
    RETURN NULL;
END
$fn$;
CREATE TRIGGER instances_interfaces_active AFTER UPDATE OF status, boot_config_id ON instances
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.boot_config_id IS DISTINCT FROM NEW.boot_config_id)
  EXECUTE FUNCTION nubis_instance_interfaces_active();
"""
HEAD_62 = """-- The VPC address lists filtered and ordered by `active` (docs/decisions.md, "Whether a VPC
-- interface is active, kept on the interface"): the interfaces keep it, set by triggers in the
-- write transactions of instances and interfaces, with fences and an index for each list.
-- Generated by scripts/gen-order-fences.py.
"""


# Added by 0063: the VPC address lists ordered by region and by configuration profile. The region
# is the interface's own column; the profile may be NULL (a Linode interface has none) and is
# ordered as 0, like 0047's nullable orders. Each of the four lists gets fences for both orders,
# and an index for each order that no earlier migration's index serves (0059 indexed the region
# of the IPv4 lists). An index on the profile's expression also holds the column itself: only
# then does it alone answer a read of the keys (both engines count the expression's column as
# read).
VPC_PLACE = [("region", "region", "text"), ("config_id", "config_id", "int", "0")]
FENCES_63 = [(table, kind, scope, cond, "id", VPC_PLACE) for table, kind, scope, cond, _, _ in FENCES_62]
V6 = "purpose = 'vpc' AND vpc_ipv6_range IS NOT NULL"
INDEXES_63 = [
    ("instance_interfaces_vpc_account_config", "instance_interfaces", "account_id, COALESCE(config_id, 0), id, config_id",
     "purpose = 'vpc'"),
    ("instance_interfaces_vpc_vpc_config", "instance_interfaces", "vpc_id, COALESCE(config_id, 0), id, config_id",
     "purpose = 'vpc'"),
    ("instance_interfaces_v6_account_region", "instance_interfaces", "account_id, region, id, vpc_ipv6_range", V6),
    ("instance_interfaces_v6_vpc_region", "instance_interfaces", "vpc_id, region, id, vpc_ipv6_range", V6),
    ("instance_interfaces_v6_account_config", "instance_interfaces",
     "account_id, COALESCE(config_id, 0), id, vpc_ipv6_range, config_id", V6),
    ("instance_interfaces_v6_vpc_config", "instance_interfaces", "vpc_id, COALESCE(config_id, 0), id, vpc_ipv6_range, config_id", V6),
]
HEAD_63 = """-- The VPC address lists ordered by region and by configuration profile (docs/decisions.md,
-- "The VPC address lists' orders by region and profile"): fences for both orders of each of the
-- four lists, and the indexes that serve them. Generated by scripts/gen-order-fences.py.
"""


# Added by 0064: the fields that lists still filtered and ordered by only while short. An
# instance's disks (size, filesystem, status, creation, change) and configuration profiles
# (kernel, creation, change), child accounts (first and last name), an account's users (type)
# and OAuth clients (redirect URI, status): fences for each order, and an index on (scope,
# field, id) for each, which serves the field's filter too.
FENCES_64 = [
    ("instance_disks", "instance_disks", "instance_id", None, "id",
     [("size", "size", "int"), ("filesystem", "filesystem", "text"), ("status", "status", "text"),
      ("created", "created", "text"), ("updated", "updated", "text")]),
    ("instance_configs", "instance_configs", "instance_id", None, "id",
     [("kernel", "kernel", "text"), ("created", "created", "text"), ("updated", "updated", "text")]),
    ("accounts", "child_accounts", "parent_id", None, "id",
     [("first_name", "first_name", "text"), ("last_name", "last_name", "text")]),
    ("users", "users", "account_id", None, "id", [("user_type", "user_type", "text")]),
    ("oauth_clients", "oauth_clients", "account_id", None, "seq",
     [("redirect_uri", "redirect_uri", "text"), ("status", "status", "text")]),
]
INDEXES_64 = [(f"{table}_{scope.split('_')[0]}_{col}_order", table, f"{scope}, {col}, {id_col}")
              for table, _, scope, _, id_col, fields in FENCES_64 for _, col, _ in fields]
HEAD_64 = """-- Deep pages of more lists in more of their fields' orders (docs/decisions.md, "More fields
-- served past the budget"): disks, configuration profiles, child accounts, users and OAuth
-- clients, with fences and an index on (scope, field, id) for each. Generated by
-- scripts/gen-order-fences.py.
"""

# Added by 0065: the boolean fields of two lists (a user's `restricted`, an OAuth client's
# `public`), keyed 0 or 1, and the transfers' other columns (change, expiry, token), counted from
# both of the list's columns like their creation (0052). Each order gets an index on (scope,
# field, id); one on a boolean's expression also holds the column.
TRANSFER_FIELDS = [("updated", "updated", "text"), ("expiry", "expiry", "text"), ("token", "token", "text")]
FENCES_65 = [
    ("users", "users", "account_id", None, "id", [("restricted", "restricted", "bool")]),
    ("oauth_clients", "oauth_clients", "account_id", None, "seq", [("public", "public", "bool")]),
    ("service_transfers", "service_transfers", "account_id", None, "id", TRANSFER_FIELDS,
     {"name": "service_transfers_sent", "scope_cols": "account_id,receiver_account_id"}),
    ("service_transfers", "service_transfers", "receiver_account_id", None, "id", TRANSFER_FIELDS,
     {"name": "service_transfers_received", "kinds": False, "shard": 1}),
]
INDEXES_65 = [
    ("users_account_restricted_order", "users", f"account_id, {key_expr(None, 'restricted', None, 'bool')}, id, restricted"),
    ("oauth_clients_account_public_order", "oauth_clients", f"account_id, {key_expr(None, 'public', None, 'bool')}, seq, public"),
] + [(f"service_transfers_{side}_{col}", "service_transfers", f"{scope}, {col}, id")
     for side, scope in (("sent", "account_id"), ("received", "receiver_account_id"))
     for _, col, _ in TRANSFER_FIELDS]
HEAD_65 = """-- Deep pages by the boolean fields of users and OAuth clients, and by the transfers'
-- change, expiry and token (docs/decisions.md, "Booleans and the transfers' columns served past
-- the budget"): fences and an index for each order. Generated by scripts/gen-order-fences.py.
"""

# Added by 0066: a transfer's status, compared for equality in either half of the list (made,
# accepted). The list shows a pending transfer past its expiry as stale before the sweep marks it,
# so a status is read as the stored status and a range of expiry: one index on (scope, status,
# expiry, id) for each of the list's columns. No order by status is served (no fences).
INDEXES_66 = [(f"service_transfers_{side}_status", "service_transfers", f"{scope}, status, expiry, id")
              for side, scope in (("sent", "account_id"), ("received", "receiver_account_id"))]
HEAD_66 = """-- A transfer's status in a filter past the budget (docs/decisions.md, "A transfer's status and
-- is_sender served past the budget"): an index on (scope, status, expiry, id) for each of the
-- list's columns. Generated by scripts/gen-order-fences.py.
"""

# Added by 0068: a sign-in's `restricted`, in the lists of the account and of the user, keyed 0
# or 1 like the booleans of 0065. Each list gets an index on (scope, field, id) with the
# condition its other indexes have (0056: a listed sign-in succeeded and has an account and a
# user), which a read uses only when it names every term.
# The account's list writes "has a user" as `COALESCE(user_id, 0) > 0`, and its indexes (0056's
# three and the new one) are made again with that condition: `user_id IS NOT NULL` is also a
# range of every index led by the user, and SQLite, whose statistics price a range at a quarter
# of the rows, counted the account's sign-ins filtered by a username through one of those (every
# sign-in of the account) instead of the account's index on the username.
LOGIN_RESTRICTED = [("restricted", "restricted", "bool")]
SIGNED_IN_ACCOUNT = ("{r}.status = 'successful' AND {r}.account_id IS NOT NULL AND COALESCE({r}.user_id, 0) > 0",
                     "status", "successful")
FENCES_68 = [
    ("logins", "account_logins", "account_id", SIGNED_IN_ACCOUNT, "id", LOGIN_RESTRICTED),
    ("logins", "user_logins", "user_id", SIGNED_IN, "id", LOGIN_RESTRICTED),
]
INDEXES_68 = [
    (f"logins_ok_account_{field}", "logins", f"account_id, {expr}, id, user_id, status{more}",
     SIGNED_IN_ACCOUNT[0].format(r="logins").replace("logins.", ""))
    for field, expr, more in (("datetime", "datetime", ""), ("ip", "ip", ""), ("username", "username", ""),
                              ("restricted", key_expr(None, "restricted", None, "bool"), ", restricted"))
] + [
    ("logins_ok_user_restricted", "logins",
     f"user_id, {key_expr(None, 'restricted', None, 'bool')}, id, account_id, status, restricted",
     SIGNED_IN[0].format(r="logins").replace("logins.", "")),
]
ACCOUNT_LOGINS_68 = ("DROP INDEX IF EXISTS logins_ok_account_datetime;\n"
                     "DROP INDEX IF EXISTS logins_ok_account_ip;\n"
                     "DROP INDEX IF EXISTS logins_ok_account_username;\n"
                     f"UPDATE order_fence_kinds SET cond = '{SIGNED_IN_ACCOUNT[0].format(r='logins').replace(chr(39), chr(39) * 2)}' "
                     "WHERE kind LIKE 'account_logins.%';\n")
HEAD_68 = """-- A sign-in's restricted in a filter and an order past the budget (docs/decisions.md, "A
-- sign-in's restricted served past the budget"): fences and an index for each of the two lists;
-- the account's list's indexes made again with its condition on the user written so that no
-- index led by the user serves it. Generated by scripts/gen-order-fences.py.
"""

# Added by 0071: a balancer configuration's protocol, algorithm, stickiness and check, and a
# node's status, mode and weight, in filters and orders past the budget: fences and an index on
# (scope, field, id) for each, as 0064.
FENCES_71 = [
    ("nodebalancer_configs", "nodebalancer_configs", "nodebalancer_id", None, "id",
     [("protocol", "protocol", "text"), ("algorithm", "algorithm", "text"), ("stickiness", "stickiness", "text"),
      ("check", "check_type", "text")]),
    ("nodebalancer_nodes", "nodebalancer_nodes", "config_id", None, "id",
     [("status", "status", "text"), ("mode", "mode", "text"), ("weight", "weight", "int")]),
]
INDEXES_71 = [(f"{table}_{scope.split('_')[0]}_{col}_order", table, f"{scope}, {col}, {id_col}")
              for table, _, scope, _, id_col, fields in FENCES_71 for _, col, _ in fields]
HEAD_71 = """-- Deep pages of a balancer's configurations by protocol, algorithm, stickiness and check, and
-- of a configuration's nodes by status, mode and weight (docs/decisions.md, "A balancer's
-- configurations and nodes served past the budget"): fences and an index on (scope, field, id)
-- for each. Generated by scripts/gen-order-fences.py.
"""

# Added by 0072: each half of the transfer list kept apart (the transfers an account made, and
# those it accepted), beside the list's `service_transfers` that counts both: the order by
# `is_sender` is the accepted half by id, then the made half by id.
# The triggers are named apart from 0038's, which keep the whole list's count.
TRANSFER_HALVES = [("service_transfers", "service_transfers_sent", "account_id", True, None,
                    {"name": "transfer_half_sent"}),
                   ("service_transfers", "service_transfers_received", "receiver_account_id", True, None,
                    {"name": "transfer_half_received"})]
HEAD_72 = """-- Each half of the transfer list counted and blocked apart (docs/decisions.md, "The transfer
-- list ordered by is_sender"): the transfers an account made, and those it accepted. Generated
-- by scripts/gen-order-fences.py.
"""

# Added by 0079: the fields of four lists that were still filtered and ordered only while short:
# a VPC's description, a subnet's IPv4 range and change, a personal token's expiry (NULL for
# one that never expires, keyed as the empty string like 0047's) and a firewall device's creation
# and change. Fences for each order, and an index on (scope, field, id) for each, which serves
# the field's filter too (a token's with the list's condition, as 0056's). A token's expiry has
# two: its order's on the expression the fences key (holding the column too, so that a page's
# keys are read from it alone, as 0065's booleans), and its filter's on the column, which a
# comparison names (NULL meets none).
FENCES_79 = [
    ("vpcs", "vpcs", "account_id", None, "id", [("description", "description", "text")]),
    ("vpc_subnets", "vpc_subnets", "vpc_id", None, "id", [("ipv4", "ipv4", "text"), ("updated", "updated", "text")]),
    ("tokens", "personal_tokens", "user_id", ("{r}.kind = 'pat'", "kind", "pat"), "id",
     [("expiry", "expiry", "text", "''")]),
    ("firewall_devices", "firewall_devices", "firewall_id", None, "id",
     [("created", "created", "text"), ("updated", "updated", "text")]),
]
INDEXES_79 = [
    ("vpcs_account_description_order", "vpcs", "account_id, description, id"),
    ("vpc_subnets_vpc_ipv4_order", "vpc_subnets", "vpc_id, ipv4, id"),
    ("vpc_subnets_vpc_updated_order", "vpc_subnets", "vpc_id, updated, id"),
    ("tokens_pat_expiry_order", "tokens", "user_id, COALESCE(expiry, ''), id, expiry", "kind = 'pat'"),
    ("tokens_pat_expiry", "tokens", "user_id, expiry, id", "kind = 'pat'"),
    ("firewall_devices_firewall_created_order", "firewall_devices", "firewall_id, created, id"),
    ("firewall_devices_firewall_updated_order", "firewall_devices", "firewall_id, updated, id"),
]
HEAD_79 = """-- Deep pages of four lists by more of their fields, and those fields in filters past the budget
-- (docs/decisions.md, "The last plain fields served past the budget"): a VPC's description, a
-- subnet's IPv4 range and change, a personal token's expiry and a firewall device's creation and
-- change, with fences and an index on (scope, field, id) for each. Generated by
-- scripts/gen-order-fences.py.
"""

# Added by 0080: the firewalls of a service in their label, creation and change orders. The
# firewall's fields live on `firewalls`, one row for all its services, while the list is scoped
# by the service's devices: each device keeps a copy of its firewall's three fields
# (`firewall_label`, `firewall_created`, `firewall_updated`), written when the device is made
# and when the firewall's label or change time moves, by triggers in the same transaction (a
# firewall's status change already rewrites each of its devices). Fences for each order and an
# index on (service, copy, firewall id) for each, as 0079's.
COPIED_80 = [("label", "firewall_label"), ("created", "firewall_created"), ("updated", "firewall_updated")]
FENCES_80 = [("firewall_devices", kind, scope, None, "firewall_id", [(p, c, "text") for p, c in COPIED_80])
             for kind, scope in (("instance_firewalls", "instance_id"), ("nodebalancer_firewalls", "nodebalancer_id"))]
INDEXES_80 = [(f"firewall_devices_{scope.split('_')[0]}_{col}_order", "firewall_devices", f"{scope}, {col}, firewall_id")
              for _, _, scope, _, _, _ in FENCES_80 for _, col in COPIED_80]
HEAD_80 = """-- The firewalls of an instance and of a balancer by label, creation and change past the budget
-- (docs/decisions.md, "A service's firewalls in their fields' orders"): each device keeps a
-- copy of its firewall's label, creation and change times, kept by triggers in the write
-- transaction, with fences and an index on (service, copy, firewall id) for each order.
-- Generated by scripts/gen-order-fences.py.
"""
COPY_80_COLUMNS = "".join(f"ALTER TABLE firewall_devices ADD COLUMN {c} TEXT NOT NULL DEFAULT '';\n"
                          for _, c in COPIED_80)
COPY_80_SQLITE = COPY_80_COLUMNS + """UPDATE firewall_devices SET (firewall_label, firewall_created, firewall_updated) =
    (SELECT f.label, f.created, f.updated FROM firewalls f WHERE f.id = firewall_devices.firewall_id);
CREATE TRIGGER firewall_devices_copy_insert AFTER INSERT ON firewall_devices BEGIN
    UPDATE firewall_devices SET (firewall_label, firewall_created, firewall_updated) =
        (SELECT f.label, f.created, f.updated FROM firewalls f WHERE f.id = NEW.firewall_id)
    WHERE id = NEW.id;
END;
CREATE TRIGGER firewalls_device_copy_update AFTER UPDATE OF label, updated ON firewalls
WHEN OLD.label IS NOT NEW.label OR OLD.updated IS NOT NEW.updated BEGIN
    UPDATE firewall_devices SET firewall_label = NEW.label, firewall_updated = NEW.updated WHERE firewall_id = NEW.id;
END;
"""
COPY_80_POSTGRES = COPY_80_COLUMNS + """UPDATE firewall_devices d SET firewall_label = f.label, firewall_created = f.created, firewall_updated = f.updated
FROM firewalls f WHERE f.id = d.firewall_id;
CREATE FUNCTION nubis_firewall_devices_copy() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    SELECT f.label, f.created, f.updated INTO NEW.firewall_label, NEW.firewall_created, NEW.firewall_updated
    FROM firewalls f WHERE f.id = NEW.firewall_id;
    RETURN NEW;
END
$fn$;
CREATE TRIGGER firewall_devices_copy_insert BEFORE INSERT ON firewall_devices
  FOR EACH ROW EXECUTE FUNCTION nubis_firewall_devices_copy();
CREATE FUNCTION nubis_firewalls_device_copy() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE firewall_devices SET firewall_label = NEW.label, firewall_updated = NEW.updated WHERE firewall_id = NEW.id;
    RETURN NULL;
END
$fn$;
CREATE TRIGGER firewalls_device_copy_update AFTER UPDATE OF label, updated ON firewalls FOR EACH ROW
  WHEN (OLD.label IS DISTINCT FROM NEW.label OR OLD.updated IS DISTINCT FROM NEW.updated)
  EXECUTE FUNCTION nubis_firewalls_device_copy();
"""

# Added by 0081: a reader's marks on events (`event_reads`), counted and blocked per user by
# event id, so that the event list ordered by `read` finds a deep page in either run: the events
# read are the marks in id order, those not read are the account's events less the marks, block
# by block (the two kinds share their blocks of event ids).
EVENT_READS = [("event_reads", "event_reads", "user_id", True, None, {"id": "event_id"})]
HEAD_81 = """-- A reader's marks on events counted and blocked per user by event id (docs/decisions.md, "The
-- event list ordered by read"), like a list's rows, so that a deep page of the events in the
-- order of `read` is located in the marks or in the events less the marks. Generated by
-- scripts/gen-order-fences.py.
"""

base = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "crates/nubis-store/migrations")
open(f"{base}/sqlite/0039_order_fences.sql", "w").write(sqlite())
open(f"{base}/postgres/0039_order_fences.sql", "w").write(postgres())
for engine in ("sqlite", "postgres"):
    later = {
        "0040_maintenance_list": (HEAD_40, [MAINTENANCE], FENCES_40, INDEXES_40, (CLEANUP_40_SQLITE, CLEANUP_40_POSTGRES)),
        "0041_pending_maintenance": (HEAD_41, [PENDING], FENCES_41, (), ("", "")),
        "0043_vpc_ipv6_list": (HEAD_43, [VPC_IPV6], (), (), ("", "")),
        "0044_service_firewalls": (HEAD_44, SERVICE_FIREWALLS, (), INDEXES_44, ("", "")),
        "0047_nullable_orders": (HEAD_47, [], FENCES_47, INDEXES_47, ("", ""), "_nullable"),
        "0048_address_balancers": (HEAD_48, ADDRESS_BALANCERS, (), (), (NODES_48_SQLITE, NODES_48_POSTGRES)),
        "0049_vlans": (HEAD_49, VLANS, FENCES_49, INDEXES_49, (VLANS_49_SQLITE, VLANS_49_POSTGRES)),
        "0050_address_balancer_orders": (HEAD_50, [], FENCES_50, INDEXES_50, (NODES_50_SQLITE, NODES_50_POSTGRES)),
        "0052_more_orders": (HEAD_52, [], FENCES_52, INDEXES_52, ("", ""), "_more"),
        "0054_vpc_address_lists": (HEAD_54, VPC_OWN, FENCES_54, INDEXES_54, ("", ""), "", True),
        "0061_address_orders": (HEAD_61, [], FENCES_61, INDEXES_61, ("", ""), "_orders", True),
        "0062_interface_active": (HEAD_62, [], FENCES_62, INDEXES_62, (ACTIVE_62_SQLITE, ACTIVE_62_POSTGRES), "_active",
                                  True),
        "0063_vpc_address_orders": (HEAD_63, [], FENCES_63, INDEXES_63, ("", ""), "_place", True),
        "0064_more_fields": (HEAD_64, [], FENCES_64, INDEXES_64, ("", ""), "_fields", True),
        "0065_booleans_and_transfers": (HEAD_65, [], FENCES_65, INDEXES_65, ("", ""), "_late", True),
        "0066_transfer_status": (HEAD_66, [], [], INDEXES_66, ("", ""), "_status", True),
        "0068_login_restricted": (HEAD_68, [], FENCES_68, INDEXES_68, (ACCOUNT_LOGINS_68, ACCOUNT_LOGINS_68),
                                  "_restricted", True),
        "0071_balancer_fields": (HEAD_71, [], FENCES_71, INDEXES_71, ("", ""), "_balancer", True),
        "0072_transfer_halves": (HEAD_72, TRANSFER_HALVES, (), (), ("", ""), "", True),
        "0079_plain_fields": (HEAD_79, [], FENCES_79, INDEXES_79, ("", ""), "_plain", True),
        "0080_service_firewall_orders": (HEAD_80, [], FENCES_80, INDEXES_80, (COPY_80_SQLITE, COPY_80_POSTGRES),
                                         "_copied", True),
        "0081_event_reads": (HEAD_81, EVENT_READS, (), (), ("", ""), "", True),
    }
    for name, (head, lists, fences, indexes, cleanup, *suffix) in later.items():
        sql = later_migration(engine, head, lists, fences, indexes, cleanup, *suffix)
        open(f"{base}/{engine}/{name}.sql", "w").write(sql)
open(f"{base}/postgres/0053_transition_sums.sql", "w").write(transition_sums())
open(f"{base}/sqlite/0053_transition_sums.sql", "w").write(
    "-- Statement triggers that sum signs (docs/decisions.md): PostgreSQL only. SQLite's triggers run\n"
    "-- per row and pair no transition tables; nothing changes here. Generated by scripts/gen-order-fences.py.\n")
open(f"{base}/postgres/0057_keyed_groups.sql", "w").write(keyed_groups())
open(f"{base}/sqlite/0057_keyed_groups.sql", "w").write(
    "-- The rows of groups found by their key (docs/decisions.md): PostgreSQL only. SQLite's triggers run\n"
    "-- per row and update a group's row by its whole key. Generated by scripts/gen-order-fences.py.\n")
