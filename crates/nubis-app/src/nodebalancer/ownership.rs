//! Which balancers this data-plane process serves (docs/dataplane-ownership.md).
//!
//! On PostgreSQL several data-plane processes share one database, and each balancer is served by
//! exactly one of them: the one holding its lease. Every [`RENEW`] (and soon after a balancer
//! appears) a process, in one write transaction: marks itself alive until now + [`EXPIRY`],
//! renews its leases, lets go of the ones it stopped serving at its previous beat, sweeps expired
//! members and leases, and claims unowned balancers up to its fair share (balancers divided by
//! live members, rounded up). Above its share it stops serving the surplus at once and releases
//! those leases at the next beat, so another process never binds a balancer before this one has
//! let go. A process that dies stops renewing: its leases expire after [`EXPIRY`] and the others
//! take them at their next beat.
//!
//! The data plane never sees the leases: the desired state the application publishes is filtered
//! here to the balancers this process holds before it reaches `nubis_dataplane::start`.
//!
//! On SQLite there is one process, and it serves every balancer.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use nubis_model::Result;
use nubis_model::balancer::DesiredState;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::{App, Backend};

/// How often a data-plane process renews its membership and leases.
pub const RENEW: Duration = Duration::from_secs(1);
/// How long a membership or lease lasts without renewal.
pub const EXPIRY: Duration = Duration::from_secs(5);
/// The shortest pause between two beats (a burst of balancer changes makes one beat).
const MIN_GAP: Duration = Duration::from_millis(200);

/// The balancers this process serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Served {
    /// Every balancer (SQLite: the only process).
    All,
    /// The balancers whose lease this process holds (and has not decided to let go).
    Leased(BTreeSet<i64>),
}

impl Served {
    pub fn contains(&self, id: i64) -> bool {
        match self {
            Served::All => true,
            Served::Leased(s) => s.contains(&id),
        }
    }
}

/// This process's part in balancer ownership: the filtered desired state for the data plane and
/// the tasks that keep it.
pub struct Ownership {
    owner: String,
    app: App,
    served: watch::Receiver<Arc<Served>>,
    state: watch::Receiver<Arc<DesiredState>>,
    tasks: Vec<JoinHandle<()>>,
}

/// What one beat decided.
struct Beat {
    /// Leases held after the beat, by id.
    held: Vec<i64>,
    /// How many this process should hold.
    share: usize,
}

impl App {
    /// Starts taking part in balancer ownership as `owner` (unique per process): returns the
    /// desired state to give the data plane, holding only this process's balancers.
    pub fn spawn_balancer_ownership(&self, owner: String) -> Ownership {
        let full = self.balancer_state();
        let leased = self.store().backend() == Backend::Postgres;
        let (served_tx, served) =
            watch::channel(Arc::new(if leased { Served::Leased(BTreeSet::new()) } else { Served::All }));
        let (state_tx, state) = watch::channel(Arc::new(DesiredState::default()));
        let mut tasks = vec![tokio::spawn(filter(full.clone(), served.clone(), state_tx))];
        if leased {
            tasks.push(tokio::spawn(heartbeat(self.clone(), owner.clone(), full, served_tx)));
        }
        tracing::info!(%owner, leased, "balancer ownership started");
        Ownership { owner, app: self.clone(), served, state, tasks }
    }

    /// One heartbeat of `owner`, releasing `releasing` first.
    async fn dataplane_beat(&self, owner: &str, releasing: &[i64]) -> Result<Beat> {
        let expiry = EXPIRY.as_millis() as i64;
        self.write(|tx| {
            Box::pin(async move {
                let now = tx.db_now_ms().await?;
                tx.dataplane_member_beat(owner, now + expiry).await?;
                tx.dataplane_leases_renew(owner, now + expiry).await?;
                tx.dataplane_leases_release(owner, releasing).await?;
                tx.dataplane_sweep(now).await?;
                let members = tx.dataplane_member_count().await?.max(1);
                let balancers = tx.dataplane_balancer_count().await?;
                let share = (balancers + members - 1) / members;
                let mut held = tx.dataplane_leases_of(owner).await?;
                if (held.len() as i64) < share {
                    tx.dataplane_leases_claim(owner, now + expiry, share - held.len() as i64).await?;
                    held = tx.dataplane_leases_of(owner).await?;
                }
                Ok(Beat { held, share: share as usize })
            })
        })
        .await
    }

