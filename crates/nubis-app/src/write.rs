//! The one shape of a write: [`App::write`].
//!
//! An operation that changes state hands `write` a closure that gets the transaction and nothing
//! else to read from. What the write depends on (the current grants, the instances to stop, the
//! balance) it reads there, through `Tx` methods, on the transaction's own connection: SQLite's
//! single writer and PostgreSQL's SERIALIZABLE isolation then make concurrent writes behave as if
//! they ran one after the other, and a serialization failure runs the closure again from the
//! start. Never the read cache, never a read made before the transaction began.
//!
//! What follows a commit runs after it, here, once: the read cache forgets what the transaction
//! changed (the store does that), the mailer wakes when a message was queued, the balancers'
//! desired state is published again when balancers, their configs or nodes changed.
//! Nothing outside the database (the payment gateway, mail delivery, DNS, the instance runtime)
//! is called while the transaction is open: an operation that needs one records its intent,
//! calls after the commit, and settles the outcome in a second write.
//!
//! A test (`tests/write_shape.rs` of this crate) reads the crate's source and fails when a write
//! transaction is opened anywhere else, or when a write closure or a function that takes the
//! transaction reaches for the store's reads.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use nubis_model::{Error, Result};
use nubis_store::{Committed, Turn, Tx};

use crate::App;

/// What a write closure returns: a future borrowing the transaction.
pub(crate) type WriteFuture<'t, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 't>>;

/// The tables whose changes alter the balancers' desired state. (A firewall write changes it only
/// when the firewall protects a balancer: the firewall operations say so themselves, see
/// `App::balancer_firewalls_changed`, so that the many firewalls of instances do not reload it.)
const BALANCER_TABLES: &[&str] = &["nodebalancers", "nodebalancer_configs", "nodebalancer_nodes"];

/// How many times a write runs again after serialization failures before it gives up (503):
/// with [`backoff`], about four seconds of trying. (A unique violation that the operation did not
/// turn into a field error runs it once more.)
const ATTEMPTS: u32 = 40;

/// After this many serialization failures in a row a write runs alone ([`Turn::Alone`]): a
/// transaction that reads and writes many rows (an instance's create) can otherwise lose to
/// smaller concurrent writers again and again.
const ALONE_AFTER: u32 = 3;

/// What a write decided: keep what it did, or keep nothing and answer all the same (an answer
/// that refuses what was asked, once what it depended on was read).
pub(crate) enum Decided<T> {
    Commit(T),
    RollBack(T),
}

impl App {
    /// Runs `op` in a write transaction and commits it; runs it again from the start when the
    /// database reports a serialization failure. `op` gets only the transaction: everything it
    /// depends on is read through it. Events are written by `op` in the same transaction.
    pub(crate) async fn write<'a, T>(
        &'a self,
        mut op: impl for<'t> FnMut(&'t mut Tx<'a>) -> WriteFuture<'t, T>,
    ) -> Result<T>
    where
        T: 'a,
    {
        self.write_or_roll_back(|tx| {
            let f = op(tx);
            Box::pin(async move { f.await.map(Decided::Commit) })
        })
        .await
    }

    /// [`App::write`], for an operation that may decide to keep nothing and still answer.
    pub(crate) async fn write_or_roll_back<'a, T>(
        &'a self,
        mut op: impl for<'t> FnMut(&'t mut Tx<'a>) -> WriteFuture<'t, Decided<T>>,
    ) -> Result<T>
    where
        T: 'a,
    {
        let mut attempt = 0u32;
        let mut unique_again = self.store.backend() == nubis_store::Backend::Postgres;
        loop {
            let outcome = async {
                let turn = if attempt >= ALONE_AFTER { Turn::Alone } else { Turn::Beside };
                let mut tx = self.store.begin_as(turn).await?;
                match op(&mut tx).await? {
                    Decided::Commit(value) => Ok((value, Some(tx.commit_changes().await?))),
                    // Dropping the transaction rolls it back.
                    Decided::RollBack(value) => Ok((value, None)),
                }
            }
            .await;
            match outcome {
                Ok((value, committed)) => {
                    if let Some(c) = committed {
                        self.after_commit(&c);
                    }
                    return Ok(value);
                }
                Err(Error::Retry) if attempt < ATTEMPTS => {
                    attempt += 1;
                    tokio::time::sleep(backoff(attempt)).await;
                }
                Err(Error::Retry) => return Err(Error::Unavailable("too much contention, try again".into())),
                // Under SERIALIZABLE, PostgreSQL may report two concurrent inserts of one key as
                // a unique violation where running them one after the other would not have
                // conflicted: run once more; a real duplicate fails again.
                Err(Error::Unique(_)) if unique_again => unique_again = false,
                Err(e) => return Err(e),
            }
        }
    }

    /// What follows every commit.
    fn after_commit(&self, committed: &Committed) {
        if committed.mail_queued() {
            self.kick_mailer();
        }
        if committed.wrote_any(BALANCER_TABLES) {
            self.balancers_changed();
        }
        if let Some(n) = &self.netns
            && committed.wrote_any(crate::runtime::netns::TABLES)
        {
            n.kick();
        }
    }
}

/// A pause that doubles with the attempt from 2 ms up to 64 ms, plus a random part as long as
/// the fixed one, so that writers that collided spread out instead of colliding again (a
/// transaction touching many small tables, whose scans PostgreSQL locks whole under
/// SERIALIZABLE, can meet many concurrent writers at once).
fn backoff(attempt: u32) -> Duration {
    use rand::RngExt;
    let base = 1u64 << attempt.clamp(1, 6);
    Duration::from_millis(base + rand::rng().random_range(0..=base))
}
