-- The lock every write transaction takes before its snapshot (docs/decisions.md, "A write that
-- keeps losing runs alone"): ROW SHARE to run beside the other writers, EXCLUSIVE for a write
-- that lost too many serialization failures in a row and now runs alone. It never holds a row.
CREATE TABLE write_gate (id BIGINT PRIMARY KEY);
