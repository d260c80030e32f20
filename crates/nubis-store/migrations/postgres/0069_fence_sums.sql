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

-- Per statement, over the statement's transition tables, like the counts' own triggers
-- (migration 53): one upsert of the changes summed by group and shard.
CREATE FUNCTION nubis_fence_sums() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO order_fence_sums (kind, scope_id, grp, shard, n)
        SELECT kind, scope_id, fence >> 36, shard, SUM(n) FROM new_rows GROUP BY kind, scope_id, fence >> 36, shard
        ON CONFLICT (kind, scope_id, grp, shard) DO UPDATE SET n = order_fence_sums.n + excluded.n;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO order_fence_sums (kind, scope_id, grp, shard, n)
        SELECT kind, scope_id, g, shard, SUM(n) FROM (
            SELECT kind, scope_id, fence >> 36 AS g, shard, n FROM new_rows
            UNION ALL SELECT kind, scope_id, fence >> 36, shard, -n FROM old_rows) d
        GROUP BY kind, scope_id, g, shard HAVING SUM(n) <> 0
        ON CONFLICT (kind, scope_id, grp, shard) DO UPDATE SET n = order_fence_sums.n + excluded.n;
    ELSE
        INSERT INTO order_fence_sums (kind, scope_id, grp, shard, n)
        SELECT kind, scope_id, fence >> 36, shard, -SUM(n) FROM old_rows GROUP BY kind, scope_id, fence >> 36, shard
        ON CONFLICT (kind, scope_id, grp, shard) DO UPDATE SET n = order_fence_sums.n + excluded.n;
    END IF;
    RETURN NULL;
END
$fn$;
CREATE TRIGGER order_fence_sums_insert AFTER INSERT ON order_fence_counts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_fence_sums();
CREATE TRIGGER order_fence_sums_update AFTER UPDATE ON order_fence_counts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_fence_sums();
CREATE TRIGGER order_fence_sums_delete AFTER DELETE ON order_fence_counts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION nubis_fence_sums();

-- Cached pages read the sums: their writes send change notices (as the counts', 0039).
CREATE TRIGGER order_fence_sums_change_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON order_fence_sums
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_change_notice();
