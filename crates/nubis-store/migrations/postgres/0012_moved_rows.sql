-- An instance that changes account (a completed service transfer) moves from one account's kept
-- count to the other's, in the transaction of the move.
CREATE FUNCTION nubis_count_rows_moved() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF OLD.account_id <> NEW.account_id THEN
        INSERT INTO row_counts (account_id, kind, shard, n) VALUES (OLD.account_id, TG_TABLE_NAME, pg_backend_pid() % 16, -1)
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n - 1;
        INSERT INTO row_counts (account_id, kind, shard, n) VALUES (NEW.account_id, TG_TABLE_NAME, pg_backend_pid() % 16, 1)
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + 1;
    END IF;
    RETURN NEW;
END
$fn$;

CREATE TRIGGER instances_count_move AFTER UPDATE OF account_id ON instances FOR EACH ROW
EXECUTE FUNCTION nubis_count_rows_moved();
