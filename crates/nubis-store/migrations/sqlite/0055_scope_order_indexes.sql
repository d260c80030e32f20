-- An index on (scope, id) for the lists that had none: a shallow page of a whole list is read
-- with its scope as a range and first in its order (docs/decisions.md, "Pages whose plan does
-- not depend on the statistics"), which only such an index gives without sorting the scope's
-- rows. (The orders by a field need nothing here: SQLite's indexes end with the row id.)
CREATE INDEX IF NOT EXISTS vlans_account ON vlans(account_id, id);
CREATE INDEX IF NOT EXISTS payment_methods_account_active ON payment_methods(account_id, id) WHERE active = TRUE;
