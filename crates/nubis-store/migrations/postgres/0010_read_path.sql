-- Reads by key and pages in SQL: indexes for the keyed reads, and a kept count of the rows of
-- each large collection per account, so that `results` of a page needs no scan (an exact
-- COUNT(*) scans on PostgreSQL).
CREATE INDEX vpcs_account ON vpcs(account_id, id);
CREATE INDEX vpcs_account_region ON vpcs(account_id, region, id);
CREATE INDEX instance_interfaces_vpc ON instance_interfaces(vpc_id, id);

-- Updated by triggers in the transaction of the insert or delete. Each connection adds to its
-- own shard (of 16), so concurrent writers of one account rarely touch the same row, and a count
-- is the sum of at most 16 rows.
CREATE TABLE row_counts (
    account_id BIGINT NOT NULL,
    kind TEXT NOT NULL,
    shard BIGINT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (account_id, kind, shard)
);

CREATE FUNCTION nubis_count_rows() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO row_counts (account_id, kind, shard, n) VALUES (NEW.account_id, TG_TABLE_NAME, pg_backend_pid() % 16, 1)
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n + 1;
        RETURN NEW;
    ELSE
        INSERT INTO row_counts (account_id, kind, shard, n) VALUES (OLD.account_id, TG_TABLE_NAME, pg_backend_pid() % 16, -1)
        ON CONFLICT (account_id, kind, shard) DO UPDATE SET n = row_counts.n - 1;
        RETURN OLD;
    END IF;
END
$fn$;

CREATE TRIGGER vpcs_count AFTER INSERT OR DELETE ON vpcs FOR EACH ROW EXECUTE FUNCTION nubis_count_rows();
CREATE TRIGGER instances_count AFTER INSERT OR DELETE ON instances FOR EACH ROW EXECUTE FUNCTION nubis_count_rows();
CREATE TRIGGER firewalls_count AFTER INSERT OR DELETE ON firewalls FOR EACH ROW EXECUTE FUNCTION nubis_count_rows();
CREATE TRIGGER nodebalancers_count AFTER INSERT OR DELETE ON nodebalancers FOR EACH ROW EXECUTE FUNCTION nubis_count_rows();

INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'vpcs', 0, COUNT(*) FROM vpcs GROUP BY account_id;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'instances', 0, COUNT(*) FROM instances GROUP BY account_id;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'firewalls', 0, COUNT(*) FROM firewalls GROUP BY account_id;
INSERT INTO row_counts (account_id, kind, shard, n) SELECT account_id, 'nodebalancers', 0, COUNT(*) FROM nodebalancers GROUP BY account_id;
