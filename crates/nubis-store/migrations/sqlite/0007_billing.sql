-- Billing (issue 11): the account's billing record, payment methods, payments, metering of
-- services, invoices with their items, promotions and maintenance windows. Money is integer
-- cents; timestamps are TEXT `YYYY-MM-DDTHH:MM:SS` (UTC), which sort as they compare.

-- One row per account, made on the account's first billing write (reads default it).
CREATE TABLE account_billing (
    account_id BIGINT PRIMARY KEY REFERENCES accounts(id),
    address_1 TEXT NOT NULL DEFAULT '',
    address_2 TEXT NOT NULL DEFAULT '',
    city TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT '',
    zip TEXT NOT NULL DEFAULT '',
    country TEXT NOT NULL DEFAULT '',
    phone TEXT NOT NULL DEFAULT '',
    tax_id TEXT NOT NULL DEFAULT '',
    -- What the account owes, in cents (negative: credit).
    balance BIGINT NOT NULL DEFAULT 0,
    -- Usage before this moment is invoiced.
    billed_through TEXT NOT NULL,
    backups_enabled INTEGER NOT NULL DEFAULT 0,
    network_helper INTEGER NOT NULL DEFAULT 1,
    managed INTEGER NOT NULL DEFAULT 0,
    canceled TEXT,
    cancel_comments TEXT
);

CREATE TABLE payment_methods (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    type TEXT NOT NULL,
    card_type TEXT NOT NULL,
    last_four TEXT NOT NULL,
    expiry_month BIGINT NOT NULL,
    expiry_year BIGINT NOT NULL,
    gateway_ref TEXT NOT NULL,
    is_default INTEGER NOT NULL DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 1,
    created TEXT NOT NULL,
    removed TEXT
);
CREATE INDEX payment_methods_account ON payment_methods(account_id, active, id);
CREATE INDEX payment_methods_added ON payment_methods(account_id, created);
-- At most one default among an account's active methods.
CREATE UNIQUE INDEX payment_methods_one_default ON payment_methods(account_id) WHERE is_default = 1 AND active = 1;

CREATE TABLE payments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    payment_method_id BIGINT NOT NULL REFERENCES payment_methods(id),
    usd BIGINT NOT NULL,
    date TEXT NOT NULL,
    gateway_ref TEXT NOT NULL
);
CREATE INDEX payments_account ON payments(account_id, id);

-- A metered service on one account from `started` until `ended` (open while NULL).
CREATE TABLE meters (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    service_type TEXT NOT NULL,
    service_id BIGINT NOT NULL,
    label TEXT NOT NULL,
    region TEXT,
    -- Prices in millionths of a dollar.
    hourly_micro BIGINT NOT NULL,
    monthly_micro BIGINT NOT NULL,
    started TEXT NOT NULL,
    ended TEXT
);
CREATE INDEX meters_account ON meters(account_id, started);
CREATE INDEX meters_service ON meters(service_type, service_id, ended);

CREATE TABLE invoices (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    date TEXT NOT NULL,
    label TEXT NOT NULL,
    period_from TEXT NOT NULL,
    period_to TEXT NOT NULL,
    subtotal BIGINT NOT NULL,
    tax BIGINT NOT NULL,
    total BIGINT NOT NULL,
    UNIQUE (account_id, period_from)
);
CREATE INDEX invoices_account ON invoices(account_id, id);

CREATE TABLE invoice_items (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    invoice_id BIGINT NOT NULL REFERENCES invoices(id),
    label TEXT NOT NULL,
    from_ts TEXT NOT NULL,
    to_ts TEXT NOT NULL,
    quantity BIGINT NOT NULL,
    unit_price TEXT NOT NULL,
    amount BIGINT NOT NULL,
    tax BIGINT NOT NULL,
    total BIGINT NOT NULL,
    region TEXT,
    type TEXT NOT NULL
);
CREATE INDEX invoice_items_invoice ON invoice_items(invoice_id, id);

-- Promo codes the operator offers.
CREATE TABLE promo_codes (
    code TEXT PRIMARY KEY,
    credit BIGINT NOT NULL,
    monthly_cap BIGINT NOT NULL,
    expires TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL
);

-- The promo credit of an account: one per account, ever.
CREATE TABLE account_promotions (
    account_id BIGINT PRIMARY KEY REFERENCES accounts(id),
    code TEXT NOT NULL,
    credit BIGINT NOT NULL,
    remaining BIGINT NOT NULL,
    monthly_cap BIGINT NOT NULL,
    expires TEXT NOT NULL,
    description TEXT NOT NULL,
    added TEXT NOT NULL
);

-- Maintenance windows operators schedule for instances.
CREATE TABLE maintenance (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    instance_id BIGINT NOT NULL,
    type TEXT NOT NULL,
    reason TEXT NOT NULL,
    status TEXT NOT NULL,
    when_ts TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE INDEX maintenance_account ON maintenance(account_id, when_ts);
