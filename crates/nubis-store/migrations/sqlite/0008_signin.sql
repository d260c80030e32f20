-- Sign-in and delegation: OAuth clients, authorization codes, refresh tokens, passwords,
-- set-password links, sign-in sessions and logins.
CREATE TABLE oauth_clients (
    id TEXT PRIMARY KEY,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    label TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    public INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'active',
    secret_hash TEXT NOT NULL,
    thumbnail_type TEXT,
    thumbnail TEXT,
    created TEXT NOT NULL
);
CREATE INDEX oauth_clients_account ON oauth_clients(account_id, id);

-- Access tokens issued to an OAuth client are rows of `tokens` with kind 'oauth'.
ALTER TABLE tokens ADD COLUMN client_id TEXT;
CREATE INDEX tokens_client ON tokens(client_id);

CREATE TABLE oauth_codes (
    code_hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    redirect_uri TEXT NOT NULL,
    scopes TEXT NOT NULL,
    code_challenge TEXT,
    expiry TEXT NOT NULL
);

CREATE TABLE oauth_refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    scopes TEXT NOT NULL,
    access_token_id BIGINT,
    expiry TEXT NOT NULL
);
CREATE INDEX oauth_refresh_client ON oauth_refresh_tokens(client_id);

ALTER TABLE users ADD COLUMN password_hash TEXT;
ALTER TABLE users ADD COLUMN password_created TEXT;

CREATE TABLE password_links (
    token_hash TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    expiry TEXT NOT NULL
);

CREATE TABLE signin_sessions (
    token_hash TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    expiry TEXT NOT NULL
);

-- Attempts for unknown usernames have no account (they still count for throttling).
CREATE TABLE logins (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT REFERENCES accounts(id),
    user_id BIGINT,
    username TEXT NOT NULL,
    ip TEXT NOT NULL,
    datetime TEXT NOT NULL,
    status TEXT NOT NULL,
    restricted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX logins_account ON logins(account_id, id);
CREATE INDEX logins_username ON logins(username, datetime);
CREATE INDEX logins_ip ON logins(ip, datetime);
