//! The outbox: every message nubis sends is stored in the transaction of the change that causes
//! it, then delivered (to files or SMTP) by the mailer.

use nubis_model::{Result, Timestamp};

use crate::db::Row;
use crate::db::query;
use crate::rows::RowExt;
use crate::{Store, Tx};

#[derive(Debug, Clone)]
pub struct OutboxMessage {
    pub id: i64,
    pub recipient: String,
    pub subject: String,
    pub body: String,
    pub created: Timestamp,
    pub delivered: Option<Timestamp>,
    pub attempts: i64,
    pub last_error: Option<String>,
}

const COLS: &str = "id, recipient, subject, body, created, delivered, attempts, last_error";

fn message(r: &Row) -> Result<OutboxMessage> {
    Ok(OutboxMessage {
        id: r.i64("id")?,
        recipient: r.str("recipient")?,
        subject: r.str("subject")?,
        body: r.str("body")?,
        created: r.ts("created")?,
        delivered: r.opt_ts("delivered")?,
        attempts: r.i64("attempts")?,
        last_error: r.opt_str("last_error")?,
    })
}

impl Tx<'_> {
    pub async fn outbox_insert(
        &mut self,
        account_id: Option<i64>,
        recipient: &str,
        subject: &str,
        body: &str,
    ) -> Result<i64> {
        let id = query(
            "INSERT INTO outbox (account_id, recipient, subject, body, created) VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(account_id)
        .bind(recipient)
        .bind(subject)
        .bind(body)
        .bind(Timestamp::now().to_string())
        .fetch_i64(self.h())
        .await?;
        self.mail_queued = true;
        Ok(id)
    }
}

impl Store {
    /// Messages not delivered yet, oldest first.
    pub async fn outbox_pending(&self, limit: i64) -> Result<Vec<OutboxMessage>> {
        let sql = format!("SELECT {COLS} FROM outbox WHERE delivered IS NULL AND attempts < 10 ORDER BY id LIMIT $1");
        let rows = query(sql).bind(limit).fetch_all(self.r()).await?;
        rows.iter().map(message).collect()
    }

    /// Every message, newest last (operators' listing).
    pub async fn outbox_all(&self) -> Result<Vec<OutboxMessage>> {
        let sql = format!("SELECT {COLS} FROM outbox ORDER BY id");
        let rows = query(sql).fetch_all(self.r()).await?;
        rows.iter().map(message).collect()
    }

    /// Claims a message for delivery; false when another worker has it already.
    pub async fn outbox_claim(&self, id: i64) -> Result<bool> {
        let mut tx = self.begin().await?;
        let n = query("UPDATE outbox SET delivered = $2 WHERE id = $1 AND delivered IS NULL")
            .bind(id)
            .bind(Timestamp::now().to_string())
            .execute(tx.h())
            .await?;
        tx.commit().await?;
        Ok(n == 1)
    }

    /// Gives a claimed message back after a failed delivery.
    pub async fn outbox_failed(&self, id: i64, error: &str) -> Result<()> {
        let mut tx = self.begin().await?;
        query("UPDATE outbox SET delivered = NULL, attempts = attempts + 1, last_error = $2 WHERE id = $1")
            .bind(id)
            .bind(error)
            .execute(tx.h())
            .await?;
        tx.commit().await
    }
}
