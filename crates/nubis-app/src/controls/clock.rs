//! The one clock: every time rule reads `nubis_model::Timestamp::now()`, the system time plus an
//! offset the operator moves here. Moving it forward runs, in order, what the passage of time
//! causes in each area (the hooks of [`TIME_MOVED`]), so an invoice of a month that closed or a
//! transfer that expired appears at once.

use std::future::Future;
use std::pin::Pin;

use nubis_model::time::{advance_clock, clock_offset, set_clock_offset};
use nubis_model::{Error, Result, Timestamp};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Operator;
use crate::App;

/// `GET /nubis/v1/clock`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Clock {
    /// Now, by the clock every rule reads.
    pub now: Timestamp,
    /// Seconds between that clock and the system time.
    pub offset_seconds: i64,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockAdvance {
    /// Seconds to move the clock forward (1 or more).
    #[schema(required = true, schema_with = advance_schema)]
    pub seconds: Option<i64>,
    /// `false`: move the clock without running what time passing causes (the sweeps), to see
    /// what reads answer before a sweep comes; `true` when omitted.
    pub run_hooks: Option<bool>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockSet {
    /// The new time, not before the system time (`YYYY-MM-DDTHH:MM:SS`).
    #[schema(required = true, value_type = String, pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$")]
    pub now: Option<String>,
}

pub type HookFuture<'a> = Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>>;

/// What the passage of time causes in one area: runs after the clock moved forward, reads the
/// time with `Timestamp::now()` and does what became due (idempotent: running it twice does
/// nothing the second time).
pub type TimeHook = for<'a> fn(&'a App) -> HookFuture<'a>;

/// The hooks run, in this order, every time the clock moves forward. One line per area, e.g.
/// `("billing: close due invoices", |app| Box::pin(async move { app.invoices_close_due().await.map(drop) })),`
pub const TIME_MOVED: &[(&str, TimeHook)] = &[
    ("billing: close the invoices of months that ended", |app| {
        Box::pin(async move { app.billing_close_due(Timestamp::now()).await.map(drop) })
    }),
    ("billing: settle payments left pending, give back the refunds due", |app| {
        Box::pin(async move { app.settle_round().await })
    }),
    ("transfers: expire the pending transfers past their expiry", |app| {
        Box::pin(async move { app.transfers_expire_due(Timestamp::now()).await.map(drop) })
    }),
    ("backups: take the automatic backups due", |app| {
        Box::pin(async move { app.backups_take_due(Timestamp::now()).await.map(drop) })
    }),
    ("events: forget the events past the window", |app| {
        Box::pin(async move { app.events_prune_due().await.map(drop) })
    }),
];

const MAX_ADVANCE_SECS: i64 = 100 * 366 * 86_400;

impl App {
    pub fn clock(&self) -> Clock {
        Clock { now: Timestamp::now(), offset_seconds: clock_offset() }
    }

    pub fn clock_get(&self, _op: &Operator) -> Clock {
        self.clock()
    }

    /// Registers one more hook run when the clock moves forward (after those of [`TIME_MOVED`]).
    pub fn on_time_moved(&self, name: &str, hook: TimeHook) {
        self.controls.hooks.write().unwrap_or_else(|e| e.into_inner()).push((name.to_string(), hook));
    }

    /// Moves the clock forward by `seconds`, then runs what time passing causes (unless
    /// `run_hooks` is false).
    pub async fn clock_advance(&self, _op: &Operator, input: ClockAdvance) -> Result<Clock> {
        let seconds = match input.seconds {
            None => return Err(Error::invalid("seconds", "Required")),
            Some(s) if !(1..=MAX_ADVANCE_SECS).contains(&s) => {
                return Err(Error::invalid("seconds", format!("Must be from 1 to {MAX_ADVANCE_SECS}")));
            }
            Some(s) => s,
        };
        let _one_at_a_time = self.controls.clock_lock.lock().await;
        advance_clock(seconds);
        // The clock as moved (the hooks below may take a moment of real time).
        let moved = self.clock();
        if input.run_hooks != Some(false) {
            self.run_time_hooks().await?;
        }
        Ok(moved)
    }

    /// Sets the clock to a time not before the system time, then runs what time passing causes.
    pub async fn clock_set(&self, _op: &Operator, input: ClockSet) -> Result<Clock> {
        let Some(text) = input.now.as_deref() else { return Err(Error::invalid("now", "Required")) };
        let Some(t) = Timestamp::parse(text) else {
            return Err(Error::invalid("now", "Must be a date-time such as 2030-01-01T00:00:00"));
        };
        let offset = t.unix() - Timestamp::real_now().unix();
        if offset < 0 {
            return Err(Error::invalid("now", "Must not be before the system time (reset the clock instead)"));
        }
        if offset > MAX_ADVANCE_SECS {
            return Err(Error::invalid("now", "Too far in the future"));
        }
        let _one_at_a_time = self.controls.clock_lock.lock().await;
        let forward = offset > clock_offset();
        set_clock_offset(offset);
        let set = self.clock();
        if forward {
            self.run_time_hooks().await?;
        }
        Ok(set)
    }

    /// Back to the system time.
    pub async fn clock_reset(&self, _op: &Operator) -> Clock {
        let _one_at_a_time = self.controls.clock_lock.lock().await;
        set_clock_offset(0);
        self.clock()
    }

    /// Runs every hook; each one's failure is reported after the others ran.
    async fn run_time_hooks(&self) -> Result<()> {
        let hooks: Vec<(String, TimeHook)> = self.controls.hooks.read().unwrap_or_else(|e| e.into_inner()).clone();
        let mut failed = Vec::new();
        for (name, hook) in &hooks {
            if let Err(e) = hook(self).await {
                tracing::error!(hook = %name, error = %e, "a time hook failed");
                failed.push(format!("{name}: {e}"));
            }
        }
        if failed.is_empty() { Ok(()) } else { Err(Error::Internal(failed.join("; "))) }
    }
}

fn advance_schema() -> utoipa::openapi::Schema {
    nubis_model::schema::schema(nubis_model::schema::int(1, MAX_ADVANCE_SECS))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::controls::Operator;

    static RAN: AtomicUsize = AtomicUsize::new(0);

    fn count(_app: &App) -> HookFuture<'_> {
        Box::pin(async {
            RAN.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    }

    #[tokio::test]
    async fn moving_the_clock_forward_runs_the_time_hooks() {
        let store = nubis_store::Store::open("sqlite::memory:", &Default::default()).await.unwrap();
        let (app, _) = App::new(store, Default::default()).unwrap();
        app.on_time_moved("count", count);
        // The form an area's line in TIME_MOVED takes.
        app.on_time_moved("closure", |app| {
            Box::pin(async move { app.healthy().await.then_some(()).ok_or(nubis_model::Error::internal("down")) })
        });
        let op = Operator { _private: () };
        app.clock_advance(&op, ClockAdvance { seconds: Some(1), ..Default::default() }).await.unwrap();
        assert_eq!(RAN.load(Ordering::SeqCst), 1);
        // Resetting goes back, which causes nothing.
        app.clock_reset(&op).await;
        assert_eq!(RAN.load(Ordering::SeqCst), 1);
        assert!(app.clock_advance(&op, ClockAdvance { seconds: Some(0), ..Default::default() }).await.is_err());
        app.store().close().await;
    }
}
