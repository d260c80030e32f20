-- Sign-in hardening (docs/decisions.md, "Sign-in hardening").
--
-- Grants: every access and refresh token descends from one grant (a user's approval of one
-- authorization request), so that a replayed code or a reused refresh token revokes the whole
-- family, and the sign-in session that approved it can be ended with the console's sign-out.
CREATE TABLE oauth_grants (
    id TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    session_hash TEXT,
    expiry TEXT NOT NULL
);
CREATE INDEX oauth_grants_client ON oauth_grants(client_id);
CREATE INDEX oauth_grants_user ON oauth_grants(user_id);
CREATE INDEX oauth_grants_expiry ON oauth_grants(expiry);

-- Codes are kept once used (until their grant ends), so that a replay is recognized. Codes and
-- refresh tokens name their client without a foreign key: the console's client is a system
-- client of the configuration, not a row (deleting a client removes what was issued to it
-- explicitly). Codes in flight live minutes and are dropped here.
DROP TABLE oauth_codes;
CREATE TABLE oauth_codes (
    code_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    redirect_uri TEXT NOT NULL,
    scopes TEXT NOT NULL,
    code_challenge TEXT,
    expiry TEXT NOT NULL,
    used INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX oauth_codes_grant ON oauth_codes(grant_id);
CREATE INDEX oauth_codes_client ON oauth_codes(client_id);
CREATE INDEX oauth_codes_user ON oauth_codes(user_id);

-- Refresh tokens: rotated ones are kept (used = 1) until they expire, so that a reuse is
-- recognized. Each existing one becomes a grant of its own.
CREATE TABLE oauth_refresh_tokens_new (
    token_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    scopes TEXT NOT NULL,
    access_token_id BIGINT,
    expiry TEXT NOT NULL,
    used INTEGER NOT NULL DEFAULT 0
);
INSERT INTO oauth_refresh_tokens_new (token_hash, grant_id, client_id, user_id, scopes, access_token_id, expiry)
    SELECT token_hash, 'legacy-' || token_hash, client_id, user_id, scopes, access_token_id, expiry
    FROM oauth_refresh_tokens;
DROP TABLE oauth_refresh_tokens;
ALTER TABLE oauth_refresh_tokens_new RENAME TO oauth_refresh_tokens;
CREATE INDEX oauth_refresh_client ON oauth_refresh_tokens(client_id);
CREATE INDEX oauth_refresh_grant ON oauth_refresh_tokens(grant_id);
CREATE INDEX oauth_refresh_user ON oauth_refresh_tokens(user_id);
CREATE INDEX oauth_refresh_expiry ON oauth_refresh_tokens(expiry);
INSERT INTO oauth_grants (id, client_id, user_id, session_hash, expiry)
    SELECT grant_id, client_id, user_id, NULL, expiry FROM oauth_refresh_tokens;

ALTER TABLE tokens ADD COLUMN grant_id TEXT;
UPDATE tokens SET grant_id = (SELECT r.grant_id FROM oauth_refresh_tokens r WHERE r.access_token_id = tokens.id)
    WHERE kind = 'oauth';
CREATE INDEX tokens_grant ON tokens(grant_id);

-- The console's client belongs to no account: it is a system client defined by the
-- configuration. What was issued to it stays valid.
DELETE FROM oauth_clients WHERE id = 'nubis-console';

-- Wrong passwords are counted per (username, address) and per address.
CREATE INDEX logins_username_ip ON logins(username, ip, datetime);
