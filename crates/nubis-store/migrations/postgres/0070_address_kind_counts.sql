-- The public addresses of an account counted, and their id blocks kept, by stored kind
-- (`public_ips:ipv4`, `public_ips:slaac`, `public_ips:link_local` in row_counts and row_blocks,
-- beside the whole list's `public_ips`): the address list filtered by `type` is then counted and
-- a deep page of it located as the whole list is, not by counting and skipping its matches
-- (docs/decisions.md, "An address list filtered or ordered by type reads kept partitions"). Kept once per
-- statement from its transition tables, as every kept count since migration 53.

CREATE FUNCTION nubis_public_ip_kinds_rows() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
        SELECT 'public_ips:' || r.kind, r.account_id, l.level, r.id >> l.shift, pg_backend_pid() % 8, COUNT(*)
        FROM new_rows r CROSS JOIN (VALUES (1, 6), (2, 12), (3, 18)) AS l(level, shift)
        WHERE r.account_id IS NOT NULL AND r.public GROUP BY r.kind, r.account_id, l.level, r.id >> l.shift
        ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = row_blocks.n + excluded.n;
        INSERT INTO row_counts (account_id, kind, shard, n)
        SELECT r.account_id, 'public_ips:' || r.kind, pg_backend_pid() % 16, COUNT(*) FROM new_rows r
        WHERE r.account_id IS NOT NULL AND r.public GROUP BY r.account_id, r.kind
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n;
    END IF;
    IF TG_OP = 'DELETE' THEN
        INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
        SELECT 'public_ips:' || r.kind, r.account_id, l.level, r.id >> l.shift, pg_backend_pid() % 8, -COUNT(*)
        FROM old_rows r CROSS JOIN (VALUES (1, 6), (2, 12), (3, 18)) AS l(level, shift)
        WHERE r.account_id IS NOT NULL AND r.public GROUP BY r.kind, r.account_id, l.level, r.id >> l.shift
        ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = row_blocks.n + excluded.n;
        INSERT INTO row_counts (account_id, kind, shard, n)
        SELECT r.account_id, 'public_ips:' || r.kind, pg_backend_pid() % 16, -COUNT(*) FROM old_rows r
        WHERE r.account_id IS NOT NULL AND r.public GROUP BY r.account_id, r.kind
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
        SELECT 'public_ips:' || r.kind, r.account_id, l.level, r.id >> l.shift, pg_backend_pid() % 8, SUM(r.sgn)
        FROM (SELECT o.*, -1 AS sgn FROM old_rows o UNION ALL SELECT n.*, 1 AS sgn FROM new_rows n) r
        CROSS JOIN (VALUES (1, 6), (2, 12), (3, 18)) AS l(level, shift)
        WHERE r.account_id IS NOT NULL AND r.public GROUP BY r.kind, r.account_id, l.level, r.id >> l.shift
        HAVING SUM(r.sgn) <> 0
        ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = row_blocks.n + excluded.n;
        INSERT INTO row_counts (account_id, kind, shard, n)
        SELECT r.account_id, 'public_ips:' || r.kind, pg_backend_pid() % 16, SUM(r.sgn)
        FROM (SELECT o.*, -1 AS sgn FROM old_rows o UNION ALL SELECT n.*, 1 AS sgn FROM new_rows n) r
        WHERE r.account_id IS NOT NULL AND r.public GROUP BY r.account_id, r.kind HAVING SUM(r.sgn) <> 0
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n;
    END IF;
    RETURN NULL;
END
$fn$;
CREATE TRIGGER public_ip_kinds_rows_ins AFTER INSERT ON ip_addresses REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_public_ip_kinds_rows();
CREATE TRIGGER public_ip_kinds_rows_del AFTER DELETE ON ip_addresses REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_public_ip_kinds_rows();
CREATE TRIGGER public_ip_kinds_rows_upd AFTER UPDATE ON ip_addresses REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_public_ip_kinds_rows();

INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
SELECT 'public_ips:' || a.kind, a.account_id, l.level, a.id >> l.shift, 0, COUNT(*)
FROM ip_addresses a CROSS JOIN (VALUES (1, 6), (2, 12), (3, 18)) AS l(level, shift)
WHERE a.public AND a.account_id IS NOT NULL GROUP BY a.kind, a.account_id, l.level, a.id >> l.shift;
INSERT INTO row_counts (account_id, kind, shard, n)
SELECT account_id, 'public_ips:' || kind, 0, COUNT(*) FROM ip_addresses
WHERE public AND account_id IS NOT NULL GROUP BY account_id, kind;
