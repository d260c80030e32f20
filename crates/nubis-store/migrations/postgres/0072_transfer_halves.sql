-- Each half of the transfer list counted and blocked apart (docs/decisions.md, "The transfer
-- list ordered by is_sender"): the transfers an account made, and those it accepted. Generated
-- by scripts/gen-order-fences.py.

CREATE FUNCTION nubis_transfer_half_sent_rows() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
        SELECT 'service_transfers_sent', r.account_id, l.level, r.id >> l.shift, pg_backend_pid() % 8, COUNT(*)
        FROM new_rows r CROSS JOIN (VALUES (1, 6), (2, 12), (3, 18)) AS l(level, shift)
        WHERE r.account_id IS NOT NULL GROUP BY r.account_id, l.level, r.id >> l.shift
        ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = row_blocks.n + excluded.n;
        INSERT INTO row_counts (account_id, kind, shard, n)
        SELECT r.account_id, 'service_transfers_sent', pg_backend_pid() % 16, COUNT(*) FROM new_rows r
        WHERE r.account_id IS NOT NULL GROUP BY r.account_id
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n;
    END IF;
    IF TG_OP = 'DELETE' THEN
        INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
        SELECT 'service_transfers_sent', r.account_id, l.level, r.id >> l.shift, pg_backend_pid() % 8, -COUNT(*)
        FROM old_rows r CROSS JOIN (VALUES (1, 6), (2, 12), (3, 18)) AS l(level, shift)
        WHERE r.account_id IS NOT NULL GROUP BY r.account_id, l.level, r.id >> l.shift
        ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = row_blocks.n + excluded.n;
        INSERT INTO row_counts (account_id, kind, shard, n)
        SELECT r.account_id, 'service_transfers_sent', pg_backend_pid() % 16, -COUNT(*) FROM old_rows r
        WHERE r.account_id IS NOT NULL GROUP BY r.account_id
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
        SELECT 'service_transfers_sent', r.account_id, l.level, r.id >> l.shift, pg_backend_pid() % 8, SUM(r.sgn)
        FROM (SELECT o.*, -1 AS sgn FROM old_rows o UNION ALL SELECT n.*, 1 AS sgn FROM new_rows n) r CROSS JOIN (VALUES (1, 6), (2, 12), (3, 18)) AS l(level, shift)
        WHERE r.account_id IS NOT NULL GROUP BY r.account_id, l.level, r.id >> l.shift HAVING SUM(r.sgn) <> 0
        ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = row_blocks.n + excluded.n;
        INSERT INTO row_counts (account_id, kind, shard, n)
        SELECT r.account_id, 'service_transfers_sent', pg_backend_pid() % 16, SUM(r.sgn) FROM (SELECT o.*, -1 AS sgn FROM old_rows o UNION ALL SELECT n.*, 1 AS sgn FROM new_rows n) r
        WHERE r.account_id IS NOT NULL GROUP BY r.account_id HAVING SUM(r.sgn) <> 0
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n;
    END IF;
    RETURN NULL;
END
$fn$;
CREATE TRIGGER transfer_half_sent_rows_ins AFTER INSERT ON service_transfers REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_transfer_half_sent_rows();
CREATE TRIGGER transfer_half_sent_rows_del AFTER DELETE ON service_transfers REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_transfer_half_sent_rows();
CREATE TRIGGER transfer_half_sent_rows_upd AFTER UPDATE ON service_transfers REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_transfer_half_sent_rows();
CREATE FUNCTION nubis_transfer_half_received_rows() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
        SELECT 'service_transfers_received', r.receiver_account_id, l.level, r.id >> l.shift, pg_backend_pid() % 8, COUNT(*)
        FROM new_rows r CROSS JOIN (VALUES (1, 6), (2, 12), (3, 18)) AS l(level, shift)
        WHERE r.receiver_account_id IS NOT NULL GROUP BY r.receiver_account_id, l.level, r.id >> l.shift
        ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = row_blocks.n + excluded.n;
        INSERT INTO row_counts (account_id, kind, shard, n)
        SELECT r.receiver_account_id, 'service_transfers_received', pg_backend_pid() % 16, COUNT(*) FROM new_rows r
        WHERE r.receiver_account_id IS NOT NULL GROUP BY r.receiver_account_id
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n;
    END IF;
    IF TG_OP = 'DELETE' THEN
        INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
        SELECT 'service_transfers_received', r.receiver_account_id, l.level, r.id >> l.shift, pg_backend_pid() % 8, -COUNT(*)
        FROM old_rows r CROSS JOIN (VALUES (1, 6), (2, 12), (3, 18)) AS l(level, shift)
        WHERE r.receiver_account_id IS NOT NULL GROUP BY r.receiver_account_id, l.level, r.id >> l.shift
        ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = row_blocks.n + excluded.n;
        INSERT INTO row_counts (account_id, kind, shard, n)
        SELECT r.receiver_account_id, 'service_transfers_received', pg_backend_pid() % 16, -COUNT(*) FROM old_rows r
        WHERE r.receiver_account_id IS NOT NULL GROUP BY r.receiver_account_id
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO row_blocks (kind, scope_id, level, block, shard, n)
        SELECT 'service_transfers_received', r.receiver_account_id, l.level, r.id >> l.shift, pg_backend_pid() % 8, SUM(r.sgn)
        FROM (SELECT o.*, -1 AS sgn FROM old_rows o UNION ALL SELECT n.*, 1 AS sgn FROM new_rows n) r CROSS JOIN (VALUES (1, 6), (2, 12), (3, 18)) AS l(level, shift)
        WHERE r.receiver_account_id IS NOT NULL GROUP BY r.receiver_account_id, l.level, r.id >> l.shift HAVING SUM(r.sgn) <> 0
        ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = row_blocks.n + excluded.n;
        INSERT INTO row_counts (account_id, kind, shard, n)
        SELECT r.receiver_account_id, 'service_transfers_received', pg_backend_pid() % 16, SUM(r.sgn) FROM (SELECT o.*, -1 AS sgn FROM old_rows o UNION ALL SELECT n.*, 1 AS sgn FROM new_rows n) r
        WHERE r.receiver_account_id IS NOT NULL GROUP BY r.receiver_account_id HAVING SUM(r.sgn) <> 0
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n;
    END IF;
    RETURN NULL;
END
$fn$;
CREATE TRIGGER transfer_half_received_rows_ins AFTER INSERT ON service_transfers REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_transfer_half_received_rows();
CREATE TRIGGER transfer_half_received_rows_del AFTER DELETE ON service_transfers REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_transfer_half_received_rows();
CREATE TRIGGER transfer_half_received_rows_upd AFTER UPDATE ON service_transfers REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_transfer_half_received_rows();

INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'service_transfers_sent', account_id, 1, id >> 6, 0, COUNT(*) FROM service_transfers WHERE account_id IS NOT NULL GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'service_transfers_sent', account_id, 2, id >> 12, 0, COUNT(*) FROM service_transfers WHERE account_id IS NOT NULL GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'service_transfers_sent', account_id, 3, id >> 18, 0, COUNT(*) FROM service_transfers WHERE account_id IS NOT NULL GROUP BY account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'service_transfers_sent', 0, COUNT(*) FROM service_transfers WHERE account_id IS NOT NULL GROUP BY account_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'service_transfers_received', receiver_account_id, 1, id >> 6, 0, COUNT(*) FROM service_transfers WHERE receiver_account_id IS NOT NULL GROUP BY receiver_account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'service_transfers_received', receiver_account_id, 2, id >> 12, 0, COUNT(*) FROM service_transfers WHERE receiver_account_id IS NOT NULL GROUP BY receiver_account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'service_transfers_received', receiver_account_id, 3, id >> 18, 0, COUNT(*) FROM service_transfers WHERE receiver_account_id IS NOT NULL GROUP BY receiver_account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT receiver_account_id, 'service_transfers_received', 0, COUNT(*) FROM service_transfers WHERE receiver_account_id IS NOT NULL GROUP BY receiver_account_id;
