-- Each half of the transfer list counted and blocked apart (docs/decisions.md, "The transfer
-- list ordered by is_sender"): the transfers an account made, and those it accepted. Generated
-- by scripts/gen-order-fences.py.


CREATE TRIGGER transfer_half_sent_blocks_insert AFTER INSERT ON service_transfers BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'service_transfers_sent', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'service_transfers_sent', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'service_transfers_sent', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'service_transfers_sent', 0, 1 WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER transfer_half_sent_blocks_delete AFTER DELETE ON service_transfers BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'service_transfers_sent', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'service_transfers_sent', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'service_transfers_sent', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'service_transfers_sent', 0, -1 WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER transfer_half_sent_blocks_move AFTER UPDATE OF account_id ON service_transfers
WHEN OLD.account_id IS NOT NEW.account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'service_transfers_sent', OLD.account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'service_transfers_sent', OLD.account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'service_transfers_sent', OLD.account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.account_id, 'service_transfers_sent', 0, -1 WHERE OLD.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'service_transfers_sent', NEW.account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'service_transfers_sent', NEW.account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'service_transfers_sent', NEW.account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.account_id, 'service_transfers_sent', 0, 1 WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER transfer_half_received_blocks_insert AFTER INSERT ON service_transfers BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'service_transfers_received', NEW.receiver_account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'service_transfers_received', NEW.receiver_account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'service_transfers_received', NEW.receiver_account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.receiver_account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.receiver_account_id, 'service_transfers_received', 0, 1 WHERE NEW.receiver_account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER transfer_half_received_blocks_delete AFTER DELETE ON service_transfers BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'service_transfers_received', OLD.receiver_account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'service_transfers_received', OLD.receiver_account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'service_transfers_received', OLD.receiver_account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.receiver_account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.receiver_account_id, 'service_transfers_received', 0, -1 WHERE OLD.receiver_account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER transfer_half_received_blocks_move AFTER UPDATE OF receiver_account_id ON service_transfers
WHEN OLD.receiver_account_id IS NOT NEW.receiver_account_id BEGIN
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'service_transfers_received', OLD.receiver_account_id, 1, OLD.id >> 6, 0, -1 UNION ALL SELECT 'service_transfers_received', OLD.receiver_account_id, 2, OLD.id >> 12, 0, -1 UNION ALL SELECT 'service_transfers_received', OLD.receiver_account_id, 3, OLD.id >> 18, 0, -1) WHERE OLD.receiver_account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT OLD.receiver_account_id, 'service_transfers_received', 0, -1 WHERE OLD.receiver_account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT * FROM (SELECT 'service_transfers_received', NEW.receiver_account_id, 1, NEW.id >> 6, 0, 1 UNION ALL SELECT 'service_transfers_received', NEW.receiver_account_id, 2, NEW.id >> 12, 0, 1 UNION ALL SELECT 'service_transfers_received', NEW.receiver_account_id, 3, NEW.id >> 18, 0, 1) WHERE NEW.receiver_account_id IS NOT NULL
    ON CONFLICT (kind, scope_id, level, block, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO row_counts (account_id, kind, shard, n) SELECT NEW.receiver_account_id, 'service_transfers_received', 0, 1 WHERE NEW.receiver_account_id IS NOT NULL
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + excluded.n;
END;

INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'service_transfers_sent', account_id, 1, id >> 6, 0, COUNT(*) FROM service_transfers WHERE account_id IS NOT NULL GROUP BY account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'service_transfers_sent', account_id, 2, id >> 12, 0, COUNT(*) FROM service_transfers WHERE account_id IS NOT NULL GROUP BY account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'service_transfers_sent', account_id, 3, id >> 18, 0, COUNT(*) FROM service_transfers WHERE account_id IS NOT NULL GROUP BY account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'service_transfers_sent', 0, COUNT(*) FROM service_transfers WHERE account_id IS NOT NULL GROUP BY account_id;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'service_transfers_received', receiver_account_id, 1, id >> 6, 0, COUNT(*) FROM service_transfers WHERE receiver_account_id IS NOT NULL GROUP BY receiver_account_id, id >> 6;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'service_transfers_received', receiver_account_id, 2, id >> 12, 0, COUNT(*) FROM service_transfers WHERE receiver_account_id IS NOT NULL GROUP BY receiver_account_id, id >> 12;
INSERT INTO row_blocks (kind, scope_id, level, block, shard, n) SELECT 'service_transfers_received', receiver_account_id, 3, id >> 18, 0, COUNT(*) FROM service_transfers WHERE receiver_account_id IS NOT NULL GROUP BY receiver_account_id, id >> 18;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT receiver_account_id, 'service_transfers_received', 0, COUNT(*) FROM service_transfers WHERE receiver_account_id IS NOT NULL GROUP BY receiver_account_id;
