-- VPCs and their subnets. Subnet ranges are also kept as integers (first and last address) so
-- that the overlap check is a plain comparison on both backends.
CREATE TABLE vpcs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    label TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    region TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    UNIQUE (account_id, label)
);

CREATE TABLE vpc_subnets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    vpc_id BIGINT NOT NULL REFERENCES vpcs(id),
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    label TEXT NOT NULL,
    ipv4 TEXT NOT NULL,
    first_v4 BIGINT NOT NULL,
    last_v4 BIGINT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    UNIQUE (vpc_id, label)
);
CREATE INDEX vpc_subnets_vpc ON vpc_subnets(vpc_id, first_v4);
CREATE INDEX vpc_subnets_account ON vpc_subnets(account_id, id);
