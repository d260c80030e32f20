-- An instance that changes account (a completed service transfer) moves from one account's kept
-- count to the other's, in the transaction of the move.
CREATE TRIGGER instances_count_move AFTER UPDATE OF account_id ON instances
WHEN OLD.account_id <> NEW.account_id BEGIN
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (OLD.account_id, 'instances', 0, -1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n - 1;
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (NEW.account_id, 'instances', 0, 1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + 1;
END;
