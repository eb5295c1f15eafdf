//! `duration` literals, as Cassandra's `cql3.Duration.from` reads them and `toString` writes
//! them.
//!
//! Three forms, each optionally preceded by `-`:
//!
//! - units: `12h30m`, each a number and one of `y mo w d h m s ms us µs ns` (any case), in
//!   that order, each at most once;
//! - ISO 8601 with designators: `P1Y2M3DT4H5M6S` (any part may be absent) or `P2W`;
//! - the ISO 8601 alternative form `P0001-02-03T04:05:06`.
//!
//! Totals are limited as Cassandra limits them: months and days to `i32::MAX`, nanoseconds to
//! `i64::MAX`.

use super::{Duration, LiteralError};

const NANOS_PER_MICRO: i64 = 1_000;
const NANOS_PER_MILLI: i64 = 1_000_000;
const NANOS_PER_SECOND: i64 = 1_000_000_000;
const NANOS_PER_MINUTE: i64 = 60 * NANOS_PER_SECOND;
const NANOS_PER_HOUR: i64 = 60 * NANOS_PER_MINUTE;

/// The units in the order they must appear, with Cassandra's names for its messages.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    Years = 1,
    Months,
    Weeks,
    Days,
    Hours,
    Minutes,
    Seconds,
    Millis,
    Micros,
    Nanos,
}

impl Unit {
    fn name(self) -> &'static str {
        match self {
            Unit::Years => "years",
            Unit::Months => "months",
            Unit::Weeks => "weeks",
            Unit::Days => "days",
            Unit::Hours => "hours",
            Unit::Minutes => "minutes",
            Unit::Seconds => "seconds",
            Unit::Millis => "milliseconds",
            Unit::Micros => "microseconds",
            Unit::Nanos => "nanoseconds",
        }
    }
}

/// Cassandra's `Duration.Builder`: adds units in order, checking the totals.
struct Builder {
    negative: bool,
    months: i64,
    days: i64,
    nanos: i64,
    last: Option<Unit>,
}

impl Builder {
    fn add(&mut self, unit: Unit, n: i64) -> Result<(), LiteralError> {
        if let Some(last) = self.last {
            if unit == last {
                return Err(invalid(format!(
                    "Invalid duration. The {} are specified multiple times",
                    unit.name()
                )));
            }
            if unit < last {
                return Err(invalid(format!(
                    "Invalid duration. The {} should be after {}",
                    last.name(),
                    unit.name()
                )));
            }
        }
        self.last = Some(unit);
        let (total, per_unit, limit, name) = match unit {
            Unit::Years => (&mut self.months, 12, i64::from(i32::MAX), "months"),
            Unit::Months => (&mut self.months, 1, i64::from(i32::MAX), "months"),
            Unit::Weeks => (&mut self.days, 7, i64::from(i32::MAX), "days"),
            Unit::Days => (&mut self.days, 1, i64::from(i32::MAX), "days"),
            Unit::Hours => (&mut self.nanos, NANOS_PER_HOUR, i64::MAX, "nanoseconds"),
            Unit::Minutes => (&mut self.nanos, NANOS_PER_MINUTE, i64::MAX, "nanoseconds"),
            Unit::Seconds => (&mut self.nanos, NANOS_PER_SECOND, i64::MAX, "nanoseconds"),
            Unit::Millis => (&mut self.nanos, NANOS_PER_MILLI, i64::MAX, "nanoseconds"),
            Unit::Micros => (&mut self.nanos, NANOS_PER_MICRO, i64::MAX, "nanoseconds"),
            Unit::Nanos => (&mut self.nanos, 1, i64::MAX, "nanoseconds"),
        };
        if n > (limit - *total) / per_unit {
            // Cassandra names `Integer.MAX_VALUE` as the limit, whatever the unit.
            return Err(invalid(format!(
                "Invalid duration. The total number of {name} must be less or equal to {}",
                i32::MAX
            )));
        }
        *total += n * per_unit;
        Ok(())
    }

    fn build(self) -> Duration {
        let sign = if self.negative { -1 } else { 1 };
        // The totals are within `i32::MAX` (months, days) by the checks in `add`.
        Duration {
            months: (sign * self.months) as i32,
            days: (sign * self.days) as i32,
            nanos: sign * self.nanos,
        }
    }
}

fn invalid(message: String) -> LiteralError {
    LiteralError::InvalidConstant(message)
}

