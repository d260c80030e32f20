-- Order fences numbered in the order of their keys, 2^32 apart (docs/decisions.md, "Deep pages
-- in a field's order"): a deep page then sums its ranges' counts in the order of one index,
-- without joining the fences to sort them. nubis numbers the fences it places between their
-- neighbours' numbers from now on (Tx::fence_place).
CREATE TABLE fence_numbers AS
SELECT kind, scope_id, fence AS old_fence,
       ROW_NUMBER() OVER (PARTITION BY kind, scope_id ORDER BY k_int, k_text, k_id) * 4294967296 AS new_fence
FROM order_fences;
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
