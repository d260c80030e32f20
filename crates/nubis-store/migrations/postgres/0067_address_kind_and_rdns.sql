-- An address's type, prefix and reverse name in a filter past the budget (docs/decisions.md,
-- "An address's type, prefix and rdns served past the budget"): an index on the account, the
-- stored kind and the id, and one on the account, the stored reverse name and the id, of the
-- public addresses (the only ones the address list shows).

CREATE INDEX IF NOT EXISTS ip_addresses_public_kind ON ip_addresses(account_id, kind, id, public) WHERE public;
CREATE INDEX IF NOT EXISTS ip_addresses_public_rdns ON ip_addresses(account_id, rdns, id, public) WHERE public;
