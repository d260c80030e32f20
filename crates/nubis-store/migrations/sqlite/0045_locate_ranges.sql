-- On PostgreSQL this migration bounds the block ranges of nubis_locate; SQLite locates a page
-- in the process (Store::locate), with a bounded range at every level already.
SELECT 1;