    /// A clean stop: `owner` leaves and its leases are free at once.
    async fn dataplane_leave(&self, owner: &str) -> Result<()> {
        self.write(|tx| {
            Box::pin(async move {
                tx.dataplane_member_leave(owner).await?;
                Ok(())
            })
        })
        .await
    }
}

/// Keeps membership and leases, and publishes what this process serves.
async fn heartbeat(
    app: App,
    owner: String,
    mut full: watch::Receiver<Arc<DesiredState>>,
    served: watch::Sender<Arc<Served>>,
) {
    let mut releasing: Vec<i64> = Vec::new();
    let mut known: BTreeSet<i64> = BTreeSet::new();
    loop {
        match app.dataplane_beat(&owner, &releasing).await {
            Ok(beat) => {
                let keep: BTreeSet<i64> = beat.held.iter().take(beat.share).copied().collect();
                releasing = beat.held.iter().skip(beat.share).copied().collect();
                if !releasing.is_empty() {
                    tracing::info!(%owner, balancers = ?releasing, "letting go of balancers above this process's share");
                }
                served.send_if_modified(|cur| {
                    let next = Served::Leased(keep);
                    if **cur == next {
                        return false;
                    }
                    tracing::info!(%owner, served = ?next, "balancers served by this process changed");
                    *cur = Arc::new(next);
                    true
                });
            }
            // The database is out of reach: keep serving what this process held (nobody else
            // can take a lease meanwhile unless it reaches the database; see the doc).
            Err(e) => tracing::warn!(%owner, error = %e, "balancer lease heartbeat failed; serving what was held"),
        }
        tokio::time::sleep(MIN_GAP).await;
        // Beat again after RENEW, or sooner when a balancer appears or disappears.
        let wait = tokio::time::sleep(RENEW.saturating_sub(MIN_GAP));
        tokio::pin!(wait);
        loop {
            tokio::select! {
                _ = &mut wait => break,
                r = full.changed() => {
                    if r.is_err() {
                        (&mut wait).await;
                        break;
                    }
                    let ids: BTreeSet<i64> = full.borrow_and_update().balancers.iter().map(|b| b.id).collect();
                    if ids != known {
                        known = ids;
                        break;
                    }
                }
            }
        }
    }
}

/// Publishes the application's desired state restricted to the balancers served here.
async fn filter(
    mut full: watch::Receiver<Arc<DesiredState>>,
    mut served: watch::Receiver<Arc<Served>>,
    out: watch::Sender<Arc<DesiredState>>,
) {
    let mut version = 0u64;
    // Without a heartbeat (SQLite) the served set never changes and its sender is gone at once.
    let mut served_open = true;
    loop {
        let s = Arc::clone(&served.borrow_and_update());
        let f = Arc::clone(&full.borrow_and_update());
        version += 1;
        let balancers = f.balancers.iter().filter(|b| s.contains(b.id)).cloned().collect();
        out.send_replace(Arc::new(DesiredState { version, balancers }));
        tokio::select! {
            r = full.changed() => if r.is_err() { break },
            r = served.changed(), if served_open => served_open = r.is_ok(),
        }
    }
}

impl Ownership {
    /// This process's owner id (as recorded in the leases).
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The desired state of the balancers this process serves.
    pub fn state(&self) -> watch::Receiver<Arc<DesiredState>> {
        self.state.clone()
    }

    /// The ids of the balancers this process serves now.
    pub fn served(&self) -> Vec<i64> {
        self.state.borrow().balancers.iter().map(|b| b.id).collect()
    }

    /// Whether this process holds leases (PostgreSQL) or serves everything (SQLite).
    pub fn leased(&self) -> bool {
        matches!(**self.served.borrow(), Served::Leased(_))
    }

    /// Stops the heartbeat and frees this process's leases (call after the data plane stopped
    /// listening, so the next owner can bind at once).
    pub async fn leave(self) {
        for t in &self.tasks {
            t.abort();
        }
        if self.leased()
            && let Err(e) = self.app.dataplane_leave(&self.owner).await
        {
            tracing::warn!(owner = %self.owner, error = %e, "releasing balancer leases failed; they expire");
        }
    }
}
