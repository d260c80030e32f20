-- Foundation: accounts, users, tokens, grants, events, outbox.
CREATE TABLE accounts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    euuid TEXT NOT NULL UNIQUE,
    parent_id BIGINT REFERENCES accounts(id),
    company TEXT NOT NULL DEFAULT '',
    email TEXT NOT NULL DEFAULT '',
    first_name TEXT NOT NULL DEFAULT '',
    last_name TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL
);

CREATE TABLE users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    username TEXT NOT NULL UNIQUE,
    email TEXT NOT NULL,
    restricted INTEGER NOT NULL DEFAULT 0,
    user_type TEXT NOT NULL DEFAULT 'default',
    is_owner INTEGER NOT NULL DEFAULT 0,
    prefs TEXT NOT NULL DEFAULT '{}',
    global_grants TEXT NOT NULL DEFAULT '{}',
    events_seen_upto BIGINT NOT NULL DEFAULT 0,
    created TEXT NOT NULL
);
CREATE INDEX users_account ON users(account_id, id);

CREATE TABLE tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    scopes TEXT NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL DEFAULT 'pat',
    created TEXT NOT NULL,
    expiry TEXT
);
CREATE INDEX tokens_user ON tokens(user_id, id);

CREATE TABLE grants (
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    entity_id BIGINT NOT NULL,
    permission TEXT NOT NULL,
    PRIMARY KEY (user_id, kind, entity_id)
);
CREATE INDEX grants_entity ON grants(kind, entity_id);

CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    action TEXT NOT NULL,
    created TEXT NOT NULL,
    entity_type TEXT,
    entity_id BIGINT,
    entity_label TEXT,
    entity_url TEXT,
    secondary_type TEXT,
    secondary_id BIGINT,
    secondary_label TEXT,
    secondary_url TEXT,
    status TEXT NOT NULL,
    username TEXT,
    message TEXT,
    grant_kind TEXT,
    grant_id BIGINT,
    subject_user_id BIGINT
);
CREATE INDEX events_account ON events(account_id, id);

CREATE TABLE event_reads (
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    event_id BIGINT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, event_id)
);

CREATE TABLE outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT,
    recipient TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    created TEXT NOT NULL,
    delivered TEXT,
    attempts BIGINT NOT NULL DEFAULT 0,
    last_error TEXT
);
CREATE INDEX outbox_pending ON outbox(delivered, id);
