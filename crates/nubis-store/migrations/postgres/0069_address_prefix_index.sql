-- A filter on an address's prefix counts and pages its matches from an index alone
-- (docs/decisions.md, "A filtered address page reads its two tables apart"): the index of
-- migration 67 on the account, the stored kind and the id of the public addresses also holds the
-- region and the address as an integer, which the prefix is computed from. The same number of
-- indexes as before, each entry wider by those two columns.

DROP INDEX IF EXISTS ip_addresses_public_kind;
CREATE INDEX IF NOT EXISTS ip_addresses_public_kind_prefix ON ip_addresses(account_id, kind, id, region, v4, public) WHERE public;
