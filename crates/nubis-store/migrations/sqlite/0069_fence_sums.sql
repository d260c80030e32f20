-- Order fences summed in groups (docs/decisions.md, "Fence counts summed in groups"): a deep
-- page in a field's order reads the sums of its scope's groups of fences, then the counts of the
-- one group that holds its row, not the count of every fence. The sums follow the counts through
-- triggers on order_fence_counts itself, whatever writes them (the lists' triggers, nubis placing
-- fences). nubis keeps each group to at most 32 fences (Tx::fence_place).

-- Every scope's fences numbered GAP (2^32) apart again, in their order, so that each group of
-- 2^36 numbers holds at most 16 of them; the counts move with their fences.
CREATE TABLE fence_numbers AS
SELECT kind, scope_id, fence AS old_fence,
       ROW_NUMBER() OVER (PARTITION BY kind, scope_id ORDER BY fence) * 4294967296 AS new_fence
FROM order_fences;
CREATE INDEX fence_numbers_old ON fence_numbers(kind, scope_id, old_fence);
UPDATE order_fence_counts SET fence = -fence WHERE fence > 0;
UPDATE order_fences SET fence = -fence WHERE fence > 0;
UPDATE order_fence_counts SET fence = (
    SELECT r.new_fence FROM fence_numbers r
    WHERE r.kind = order_fence_counts.kind AND r.scope_id = order_fence_counts.scope_id
      AND r.old_fence = -order_fence_counts.fence)
WHERE fence < 0;
UPDATE order_fences SET fence = (
    SELECT r.new_fence FROM fence_numbers r
    WHERE r.kind = order_fences.kind AND r.scope_id = order_fences.scope_id AND r.old_fence = -order_fences.fence)
WHERE fence < 0;
DROP TABLE fence_numbers;

-- The sums of the counts by group (fence >> 36) and shard; fence 0 is in group 0.
CREATE TABLE order_fence_sums (
    kind TEXT NOT NULL,
    scope_id BIGINT NOT NULL,
    grp BIGINT NOT NULL,
    shard BIGINT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (kind, scope_id, grp, shard)
);
INSERT INTO order_fence_sums (kind, scope_id, grp, shard, n)
SELECT kind, scope_id, fence >> 36, shard, SUM(n) FROM order_fence_counts GROUP BY kind, scope_id, fence >> 36, shard;

CREATE TRIGGER order_fence_sums_insert AFTER INSERT ON order_fence_counts BEGIN
    INSERT INTO order_fence_sums (kind, scope_id, grp, shard, n) VALUES (NEW.kind, NEW.scope_id, NEW.fence >> 36, NEW.shard, NEW.n)
    ON CONFLICT (kind, scope_id, grp, shard) DO UPDATE SET n = n + excluded.n;
END;
-- A count that changes in place (every insert or delete of a listed row) is one upsert.
CREATE TRIGGER order_fence_sums_update_in_place AFTER UPDATE ON order_fence_counts
WHEN OLD.kind = NEW.kind AND OLD.scope_id = NEW.scope_id AND (OLD.fence >> 36) = (NEW.fence >> 36) AND OLD.shard = NEW.shard
BEGIN
    INSERT INTO order_fence_sums (kind, scope_id, grp, shard, n) VALUES (NEW.kind, NEW.scope_id, NEW.fence >> 36, NEW.shard, NEW.n - OLD.n)
    ON CONFLICT (kind, scope_id, grp, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER order_fence_sums_update_moved AFTER UPDATE ON order_fence_counts
WHEN NOT (OLD.kind = NEW.kind AND OLD.scope_id = NEW.scope_id AND (OLD.fence >> 36) = (NEW.fence >> 36) AND OLD.shard = NEW.shard)
BEGIN
    INSERT INTO order_fence_sums (kind, scope_id, grp, shard, n) VALUES (OLD.kind, OLD.scope_id, OLD.fence >> 36, OLD.shard, -OLD.n)
    ON CONFLICT (kind, scope_id, grp, shard) DO UPDATE SET n = n + excluded.n;
    INSERT INTO order_fence_sums (kind, scope_id, grp, shard, n) VALUES (NEW.kind, NEW.scope_id, NEW.fence >> 36, NEW.shard, NEW.n)
    ON CONFLICT (kind, scope_id, grp, shard) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER order_fence_sums_delete AFTER DELETE ON order_fence_counts BEGIN
    INSERT INTO order_fence_sums (kind, scope_id, grp, shard, n) VALUES (OLD.kind, OLD.scope_id, OLD.fence >> 36, OLD.shard, -OLD.n)
    ON CONFLICT (kind, scope_id, grp, shard) DO UPDATE SET n = n + excluded.n;
END;
