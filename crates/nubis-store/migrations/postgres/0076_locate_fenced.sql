-- A deep page in a field's order finds its range inside its own statement (docs/decisions.md,
-- "A deep page in a field's order finds its range in its own statement"): nubis_locate_fenced
-- walks the counts of the order's ranges (order_fence_counts, in fence order, each range's
-- shards one after another) from the end the page is read from, and stops at the range that
-- holds the row sought; the walk and the page read one snapshot.
--
-- The page is read ascending from the range's key (k_int or k_text, and k_id), `skip` rows in
-- and `len` rows long. A descending page is the ascending run that ends at its first row: the
-- row sought is its last (off + want - 1 from the top), and where that is past the first row of
-- the order the run starts there. Below the first fence the key is the least there is. Past the
-- end every column is NULL, and the page reads no row.
CREATE FUNCTION nubis_locate_fenced(k TEXT, s BIGINT, off BIGINT, descending BOOLEAN, want BIGINT,
    OUT k_int BIGINT, OUT k_text TEXT, OUT k_id BIGINT, OUT skip BIGINT, OUT len BIGINT)
LANGUAGE plpgsql STABLE AS $fn$
DECLARE
    target BIGINT := off;
    r RECORD;
    at BIGINT := NULL;
    n BIGINT := 0;
    passed BIGINT := 0;
    f BIGINT := NULL;
BEGIN
    IF want <= 0 OR off < 0 THEN
        RETURN;
    END IF;
    -- A range's count is summed over its shards before it is passed or taken. Two loops, one
    -- for each direction: each reads the primary key in its own direction with a plan made once
    -- (an order computed from `descending` would sort every range first).
    IF descending THEN
        target := off + want - 1;
        FOR r IN SELECT c.fence, c.n FROM order_fence_counts c WHERE c.kind = k AND c.scope_id = s
                 ORDER BY c.fence DESC, c.shard DESC LOOP
            IF r.fence IS DISTINCT FROM at THEN
                IF at IS NOT NULL THEN
                    IF passed + GREATEST(n, 0) > target THEN
                        f := at;
                        EXIT;
                    END IF;
                    passed := passed + GREATEST(n, 0);
                END IF;
                at := r.fence;
                n := 0;
            END IF;
            n := n + r.n;
        END LOOP;
    ELSE
        FOR r IN SELECT c.fence, c.n FROM order_fence_counts c WHERE c.kind = k AND c.scope_id = s
                 ORDER BY c.fence, c.shard LOOP
            IF r.fence IS DISTINCT FROM at THEN
                IF at IS NOT NULL THEN
                    IF passed + GREATEST(n, 0) > target THEN
                        f := at;
                        EXIT;
                    END IF;
                    passed := passed + GREATEST(n, 0);
                END IF;
                at := r.fence;
                n := 0;
            END IF;
            n := n + r.n;
        END LOOP;
    END IF;
    -- The last range walked, when the walk ran out of rows.
    IF f IS NULL AND at IS NOT NULL THEN
        IF passed + GREATEST(n, 0) > target THEN
            f := at;
        ELSE
            passed := passed + GREATEST(n, 0);
        END IF;
    END IF;
    n := GREATEST(n, 0);
    IF f IS NOT NULL THEN
        skip := CASE WHEN descending THEN n - 1 - (target - passed) ELSE target - passed END;
        len := want;
    ELSIF descending AND off < passed THEN
        -- The page reaches the first row of the order: the run starts there.
        f := 0;
        skip := 0;
        len := passed - off;
    ELSE
        RETURN;
    END IF;
    SELECT o.k_int, o.k_text, o.k_id INTO k_int, k_text, k_id FROM order_fences o
        WHERE o.kind = k AND o.scope_id = s AND o.fence = f;
    IF k_id IS NULL THEN
        -- Below the first fence: from the least key of either type.
        k_int := -9223372036854775808;
        k_text := '';
        k_id := -9223372036854775808;
    END IF;
END
$fn$;
