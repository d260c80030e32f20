-- nubis_locate (migration 36) with a bounded block range at every level. Its statement read
-- `lo IS NULL OR block in [lo, lo + 64)`: once PL/pgSQL switched to the statement's generic plan,
-- that condition could not bound the index scan, so each call read every block of a level
-- (15,000 at level 1 for a million events: 8-13 ms a page). The top level now reads
-- [min, max) and each level below the 64 blocks under the one found above.
CREATE OR REPLACE FUNCTION nubis_locate(k TEXT, s BIGINT, off BIGINT, descending BOOLEAN,
    OUT first BIGINT, OUT last BIGINT, OUT skip BIGINT) LANGUAGE plpgsql STABLE AS $fn$
DECLARE
    lvl INT;
    r RECORD;
    before BIGINT := 0;
    found_block BIGINT;
    lo BIGINT := -9223372036854775808;
    hi BIGINT := 9223372036854775807;
BEGIN
    FOR lvl IN REVERSE 3..1 LOOP
        found_block := NULL;
        FOR r IN SELECT b.block, CAST(SUM(b.n) AS BIGINT) AS n FROM row_blocks b
                 WHERE b.kind = k AND b.scope_id = s AND b.level = lvl AND b.block >= lo AND b.block < hi
                 GROUP BY b.block ORDER BY CASE WHEN descending THEN -b.block ELSE b.block END LOOP
            IF before + r.n > off THEN
                found_block := r.block;
                EXIT;
            END IF;
            before := before + r.n;
        END LOOP;
        IF found_block IS NULL THEN
            RETURN;
        END IF;
        lo := found_block * 64;
        hi := lo + 64;
    END LOOP;
    first := found_block * 64;
    last := first + 63;
    skip := off - before;
END
$fn$;
