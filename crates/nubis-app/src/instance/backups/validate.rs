//! The checks of the Backup service's requests that need no database: the schedule of an
//! instance update, a snapshot's label, a restore's target; and the schedule nubis picks when
//! none was chosen.

use nubis_model::Problems;
use nubis_model::validate::len_between;
use serde::Deserialize;
use utoipa::ToSchema;

/// The days a weekly backup may be preferred on (`Scheduling`: let the service choose).
pub(crate) const DAYS: &[&str] = &["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
/// The two-hour windows (UTC) a backup may be taken in.
pub(crate) const WINDOWS: &[&str] = &["W0", "W2", "W4", "W6", "W8", "W10", "W12", "W14", "W16", "W18", "W20", "W22"];
/// What the record shows before the service has chosen; sent back, it changes nothing.
pub(crate) const SCHEDULING: &str = "Scheduling";

/// `POST .../backups`: take a snapshot.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct SnapshotRequest {
    /// 1-255 characters.
    #[schema(required = true, value_type = String, min_length = 1, max_length = 255)]
    pub label: Option<String>,
}

/// `POST .../backups/{backup_id}/restore`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct RestoreRequest {
    /// The instance to restore to (this one or another of the account in the same region);
    /// `linode_id` in the hosted API's names.
    #[schema(required = true, value_type = i64)]
    pub instance_id: Option<i64>,
    /// Delete the target's disks and profiles first; without it, the backup's disks must fit
    /// beside the target's.
    pub overwrite: Option<bool>,
}

/// A snapshot's label, checked.
pub(crate) fn snapshot_label(input: &SnapshotRequest) -> Result<String, nubis_model::Error> {
    let mut p = Problems::new();
    match &input.label {
        None => p.add("label", "A label is required for a snapshot"),
        Some(l) => p.check(len_between(l, 1, 255), "label", "Must be 1-255 characters"),
    }
    p.finish()?;
    Ok(input.label.clone().unwrap_or_default())
}

/// The schedule an update asks for: each of `day` and `window` when given (and not
/// `Scheduling`), checked against the hosted API's enums.
pub(crate) fn check_schedule(
    p: &mut Problems,
    day: Option<&str>,
    window: Option<&str>,
) -> (Option<String>, Option<String>) {
    let day = day.filter(|d| *d != SCHEDULING);
    let window = window.filter(|w| *w != SCHEDULING);
    if let Some(d) = day {
        p.check(DAYS.contains(&d), "backups.schedule.day", format!("Must be one of {}", DAYS.join(", ")));
    }
    if let Some(w) = window {
        p.check(WINDOWS.contains(&w), "backups.schedule.window", format!("Must be one of {}", WINDOWS.join(", ")));
    }
    (day.map(str::to_string), window.map(str::to_string))
}

/// The schedule the service picks for an instance that has none: spread over the week and the
/// day by the instance's id.
pub(crate) fn chosen_schedule(instance_id: i64) -> (&'static str, &'static str) {
    let i = instance_id.unsigned_abs() as usize;
    (DAYS[i % DAYS.len()], WINDOWS[(i / DAYS.len()) % WINDOWS.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_follow_the_enums() {
        let mut p = Problems::new();
        assert_eq!(check_schedule(&mut p, Some("Monday"), Some("W10")), (Some("Monday".into()), Some("W10".into())));
        assert_eq!(check_schedule(&mut p, Some(SCHEDULING), None), (None, None));
        assert!(p.finish().is_ok());
        let mut p = Problems::new();
        check_schedule(&mut p, Some("monday"), Some("W3"));
        assert!(p.finish().is_err());
        let (d, w) = chosen_schedule(12345);
        assert!(DAYS.contains(&d) && WINDOWS.contains(&w));
    }
}

/// The start of the newest occurrence, at or before `now`, of a daily two-hour window `W<h>`
/// (UTC hour `h`); `None` for a window that is not one.
pub(crate) fn latest_window_start(now: nubis_model::Timestamp, window: &str) -> Option<nubis_model::Timestamp> {
    if !WINDOWS.contains(&window) {
        return None;
    }
    let hour: i64 = window.trim_start_matches('W').parse().ok()?;
    let day = now.unix().div_euclid(86_400) * 86_400;
    let mut start = day + hour * 3_600;
    if start > now.unix() {
        start -= 86_400;
    }
    Some(now.plus_seconds(start - now.unix()))
}

#[cfg(test)]
mod window_tests {
    use super::*;
    use nubis_model::Timestamp;

    fn ts(s: &str) -> Timestamp {
        Timestamp::parse(s).unwrap()
    }

    #[test]
    fn the_latest_window_is_today_once_it_began_else_yesterday() {
        assert_eq!(latest_window_start(ts("2030-01-02T05:00:00"), "W4"), Some(ts("2030-01-02T04:00:00")));
        assert_eq!(latest_window_start(ts("2030-01-02T04:00:00"), "W4"), Some(ts("2030-01-02T04:00:00")));
        assert_eq!(latest_window_start(ts("2030-01-02T03:59:59"), "W4"), Some(ts("2030-01-01T04:00:00")));
        assert_eq!(latest_window_start(ts("2030-01-02T00:00:00"), "W0"), Some(ts("2030-01-02T00:00:00")));
        assert_eq!(latest_window_start(ts("2030-01-02T23:00:00"), "W22"), Some(ts("2030-01-02T22:00:00")));
        assert_eq!(latest_window_start(ts("2030-01-02T05:00:00"), "W5"), None);
        assert_eq!(latest_window_start(ts("2030-01-02T05:00:00"), "Scheduling"), None);
    }
}
