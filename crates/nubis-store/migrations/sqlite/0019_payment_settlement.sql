-- Payments are recorded before the payment gateway is called (`pending`, with the key that makes
-- the gateway charge once) and confirmed after it answered; only confirmed payments are shown.
-- Charges to give back wait in `gateway_refunds` until the gateway takes them.
ALTER TABLE payments ADD COLUMN status TEXT NOT NULL DEFAULT 'confirmed';
ALTER TABLE payments ADD COLUMN purpose TEXT NOT NULL DEFAULT 'payment';
ALTER TABLE payments ADD COLUMN charge_key TEXT;
CREATE INDEX payments_pending ON payments(date) WHERE status = 'pending';

CREATE TABLE gateway_refunds (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL,
    charge_ref TEXT NOT NULL,
    cents BIGINT NOT NULL,
    reason TEXT NOT NULL,
    created TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt TEXT NOT NULL,
    last_error TEXT,
    done TEXT
);
CREATE INDEX gateway_refunds_due ON gateway_refunds(next_attempt) WHERE done IS NULL;
