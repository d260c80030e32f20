-- What an instance is given at creation for its first boot and its metadata service: the user
-- data (base64, as the request carried it) and the SSH keys of root. Removed with the instance.
CREATE TABLE instance_boot_data (
    instance_id BIGINT PRIMARY KEY REFERENCES instances(id) ON DELETE CASCADE,
    user_data TEXT,
    authorized_keys TEXT NOT NULL DEFAULT '[]'
);
