-- A balancer config's nodes counted by status (`nodebalancer_nodes:<status>` in row_counts, the
-- config's id as the scope), kept in the write's own statement: a config's `nodes_status` (up,
-- down) is read from these counts, not from every node of the config (docs/decisions.md, "A
-- config's nodes_status from kept counts"). Kept once per statement from its transition tables,
-- as every kept count since migration 53.

CREATE FUNCTION nubis_node_status_counts() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO row_counts (account_id, kind, shard, n)
        SELECT r.config_id, 'nodebalancer_nodes:' || r.status, pg_backend_pid() % 16, COUNT(*) FROM new_rows r
        WHERE r.config_id IS NOT NULL GROUP BY r.config_id, r.status
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n;
    END IF;
    IF TG_OP = 'DELETE' THEN
        INSERT INTO row_counts (account_id, kind, shard, n)
        SELECT r.config_id, 'nodebalancer_nodes:' || r.status, pg_backend_pid() % 16, -COUNT(*) FROM old_rows r
        WHERE r.config_id IS NOT NULL GROUP BY r.config_id, r.status
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO row_counts (account_id, kind, shard, n)
        SELECT r.config_id, 'nodebalancer_nodes:' || r.status, pg_backend_pid() % 16, SUM(r.sgn)
        FROM (SELECT o.config_id, o.status, -1 AS sgn FROM old_rows o
              UNION ALL SELECT n.config_id, n.status, 1 AS sgn FROM new_rows n) r
        WHERE r.config_id IS NOT NULL GROUP BY r.config_id, r.status HAVING SUM(r.sgn) <> 0
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + excluded.n;
    END IF;
    RETURN NULL;
END
$fn$;
CREATE TRIGGER node_status_counts_ins AFTER INSERT ON nodebalancer_nodes REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_node_status_counts();
CREATE TRIGGER node_status_counts_del AFTER DELETE ON nodebalancer_nodes REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_node_status_counts();
CREATE TRIGGER node_status_counts_upd AFTER UPDATE ON nodebalancer_nodes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_node_status_counts();

INSERT INTO row_counts (account_id, kind, shard, n)
SELECT config_id, 'nodebalancer_nodes:' || status, 0, COUNT(*) FROM nodebalancer_nodes
WHERE config_id IS NOT NULL GROUP BY config_id, status;
