//! Timestamps and ids, in the one format the database uses: ISO-8601 UTC text that sorts as it
//! reads, and UUID v7 ids that sort by creation time. Also the durations commands take.

use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};

pub fn now() -> String {
    stamp(Utc::now())
}

/// `at` in the stored format. SQL compares stored times as text, so every time written must
/// come through here: same length, milliseconds always present, `Z`.
pub fn stamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// A duration as people write one on a command line: a whole number and a unit, `90s`, `5m`,
/// `2h` or `1d`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?} is not a duration such as 90s, 5m, 2h or 1d");
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(bad()),
    };
    number
        .checked_mul(seconds)
        .map(Duration::from_secs)
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_one_number_and_one_unit() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        for bad in [
            "",
            "5",
            "m",
            "5 m",
            "-5m",
            "1.5h",
            "5M",
            "5mins",
            "1h30m",
            "99999999999999999d",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    /// Stored times compare as text: a whole second must still carry its milliseconds.
    #[test]
    fn stamps_have_one_length() {
        let at = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        assert_eq!(stamp(at), "2023-11-14T22:13:20.000Z");
    }
}
