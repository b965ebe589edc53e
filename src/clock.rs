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
    stored(ts).or_else(|| {
        DateTime::parse_from_rfc3339(ts)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    })
}

/// A time as [`stamp`] writes it (`2026-11-30T04:01:42.123Z`, any number of digits after the
/// seconds, or none), read without chrono's general parser: a search reads one a candidate,
/// and that parser was a fifth of what the candidates' other columns cost. `None` for
/// anything else, which the general parser reads.
fn stored(ts: &str) -> Option<DateTime<Utc>> {
    let b = ts.as_bytes();
    let shape = b.len() >= 20
        && [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')]
            .iter()
            .all(|&(at, c)| b[at] == c);
    if !shape || b.last() != Some(&b'Z') {
        return None;
    }
    let number = |digits: &[u8]| {
        digits.iter().try_fold(0u32, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    let nanos = match &b[19..b.len() - 1] {
        [] => 0,
        [b'.', fraction @ ..] if (1..=9).contains(&fraction.len()) => {
            number(fraction)? * 10u32.pow(9 - fraction.len() as u32)
        }
        _ => return None,
    };
    let date = chrono::NaiveDate::from_ymd_opt(
        number(&b[0..4])? as i32,
        number(&b[5..7])?,
        number(&b[8..10])?,
    )?;
    let time = chrono::NaiveTime::from_hms_nano_opt(
        number(&b[11..13])?,
        number(&b[14..16])?,
        number(&b[17..19])?,
        nanos,
    )?;
    Some(date.and_time(time).and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read without the general parser, a time is what the general parser reads, or left
    /// to it.
    #[test]
    fn stored_times_are_read_as_rfc_3339_reads_them() {
        let general = |ts: &str| {
            DateTime::parse_from_rfc3339(ts)
                .ok()
                .map(|t| t.with_timezone(&Utc))
        };
        let mut fast = 0;
        for ts in [
            "2026-11-30T04:01:42.123Z",
            "2026-11-30T04:01:42Z",
            "2026-11-30T04:01:42.1Z",
            "2026-11-30T04:01:42.123456789Z",
            "2024-02-29T23:59:59.999Z",
            "2023-02-29T00:00:00.000Z",
            "2026-13-01T00:00:00.000Z",
            "2026-11-30T24:00:00.000Z",
            "2026-11-30T23:59:60.000Z",
            "2026-11-30T04:01:42.Z",
            "2026-11-30T04:01:42.1234567890Z",
            "2026-11-30t04:01:42.123z",
            "2026-11-30T04:01:42.123+02:00",
            "2026-11-30 04:01:42.123Z",
            "+026-11-30T04:01:42.123Z",
            "2026-1a-30T04:01:42.123Z",
            "0000-01-01T00:00:00Z",
            "",
        ] {
            assert_eq!(parse_time(ts), general(ts), "{ts}");
            if let Some(at) = stored(ts) {
                assert_eq!(Some(at), general(ts), "{ts}");
                fast += 1;
            }
        }
        assert_eq!(fast, 6);
        let written = now();
        assert!(
            stored(&written).is_some(),
            "what is written is read fast: {written}"
        );
        assert_eq!(stored(&written), general(&written));
    }

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
