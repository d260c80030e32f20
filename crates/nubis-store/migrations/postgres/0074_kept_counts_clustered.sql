-- SQLite only (its kept counts stored WITHOUT ROWID): PostgreSQL's tables are heaps, and its
-- deep pages walk the block counts next to the data (nubis_locate, migration 36).
SELECT 1;
