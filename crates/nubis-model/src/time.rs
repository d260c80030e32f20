//! Timestamps: UTC, whole seconds, written `YYYY-MM-DDTHH:MM:SS` in JSON and in the database.

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{NaiveDateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub const FORMAT: &str = "%Y-%m-%dT%H:%M:%S";

/// Seconds added to the system time by [`Timestamp::now`]: the one clock every time rule reads.
/// Zero unless the test controls move it (`/nubis/v1/clock`). One per process: each
/// `nubis serve` is its own process.
static CLOCK_OFFSET_SECS: AtomicI64 = AtomicI64::new(0);

/// The clock's offset from the system time, in seconds.
pub fn clock_offset() -> i64 {
    CLOCK_OFFSET_SECS.load(Ordering::SeqCst)
}

/// Sets the clock's offset from the system time (0: real time again).
pub fn set_clock_offset(secs: i64) {
    CLOCK_OFFSET_SECS.store(secs, Ordering::SeqCst);
}

/// Adds to the clock's offset; returns the new offset.
pub fn advance_clock(secs: i64) -> i64 {
    CLOCK_OFFSET_SECS.fetch_add(secs, Ordering::SeqCst).saturating_add(secs)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub NaiveDateTime);

impl Timestamp {
    /// Now, by the one clock (the system time plus the test controls' offset).
    pub fn now() -> Self {
        Timestamp::real_now().plus_seconds(clock_offset())
    }
    /// Now by the system time, ignoring the test controls' offset (only for what is not a rule:
    /// logs, metrics).
    pub fn real_now() -> Self {
        Timestamp(Utc::now().naive_utc().with_nanosecond_zero())
    }
    pub fn parse(s: &str) -> Option<Self> {
        NaiveDateTime::parse_from_str(s, FORMAT)
            .ok()
            .or_else(|| chrono::DateTime::parse_from_rfc3339(s).ok().map(|d| d.naive_utc().with_nanosecond_zero()))
            .map(Timestamp)
    }
    pub fn minus_days(self, days: i64) -> Self {
        Timestamp(self.0 - chrono::Duration::days(days))
    }
    pub fn plus_seconds(self, secs: i64) -> Self {
        Timestamp(self.0 + chrono::Duration::seconds(secs))
    }
    pub fn unix(self) -> i64 {
        self.0.and_utc().timestamp()
    }
}

trait ZeroNanos {
    fn with_nanosecond_zero(self) -> Self;
}
impl ZeroNanos for NaiveDateTime {
    fn with_nanosecond_zero(self) -> Self {
        use chrono::Timelike;
        self.with_nanosecond(0).unwrap_or(self)
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use chrono::{Datelike, Timelike};
        let (d, t) = (self.0.date(), self.0.time());
        write!(f, "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", d.year(), d.month(), d.day(), t.hour(), t.minute(), t.second())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Timestamp::parse(&s).ok_or_else(|| serde::de::Error::custom("expected a date-time YYYY-MM-DDTHH:MM:SS"))
    }
}

impl utoipa::PartialSchema for Timestamp {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            // The API's time values have no offset (UTC is implied), so they are not RFC 3339
            // `date-time`s: a pattern says exactly what is sent.
            .pattern(Some(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$"))
            .description(Some("A UTC date and time, YYYY-MM-DDTHH:MM:SS"))
            .examples([serde_json::json!("2026-01-01T00:01:01")])
            .into()
    }
}
impl utoipa::ToSchema for Timestamp {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_whole_seconds() {
        let t = Timestamp::parse("2018-01-01T00:01:01").unwrap();
        assert_eq!(t.to_string(), "2018-01-01T00:01:01");
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"2018-01-01T00:01:01\"");
        let now = Timestamp::now().to_string();
        assert_eq!(now.len(), 19, "{now}");
    }

    #[test]
    fn the_clock_moves_by_its_offset() {
        let real = Timestamp::real_now();
        set_clock_offset(86_400);
        let moved = Timestamp::now();
        assert_eq!(advance_clock(60), 86_460);
        set_clock_offset(0);
        let d = moved.unix() - real.unix();
        assert!((86_400..86_402).contains(&d), "{d}");
    }
}
