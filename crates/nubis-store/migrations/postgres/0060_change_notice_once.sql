-- A transaction's change notices name each table once (docs/decisions.md, "A transaction's
-- cost grew with its statements: the change notices"). The trigger of migration 17 appended the
-- table's name to the transaction's `nubis.touched` setting at every statement, and the kept
-- counts' own tables appended theirs too, so a transaction of many statements copied an ever
-- longer setting at each one: 600 locking updates of instances in one transaction grew it to
-- 359,398 characters and each statement from 1 ms to 6 ms. The name is now added only when it
-- is not there yet; notices of the same name were already folded into one by PostgreSQL.
CREATE OR REPLACE FUNCTION nubis_change_notice() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE touched TEXT := COALESCE(current_setting('nubis.touched', true), '');
BEGIN
  IF strpos(touched || ' ', ' ' || TG_TABLE_NAME || ' ') = 0 THEN
    PERFORM set_config('nubis.touched', touched || ' ' || TG_TABLE_NAME, true);
  END IF;
  PERFORM pg_notify('nubis_changes', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
