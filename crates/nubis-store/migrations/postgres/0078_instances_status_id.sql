-- The instances in one status, across accounts (the runtime's sweep after a restart, `WHERE
-- status = $1 ORDER BY id`), in id order: (status, id) instead of (status). A page of an
-- account's instances filtered by one status is planned once, its status written as a range and
-- its order led by the status (docs/decisions.md, "A filter of one value, planned once"). With
-- (status) alone that plan read every instance in the status through this index and sorted
-- them (10,000 rows, 10 ms a page on PostgreSQL); (status, id) gives the order too, and the
-- planner takes the account's own index (account_id, status, id).
DROP INDEX IF EXISTS instances_status;
CREATE INDEX IF NOT EXISTS instances_status ON instances(status, id);
