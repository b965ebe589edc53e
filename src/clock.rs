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
/// `2h`, `1d`, `1w`, `3mo` or `1y`. The one parser of every duration a command takes.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    duration(text).unwrap_or_else(|| {
        Err(format!(
            "{text:?} is not a duration such as 90s, 5m, 2h, 1d, 1w, 3mo or 1y"
        ))
    })
}

/// `text` as a duration: `None` when it is not written as one, an error when it is but no
/// clock could count that far. `m` is minutes (`min` too), as in `sleep` and systemd; a month
/// (`mo`) is 30 days and a year (`y`) 365, whatever the calendar says.
pub fn duration(text: &str) -> Option<Result<Duration, String>> {
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let seconds: u64 = match unit {
        "s" => 1,
        "m" | "min" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        "mo" => 30 * 86_400,
        "y" => 365 * 86_400,
        _ => return None,
    };
    if number.is_empty() {
        return None;
    }
    // Only digits: parsing fails only past u64.
    Some(
        number
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(seconds))
            .map(Duration::from_secs)
            .ok_or_else(|| format!("{text} is longer than any duration claude-mem can count")),
    )
}

pub fn parse_time(ts: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(ts)
        .ok()
        .map(|t| t.with_timezone(&Utc))
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
        assert_eq!(parse_duration("5min"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("2w"), Ok(Duration::from_secs(14 * 86_400)));
        assert_eq!(parse_duration("1mo"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_duration("1y"), Ok(Duration::from_secs(365 * 86_400)));
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
            "1M",
            "1yr",
            "99999999999999999d",
            "99999999999999999999999s",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert!(
            parse_duration("99999999999999999d")
                .unwrap_err()
                .contains("longer than any duration")
        );
    }

    /// Stored times compare as text: a whole second must still carry its milliseconds.
    #[test]
    fn stamps_have_one_length() {
        let at = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        assert_eq!(stamp(at), "2023-11-14T22:13:20.000Z");
    }
}
