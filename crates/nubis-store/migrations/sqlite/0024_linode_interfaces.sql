-- Linode interfaces (the newer generation, on the instance rather than on a profile): which
-- generation new instances of an account use, and every version of each interface.
CREATE TABLE account_instance_settings (
    account_id BIGINT PRIMARY KEY REFERENCES accounts(id),
    interfaces_for_new_linodes TEXT NOT NULL
);

CREATE TABLE instance_interface_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    interface_id BIGINT NOT NULL,
    instance_id BIGINT NOT NULL,
    version BIGINT NOT NULL,
    interface_data TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE INDEX instance_interface_history_instance ON instance_interface_history(instance_id, id);
