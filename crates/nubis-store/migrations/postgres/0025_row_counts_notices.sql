-- The kept row counts (0010) are read by cached pages of lists: their writes send change notices
-- like those of the tables in 0017 (nubis-store/src/cache/mod.rs, TABLES).
CREATE TRIGGER row_counts_change_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON row_counts
  FOR EACH STATEMENT EXECUTE FUNCTION nubis_change_notice();
