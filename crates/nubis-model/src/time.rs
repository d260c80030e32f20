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
        Timestamp::parse_exact(s.as_bytes())
            .or_else(|| NaiveDateTime::parse_from_str(s, FORMAT).ok())
            .or_else(|| chrono::DateTime::parse_from_rfc3339(s).ok().map(|d| d.naive_utc().with_nanosecond_zero()))
            .map(Timestamp)
    }
    /// `YYYY-MM-DDTHH:MM:SS` exactly, read without a format interpreter (every row read from the
    /// database carries timestamps in this form, so this is on the path of every list).
    fn parse_exact(b: &[u8]) -> Option<NaiveDateTime> {
        if b.len() != 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| {
            b[r].iter().try_fold(0u32, |n, c| c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0')))
        };
        let date = chrono::NaiveDate::from_ymd_opt(num(0..4)? as i32, num(5..7)?, num(8..10)?)?;
        date.and_hms_opt(num(11..13)?, num(14..16)?, num(17..19)?)
    }

    /// The `YYYY-MM-DDTHH:MM:SS` text, built without the formatting machinery.
    fn text(&self) -> [u8; 19] {
        use chrono::{Datelike, Timelike};
        let (d, t) = (self.0.date(), self.0.time());
        let mut out = *b"0000-00-00T00:00:00";
        let mut put = |at: usize, width: usize, mut v: u32| {
            for i in (at..at + width).rev() {
                out[i] = b'0' + (v % 10) as u8;
                v /= 10;
            }
        };
        put(0, 4, d.year().clamp(0, 9999) as u32);
        put(5, 2, d.month());
        put(8, 2, d.day());
        put(11, 2, t.hour());
        put(14, 2, t.minute());
        put(17, 2, t.second());
        out
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
        let text = self.text();
        f.write_str(std::str::from_utf8(&text).map_err(|_| std::fmt::Error)?)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self.text();
        s.serialize_str(std::str::from_utf8(&text).map_err(serde::ser::Error::custom)?)
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
    fn reads_and_writes_the_exact_form_and_refuses_near_misses() {
        for text in ["2026-02-28T23:59:59", "0999-01-01T00:00:00", "2024-02-29T12:00:00"] {
            assert_eq!(Timestamp::parse(text).unwrap().to_string(), text);
        }
        for bad in ["2026-02-30T00:00:00", "2026-13-01T00:00:00", "2026-01-01T24:00:00", "2026-01-01 00:00:00"] {
            assert_eq!(Timestamp::parse(bad), None, "{bad}");
        }
        // RFC 3339 with an offset is still read (and normalized to UTC).
        assert_eq!(Timestamp::parse("2026-01-01T01:00:00+01:00").unwrap().to_string(), "2026-01-01T00:00:00");
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
