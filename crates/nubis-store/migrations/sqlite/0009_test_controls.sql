-- Test controls: operator tokens (the only tokens the control API accepts) and settings of the
-- controls kept across snapshots, restores and resets (the bootstrap token's hash).
CREATE TABLE operator_tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label TEXT NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL
);

CREATE TABLE control_settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
