-- SQLite has one writer at a time: the write gate of PostgreSQL (docs/decisions.md, "A write
-- that keeps losing runs alone") has nothing to order here.
SELECT 1;
