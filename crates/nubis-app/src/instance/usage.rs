//! An instance's usage: network transfer this month and in a past month, and its statistics
//! (CPU, IO, network) over the last day or a month. No traffic passes through an instance in
//! this cloud's runtimes, so the readings are zero, at the reference's granularity, for the time
//! the instance existed.

use chrono::{Datelike, NaiveDate};
use nubis_model::instance_profile::{
    InstanceStats, InstanceTransfer, InstanceTransferMonth, IoStats, NetStats, Series,
};
use nubis_model::{Error, Result, Timestamp};

use nubis_store::instances::InstanceRow;

use crate::App;
use crate::auth::{Actor, Op};

/// Readings of the last day are 5 minutes apart, of a month an hour apart.
const DAY_STEP_SECS: i64 = 300;
const MONTH_STEP_SECS: i64 = 3600;

/// Zero readings every `step` seconds from `from` to `to` (unix seconds), as `[ms, value]`.
fn zeros(from: i64, to: i64, step: i64) -> Series {
    let first = from.div_euclid(step) * step + if from.rem_euclid(step) == 0 { 0 } else { step };
    (0..).map(|k| first + k * step).take_while(|t| *t <= to).map(|t| [(t * 1000) as f64, 0.0]).collect()
}

fn net(s: &Series) -> NetStats {
    NetStats { inbound: s.clone(), outbound: s.clone(), private_in: s.clone(), private_out: s.clone() }
}

fn stats(title: String, s: Series) -> InstanceStats {
    InstanceStats {
        title,
        cpu: s.clone(),
        io: IoStats { io: s.clone(), swap: s.clone() },
        netv4: net(&s),
        netv6: net(&s),
    }
}

/// The first and last moment (unix seconds) of a month that is now or past; a month to come is
/// a 400 on `month`.
fn month_bounds(year: i64, month: i64, now: Timestamp) -> Result<(i64, i64)> {
    let bad = || Error::invalid("month", "Must be a month from 1 to 12 of the current month or before");
    let start = u32::try_from(month)
        .ok()
        .and_then(|m| i32::try_from(year).ok().and_then(|y| NaiveDate::from_ymd_opt(y, m, 1)))
        .ok_or_else(bad)?;
    let today = now.0.date();
    if start > today {
        return Err(Error::invalid("month", "The month has not begun yet"));
    }
    let next = if start.month() == 12 {
        NaiveDate::from_ymd_opt(start.year() + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(start.year(), start.month() + 1, 1)
    }
    .ok_or_else(bad)?;
    let secs = |d: NaiveDate| d.and_hms_opt(0, 0, 0).map(|t| t.and_utc().timestamp()).unwrap_or_default();
    Ok((secs(start), (secs(next) - 1).min(now.unix())))
}

impl App {
    pub async fn instance_transfer_get(&self, actor: &Actor, id: i64) -> Result<InstanceTransfer> {
        let i = self.lookup_for::<InstanceRow>(actor, Op::InstanceTransferGet, id).await?.into_inner();
        let quota = self.catalog.instance_type(&i.kind).map_or(0, |t| t.transfer);
        Ok(InstanceTransfer { billable: 0, quota, used: 0 })
    }

    pub async fn instance_transfer_month(
        &self,
        actor: &Actor,
        id: i64,
        year: i64,
        month: i64,
    ) -> Result<InstanceTransferMonth> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceTransferMonth, id).await?.into_inner();
        month_bounds(year, month, Timestamp::now())?;
        Ok(InstanceTransferMonth { bytes_in: 0, bytes_out: 0, bytes_total: 0 })
    }

    /// The last 24 hours (since the instance was created, if later), every 5 minutes.
    pub async fn instance_stats_get(&self, actor: &Actor, id: i64) -> Result<InstanceStats> {
        let i = self.lookup_for::<InstanceRow>(actor, Op::InstanceStatsGet, id).await?.into_inner();
        let now = Timestamp::now().unix();
        let from = (now - 86_400).max(i.created.unix());
        Ok(stats(format!("{} - Last 24 Hours", i.label), zeros(from, now, DAY_STEP_SECS)))
    }

    /// A month (the current one: up to now), every hour the instance existed.
    pub async fn instance_stats_month(&self, actor: &Actor, id: i64, year: i64, month: i64) -> Result<InstanceStats> {
        let i = self.lookup_for::<InstanceRow>(actor, Op::InstanceStatsMonth, id).await?.into_inner();
        let (from, to) = month_bounds(year, month, Timestamp::now())?;
        let from = from.max(i.created.unix());
        Ok(stats(format!("{} - {year}/{month:02}", i.label), zeros(from, to, MONTH_STEP_SECS)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_fall_on_the_step_within_the_period() {
        let s = zeros(601, 1500, 300);
        assert_eq!(s.iter().map(|p| p[0] as i64 / 1000).collect::<Vec<_>>(), [900, 1200, 1500]);
        assert!(zeros(10, 5, 300).is_empty());
    }

    #[test]
    fn months_are_past_or_current() {
        let now = Timestamp::parse("2025-03-10T12:00:00").unwrap();
        let (a, b) = month_bounds(2025, 2, now).unwrap();
        assert_eq!(b - a + 1, 28 * 86_400);
        let (_, b) = month_bounds(2025, 3, now).unwrap();
        assert_eq!(b, now.unix());
        assert!(month_bounds(2025, 4, now).is_err());
        assert!(month_bounds(2025, 13, now).is_err());
    }
}
