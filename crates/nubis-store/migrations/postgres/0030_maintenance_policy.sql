-- Each account's default maintenance policy for new instances (`maintenance_policy` of the
-- account settings); no row: the default policy (`linode/migrate`).
CREATE TABLE account_maintenance_settings (
    account_id BIGINT PRIMARY KEY,
    maintenance_policy TEXT NOT NULL
);
