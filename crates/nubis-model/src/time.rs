//! Timestamps: UTC, whole seconds, written `YYYY-MM-DDTHH:MM:SS` in JSON and in the database.

use chrono::{NaiveDateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub const FORMAT: &str = "%Y-%m-%dT%H:%M:%S";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub NaiveDateTime);

impl Timestamp {
    pub fn now() -> Self {
        let t = Utc::now().naive_utc();
        Timestamp(t.with_nanosecond_zero())
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
}
