-- Network transfer of an account per region and month (month = unix seconds of its first moment,
-- UTC), summed from the data plane's traffic samples. Unlike a balancer's own counters it outlives
-- the balancer: `GET /v4/account/transfer` still counts this month's traffic of deleted ones.
CREATE TABLE account_transfer (
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    region TEXT NOT NULL,
    month BIGINT NOT NULL,
    bytes_in BIGINT NOT NULL DEFAULT 0,
    bytes_out BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, month, region)
);
