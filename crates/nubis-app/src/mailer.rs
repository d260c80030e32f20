//! The one mailer: every message the spec says is e-mailed is queued in the outbox table inside
//! the transaction of its cause, and delivered from there, by default as `.eml` files in
//! `<data-dir>/outbox/`, or by SMTP when an SMTP URL is configured.

use std::path::PathBuf;
use std::time::Duration;

use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use nubis_model::{Error, Result};
use nubis_store::outbox::OutboxMessage;

use crate::App;

/// Where messages go.
#[derive(Debug, Clone)]
pub enum Transport {
    /// One `.eml` file per message in this directory.
    Files(PathBuf),
    /// An SMTP server URL (`smtp://host:port`, `smtps://...`).
    Smtp(String),
}

const FROM: &str = "nubis <noreply@nubis.invalid>";

fn build(m: &OutboxMessage) -> Result<Message> {
    let from: Mailbox = FROM.parse().map_err(Error::internal)?;
    let to: Mailbox = m.recipient.parse().map_err(|e| Error::Internal(format!("recipient: {e}")))?;
    Message::builder().from(from).to(to).subject(m.subject.clone()).body(m.body.clone()).map_err(Error::internal)
}

async fn deliver(
    transport: &Transport,
    smtp: Option<&AsyncSmtpTransport<Tokio1Executor>>,
    m: &OutboxMessage,
) -> Result<()> {
    let msg = build(m)?;
    match transport {
        Transport::Files(dir) => {
            // Messages carry live set-password links: the directory and the files are readable
            // by their owner only (0700, 0600), from the moment they exist.
            let (dir, id, bytes) = (dir.clone(), m.id, msg.formatted());
            tokio::task::spawn_blocking(move || -> std::io::Result<()> {
                use std::io::Write;
                nubis_store::files::create_private_dir(&dir)?;
                let tmp = dir.join(format!(".{id}.eml.tmp"));
                let mut f = nubis_store::files::create_private_file(&tmp)?;
                f.write_all(&bytes)?;
                std::fs::rename(&tmp, dir.join(format!("{id:08}.eml")))
            })
            .await
            .map_err(Error::internal)?
            .map_err(Error::internal)
        }
        Transport::Smtp(_) => {
            let smtp = smtp.ok_or_else(|| Error::internal("SMTP transport not built"))?;
            smtp.send(msg).await.map(|_| ()).map_err(|e| Error::Internal(format!("smtp: {e}")))
        }
    }
}

impl App {
    /// Starts the delivery loop. It runs until the returned handle is aborted.
    pub fn spawn_mailer(&self, transport: Transport) -> Result<tokio::task::JoinHandle<()>> {
        let smtp = match &transport {
            Transport::Smtp(url) => Some(
                AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
                    .map_err(|e| Error::Internal(format!("smtp url: {e}")))?
                    .timeout(Some(Duration::from_secs(10)))
                    .build(),
            ),
            Transport::Files(_) => None,
        };
        let app = self.clone();
        Ok(tokio::spawn(async move {
            loop {
                if let Err(e) = app.deliver_pending(&transport, smtp.as_ref()).await {
                    tracing::warn!(error = %e, "mail delivery pass failed");
                }
                tokio::select! {
                    _ = app.mail_kick.notified() => {}
                    _ = tokio::time::sleep(Duration::from_secs(5)) => {}
                }
            }
        }))
    }

    async fn deliver_pending(
        &self,
        transport: &Transport,
        smtp: Option<&AsyncSmtpTransport<Tokio1Executor>>,
    ) -> Result<()> {
        for m in self.store.outbox_pending(100).await? {
            if !self.store.outbox_claim(m.id).await? {
                continue;
            }
            match deliver(transport, smtp, &m).await {
                Ok(()) => tracing::info!(message_id = m.id, subject = %m.subject, "mail delivered"),
                Err(e) => {
                    tracing::warn!(message_id = m.id, error = %e, "mail delivery failed");
                    self.store.outbox_failed(m.id, &e.to_string()).await?;
                }
            }
        }
        Ok(())
    }

    /// Wakes the mailer (after a commit that queued messages).
    pub(crate) fn kick_mailer(&self) {
        self.mail_kick.notify_one();
    }
}
