-- PostgreSQL only (nubis_locate_fenced, a deep page in a field's order located by its own
-- statement); SQLite locates the range in the process.
SELECT 1;
