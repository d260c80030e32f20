-- Reads by key and pages in SQL: indexes for the keyed reads, and a kept count of the rows of
-- each large collection per account, so that `results` of a page needs no scan.
CREATE INDEX vpcs_account ON vpcs(account_id, id);
CREATE INDEX vpcs_account_region ON vpcs(account_id, region, id);
CREATE INDEX instance_interfaces_vpc ON instance_interfaces(vpc_id, id);

-- One row per (account, table); updated by triggers in the transaction of the insert or delete.
-- (`shard` spreads concurrent writers over several rows on PostgreSQL; SQLite has one writer and
-- uses shard 0.)
CREATE TABLE row_counts (
    account_id BIGINT NOT NULL,
    kind TEXT NOT NULL,
    shard BIGINT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (account_id, kind, shard)
);

CREATE TRIGGER vpcs_count_insert AFTER INSERT ON vpcs BEGIN
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (NEW.account_id, 'vpcs', 0, 1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER vpcs_count_delete AFTER DELETE ON vpcs BEGIN
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (OLD.account_id, 'vpcs', 0, -1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n - 1;
END;
CREATE TRIGGER instances_count_insert AFTER INSERT ON instances BEGIN
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (NEW.account_id, 'instances', 0, 1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER instances_count_delete AFTER DELETE ON instances BEGIN
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (OLD.account_id, 'instances', 0, -1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n - 1;
END;
CREATE TRIGGER firewalls_count_insert AFTER INSERT ON firewalls BEGIN
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (NEW.account_id, 'firewalls', 0, 1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER firewalls_count_delete AFTER DELETE ON firewalls BEGIN
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (OLD.account_id, 'firewalls', 0, -1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n - 1;
END;
CREATE TRIGGER nodebalancers_count_insert AFTER INSERT ON nodebalancers BEGIN
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (NEW.account_id, 'nodebalancers', 0, 1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER nodebalancers_count_delete AFTER DELETE ON nodebalancers BEGIN
    INSERT INTO row_counts (account_id, kind, shard, n) VALUES (OLD.account_id, 'nodebalancers', 0, -1)
    ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = n - 1;
END;

INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'vpcs', 0, COUNT(*) FROM vpcs GROUP BY account_id;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'instances', 0, COUNT(*) FROM instances GROUP BY account_id;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'firewalls', 0, COUNT(*) FROM firewalls GROUP BY account_id;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'nodebalancers', 0, COUNT(*) FROM nodebalancers GROUP BY account_id;
