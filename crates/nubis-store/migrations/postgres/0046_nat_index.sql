-- On SQLite this migration makes the index of 1:1 NAT addresses partial (its statistics averaged
-- in the NULLs). PostgreSQL keeps the fraction of NULLs apart from the values' statistics and
-- plans those lookups by the index already.
SELECT 1;
