-- Change notices for the read caches of the API replicas (docs/decisions.md, "Reads by key, and
-- the cache"). A statement that writes one of the tables the credential and grant caches read
-- notifies every replica listening on `nubis_changes` when its transaction commits (the table's
-- name is the payload), and records the table in the transaction's `nubis.touched` setting so
-- that the replica that wrote it invalidates its own cache before it answers.
CREATE OR REPLACE FUNCTION nubis_change_notice() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('nubis.touched', COALESCE(current_setting('nubis.touched', true), '') || ' ' || TG_TABLE_NAME, true);
  PERFORM pg_notify('nubis_changes', TG_TABLE_NAME);
  RETURN NULL;
END
$$;

CREATE TRIGGER tokens_change_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tokens
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_change_notice();
CREATE TRIGGER users_change_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_change_notice();
CREATE TRIGGER accounts_change_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_change_notice();
CREATE TRIGGER account_billing_change_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON account_billing
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_change_notice();
CREATE TRIGGER grants_change_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON grants
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_change_notice();
