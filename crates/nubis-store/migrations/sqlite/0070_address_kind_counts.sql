-- The public addresses of an account counted, and their id blocks kept, by stored kind
-- (`public_ips:ipv4`, `public_ips:slaac`, `public_ips:link_local` in row_counts and row_blocks,
-- beside the whole list's `public_ips`): the address list filtered by `type` is then counted and
-- a deep page of it located as the whole list is, not by counting and skipping its matches
-- (docs/decisions.md, "An address list filtered or ordered by type reads kept partitions").

CREATE TRIGGER public_ip_kinds_insert AFTER INSERT ON ip_addresses WHEN NEW.public AND NEW.account_id IS NOT NULL BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
    SELECT 'public_ips:' || NEW.kind, NEW.account_id, l.level, NEW.id >> l.shift, 0, 1
    FROM (SELECT 1 AS level, 6 AS shift UNION ALL SELECT 2, 12 UNION ALL SELECT 3, 18) l WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (NEW.account_id, 'public_ips:' || NEW.kind, 0, 1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER public_ip_kinds_delete AFTER DELETE ON ip_addresses WHEN OLD.public AND OLD.account_id IS NOT NULL BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
    SELECT 'public_ips:' || OLD.kind, OLD.account_id, l.level, OLD.id >> l.shift, 0, -1
    FROM (SELECT 1 AS level, 6 AS shift UNION ALL SELECT 2, 12 UNION ALL SELECT 3, 18) l WHERE TRUE
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (OLD.account_id, 'public_ips:' || OLD.kind, 0, -1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER public_ip_kinds_move AFTER UPDATE OF account_id, public, kind ON ip_addresses
WHEN OLD.account_id IS NOT NEW.account_id OR OLD.public IS NOT NEW.public OR OLD.kind IS NOT NEW.kind BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
    SELECT 'public_ips:' || OLD.kind, OLD.account_id, l.level, OLD.id >> l.shift, 0, -1
    FROM (SELECT 1 AS level, 6 AS shift UNION ALL SELECT 2, 12 UNION ALL SELECT 3, 18) l
    WHERE OLD.public AND OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'public_ips:' || OLD.kind, 0, -1
    WHERE OLD.public AND OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
    SELECT 'public_ips:' || NEW.kind, NEW.account_id, l.level, NEW.id >> l.shift, 0, 1
    FROM (SELECT 1 AS level, 6 AS shift UNION ALL SELECT 2, 12 UNION ALL SELECT 3, 18) l
    WHERE NEW.public AND NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'public_ips:' || NEW.kind, 0, 1
    WHERE NEW.public AND NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;

INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
SELECT 'public_ips:' || a.kind, a.account_id, l.level, a.id >> l.shift, 0, COUNT(*)
FROM ip_addresses a, (SELECT 1 AS level, 6 AS shift UNION ALL SELECT 2, 12 UNION ALL SELECT 3, 18) l
WHERE a.public AND a.account_id IS NOT NULL GROUP BY a.kind, a.account_id, l.level, a.id >> l.shift;
INSERT INTO row_counts (account_id, kind, shard, n)
SELECT account_id, 'public_ips:' || kind, 0, COUNT(*) FROM ip_addresses
WHERE public AND account_id IS NOT NULL GROUP BY account_id, kind;