/// A duration literal (`Duration.from`).
pub(super) fn parse_duration(input: &str) -> Result<Duration, LiteralError> {
    let negative = input.starts_with('-');
    let source = input.strip_prefix('-').unwrap_or(input);
    let unable = || invalid(format!("Unable to convert '{source}' to a duration"));
    let mut builder = Builder {
        negative,
        months: 0,
        days: 0,
        nanos: 0,
        last: None,
    };
    let parts = if let Some(iso) = source.strip_prefix('P') {
        if let Some(weeks) = iso.strip_suffix('W') {
            vec![(
                Unit::Weeks,
                number(weeks, 1..=usize::MAX).ok_or_else(unable)?,
            )]
        } else if iso.contains('-') {
            alternative_parts(iso).ok_or_else(unable)?
        } else {
            designator_parts(iso).ok_or_else(unable)?
        }
    } else {
        unit_parts(source).ok_or_else(unable)?
    };
    for (unit, n) in parts {
        builder.add(unit, n)?;
    }
    Ok(builder.build())
}

/// Digits (as many as `len` allows) as a number.
fn number(digits: &str, len: std::ops::RangeInclusive<usize>) -> Option<i64> {
    if !len.contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `12h30m`: numbers each followed by a unit.
fn unit_parts(s: &str) -> Option<Vec<(Unit, i64)>> {
    let mut parts = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let n = number(&rest[..digits], 1..=usize::MAX)?;
        rest = &rest[digits..];
        let lower: String = rest.chars().take(2).collect::<String>().to_lowercase();
        let (unit, len) = match lower.as_str() {
            "mo" => (Unit::Months, 2),
            "ms" => (Unit::Millis, 2),
            "us" => (Unit::Micros, 2),
            "ns" => (Unit::Nanos, 2),
            "µs" => (Unit::Micros, "µs".len()),
            _ => match lower.chars().next()? {
                'y' => (Unit::Years, 1),
                'w' => (Unit::Weeks, 1),
                'd' => (Unit::Days, 1),
                'h' => (Unit::Hours, 1),
                's' => (Unit::Seconds, 1),
                'm' => (Unit::Minutes, 1),
                _ => return None,
            },
        };
        parts.push((unit, n));
        rest = rest.get(len..)?;
    }
    (!parts.is_empty()).then_some(parts)
}

/// `1Y2M3DT4H5M6S` after the `P`: `(\d+Y)?(\d+M)?(\d+D)?(T(\d+H)?(\d+M)?(\d+S)?)?`.
fn designator_parts(s: &str) -> Option<Vec<(Unit, i64)>> {
    let (date, time) = match s.split_once('T') {
        Some((date, time)) => (date, Some(time)),
        None => (s, None),
    };
    let mut parts = designated(
        date,
        &[('Y', Unit::Years), ('M', Unit::Months), ('D', Unit::Days)],
    )?;
    if let Some(time) = time {
        let designators = [
            ('H', Unit::Hours),
            ('M', Unit::Minutes),
            ('S', Unit::Seconds),
        ];
        parts.extend(designated(time, &designators)?);
    }
    Some(parts)
}

/// Numbers each followed by the next of `designators` (some may be skipped).
fn designated(mut s: &str, designators: &[(char, Unit)]) -> Option<Vec<(Unit, i64)>> {
    let mut parts = Vec::new();
    for &(letter, unit) in designators {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && s[digits..].starts_with(letter) {
            parts.push((unit, number(&s[..digits], 1..=usize::MAX)?));
            s = &s[digits + 1..];
        }
    }
    s.is_empty().then_some(parts)
}

/// `0001-02-03T04:05:06` after the `P`.
fn alternative_parts(s: &str) -> Option<Vec<(Unit, i64)>> {
    let (date, time) = s.split_once('T')?;
    let mut date = date.split('-');
    let mut time = time.split(':');
    let parts = vec![
        (Unit::Years, number(date.next()?, 4..=4)?),
        (Unit::Months, number(date.next()?, 2..=2)?),
        (Unit::Days, number(date.next()?, 2..=2)?),
        (Unit::Hours, number(time.next()?, 2..=2)?),
        (Unit::Minutes, number(time.next()?, 2..=2)?),
        (Unit::Seconds, number(time.next()?, 2..=2)?),
    ];
    (date.next().is_none() && time.next().is_none()).then_some(parts)
}

