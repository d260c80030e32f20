-- Service transfers (spec 3.2, 4.4) and the operators' terms-of-service violation flag.
--
-- A transfer is created by one account (account_id) and accepted by another
-- (receiver_account_id). `status` is what was last written (pending, accepted, completed, failed,
-- canceled, stale); a pending transfer past `expiry` reads as stale even before the sweep writes
-- it. An instance is in at most one transfer that is pending or accepted and not yet complete:
-- `active` is 1 exactly while that holds, and a unique index enforces it.
CREATE TABLE service_transfers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    token TEXT NOT NULL UNIQUE,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    receiver_account_id BIGINT REFERENCES accounts(id),
    status TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    expiry TEXT NOT NULL,
    accepted TEXT,
    completed TEXT,
    -- The `started` accept events of both accounts, finished at completion.
    sender_event_id BIGINT,
    receiver_event_id BIGINT
);
CREATE INDEX service_transfers_account ON service_transfers(account_id, id);
CREATE INDEX service_transfers_receiver ON service_transfers(receiver_account_id, id);
CREATE INDEX service_transfers_status ON service_transfers(status, expiry);

CREATE TABLE service_transfer_instances (
    transfer_id BIGINT NOT NULL REFERENCES service_transfers(id),
    instance_id BIGINT NOT NULL,
    position BIGINT NOT NULL,
    active INTEGER NOT NULL,
    PRIMARY KEY (transfer_id, instance_id)
);
CREATE UNIQUE INDEX service_transfer_instances_active ON service_transfer_instances(instance_id) WHERE active = 1;

-- An active terms-of-service violation of an account (`nubis admin account tos-violation`).
CREATE TABLE account_tos_violations (
    account_id BIGINT PRIMARY KEY REFERENCES accounts(id),
    since TEXT NOT NULL
);
