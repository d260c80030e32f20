-- The kept counts (row_counts, row_blocks, order_fence_counts) stored in their primary key's
-- order, WITHOUT ROWID: a deep page reads up to 64 consecutive block counts at each level, and
-- each was one more look-up of a table row from its key (docs/decisions.md, "Kept counts stored
-- in their key's order"). Each table is copied into its new form, the old dropped and the new
-- renamed. The triggers that write these tables name them and are left as they are: the rename
-- runs with legacy_alter_table on, which neither checks nor rewrites other tables' triggers (they
-- name the dropped table's name, which the renamed table takes).
PRAGMA legacy_alter_table = ON;

CREATE TABLE row_counts_kept (
    account_id BIGINT NOT NULL,
    kind TEXT NOT NULL,
    shard BIGINT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (account_id, kind, shard)
) WITHOUT ROWID;
INSERT INTO row_counts_kept (account_id, kind, shard, n) SELECT account_id, kind, shard, n FROM row_counts;
DROP TABLE row_counts;
ALTER TABLE row_counts_kept RENAME TO row_counts;

CREATE TABLE row_blocks_kept (
    kind TEXT NOT NULL,
    scope_id BIGINT NOT NULL,
    level BIGINT NOT NULL,
    block BIGINT NOT NULL,
    shard BIGINT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (kind, scope_id, level, block, shard)
) WITHOUT ROWID;
INSERT INTO row_blocks_kept (kind, scope_id, level, block, shard, n) SELECT kind, scope_id, level, block, shard, n FROM row_blocks;
DROP TABLE row_blocks;
ALTER TABLE row_blocks_kept RENAME TO row_blocks;

CREATE TABLE order_fence_counts_kept (
    kind TEXT NOT NULL,
    scope_id BIGINT NOT NULL,
    fence BIGINT NOT NULL,
    shard BIGINT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (kind, scope_id, fence, shard)
) WITHOUT ROWID;
INSERT INTO order_fence_counts_kept (kind, scope_id, fence, shard, n) SELECT kind, scope_id, fence, shard, n FROM order_fence_counts;
DROP TABLE order_fence_counts;
ALTER TABLE order_fence_counts_kept RENAME TO order_fence_counts;

PRAGMA legacy_alter_table = OFF;
