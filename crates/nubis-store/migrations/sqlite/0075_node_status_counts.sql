-- A balancer config's nodes counted by status (`nodebalancer_nodes:<status>` in row_counts, the
-- config's id as the scope), kept in the write's own triggers: a config's `nodes_status` (up,
-- down) is read from these counts, not from every node of the config (docs/decisions.md, "A
-- config's nodes_status from kept counts").
CREATE TRIGGER node_status_counts_insert AFTER INSERT ON nodebalancer_nodes
WHEN NEW.config_id IS NOT NULL BEGIN
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (NEW.config_id, 'nodebalancer_nodes:' || NEW.status, 0, 1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER node_status_counts_delete AFTER DELETE ON nodebalancer_nodes
WHEN OLD.config_id IS NOT NULL BEGIN
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (OLD.config_id, 'nodebalancer_nodes:' || OLD.status, 0, -1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER node_status_counts_move AFTER UPDATE OF config_id, status ON nodebalancer_nodes
WHEN OLD.config_id IS NOT NEW.config_id OR OLD.status IS NOT NEW.status BEGIN
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.config_id, 'nodebalancer_nodes:' || OLD.status, 0, -1
    WHERE OLD.config_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.config_id, 'nodebalancer_nodes:' || NEW.status, 0, 1
    WHERE NEW.config_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;

INSERT INTO row_counts (account_id, kind, shard, n)
SELECT config_id, 'nodebalancer_nodes:' || status, 0, COUNT(*) FROM nodebalancer_nodes
WHERE config_id IS NOT NULL GROUP BY config_id, status;
