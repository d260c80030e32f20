-- Nothing on SQLite: the writer's update hook reports the writes of every table, row_counts
-- included (nubis-store/src/cache/mod.rs).
SELECT 1;