/// A duration as a literal in units (`Duration.toString`: `1y2mo3d4h5m6s7ms8us9ns`, `-` first
/// when negative), `0s` for zero (Cassandra writes nothing, which is not a literal).
pub(super) fn format_duration(d: &Duration) -> String {
    let mut out = String::new();
    if d.months < 0 || d.days < 0 || d.nanos < 0 {
        out.push('-');
    }
    let mut append = |dividend: u64, divisor: u64, unit: &str| -> u64 {
        if dividend == 0 || dividend < divisor {
            return dividend;
        }
        out.push_str(&format!("{}{unit}", dividend / divisor));
        dividend % divisor
    };
    let months = u64::from(d.months.unsigned_abs());
    let remainder = append(months, 12, "y");
    append(remainder, 1, "mo");
    append(u64::from(d.days.unsigned_abs()), 1, "d");
    let mut nanos = d.nanos.unsigned_abs();
    for (divisor, unit) in [
        (NANOS_PER_HOUR, "h"),
        (NANOS_PER_MINUTE, "m"),
        (NANOS_PER_SECOND, "s"),
        (NANOS_PER_MILLI, "ms"),
        (NANOS_PER_MICRO, "us"),
        (1, "ns"),
    ] {
        nanos = append(nanos, divisor as u64, unit);
    }
    if out.is_empty() || out == "-" {
        return "0s".to_string();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(months: i32, days: i32, nanos: i64) -> Duration {
        Duration {
            months,
            days,
            nanos,
        }
    }

    #[test]
    fn unit_form() {
        assert_eq!(parse_duration("1h30m"), Ok(d(0, 0, 90 * NANOS_PER_MINUTE)));
        assert_eq!(parse_duration("1y2mo"), Ok(d(14, 0, 0)));
        assert_eq!(parse_duration("2w1d"), Ok(d(0, 15, 0)));
        assert_eq!(parse_duration("-3d4ms"), Ok(d(0, -3, -4 * NANOS_PER_MILLI)));
        assert_eq!(parse_duration("5µs6NS"), Ok(d(0, 0, 5006)));
        assert_eq!(
            parse_duration("30m1h").unwrap_err().to_string(),
            "Invalid duration. The minutes should be after hours"
        );
        assert_eq!(
            parse_duration("1h1h").unwrap_err().to_string(),
            "Invalid duration. The hours are specified multiple times"
        );
        assert_eq!(
            parse_duration("-5").unwrap_err().to_string(),
            "Unable to convert '5' to a duration"
        );
        assert!(parse_duration("1x").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn iso_forms() {
        assert_eq!(
            parse_duration("P1Y2M3DT4H5M6S"),
            Ok(d(
                14,
                3,
                4 * NANOS_PER_HOUR + 5 * NANOS_PER_MINUTE + 6 * NANOS_PER_SECOND
            ))
        );
        assert_eq!(parse_duration("P1DT2H"), Ok(d(0, 1, 2 * NANOS_PER_HOUR)));
        assert_eq!(parse_duration("PT1M"), Ok(d(0, 0, NANOS_PER_MINUTE)));
        assert_eq!(parse_duration("-P2W"), Ok(d(0, -14, 0)));
        assert_eq!(
            parse_duration("P0001-02-03T04:05:06"),
            Ok(d(
                14,
                3,
                4 * NANOS_PER_HOUR + 5 * NANOS_PER_MINUTE + 6 * NANOS_PER_SECOND
            ))
        );
        assert!(parse_duration("P1H").is_err());
        assert!(parse_duration("P1D2Y").is_err());
    }

    #[test]
    fn limits() {
        assert_eq!(
            parse_duration("178956971y").unwrap_err().to_string(),
            "Invalid duration. The total number of months must be less or equal to 2147483647"
        );
        assert_eq!(parse_duration("2147483647mo"), Ok(d(i32::MAX, 0, 0)));
        assert!(parse_duration("99999999999999999999h").is_err());
    }

    #[test]
    fn format_reads_back() {
        for x in [
            d(0, 0, 0),
            d(14, 3, 4 * NANOS_PER_HOUR + 7),
            d(-1, -2, -3),
            d(i32::MAX, i32::MAX, i64::MAX),
            d(-i32::MAX, 0, -i64::MAX),
        ] {
            assert_eq!(parse_duration(&format_duration(&x)), Ok(x), "{x:?}");
        }
        assert_eq!(
            format_duration(&d(14, 3, 90 * NANOS_PER_MINUTE)),
            "1y2mo3d1h30m"
        );
    }
}
