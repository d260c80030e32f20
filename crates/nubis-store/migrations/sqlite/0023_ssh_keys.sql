-- Public SSH keys of users' profiles (`/v4/profile/sshkeys`); `authorized_users` of instance
-- create and rebuild installs the keys of the users it names.
CREATE TABLE ssh_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL,
    label TEXT NOT NULL,
    ssh_key TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE INDEX ssh_keys_user ON ssh_keys(user_id, id);
