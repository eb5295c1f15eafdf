//! `date`, `time` and `timestamp` literals: Cassandra's text forms, and the forms `Display`
//! writes.
//!
//! - `date`: `yyyy-mm-dd` as `java.time`'s strict `ISO_LOCAL_DATE` reads it (a year of more
//!   than four digits needs a sign), or the raw unsigned day count (epoch 2^31).
//! - `time`: `hh:mm:ss[.fffffffff]`, or raw nanoseconds since midnight.
//! - `timestamp`: milliseconds since the epoch, `now`, or the forms of Cassandra's
//!   `TimestampSerializer`: `yyyy-mm-dd`, optionally followed by ` ` or `T` and
//!   `hh:mm[:ss[.fffffffff]]`, optionally followed by a zone: `Z`, `+hh`, `+hhmm`, `+hh:mm`
//!   directly, or after a space also `UTC`, `GMT`, `GMT+h[:mm]`. The fraction is one to nine
//!   digits of a second truncated to milliseconds, as Cassandra 4 reads it (CASSANDRA-15976:
//!   `.5` is 500 ms; Cassandra 3's `SimpleDateFormat` read a count of milliseconds). Without a
//!   zone the time is UTC. Zeros may pad any field of a timestamp (`1970-0001-0001T0:010`), as
//!   Cassandra 4.1's `y-M-d H:m:s` patterns read them.
//!
//! Dates are proleptic Gregorian ([`khata_types::calendar`]).

use super::LiteralError;

const MILLIS_PER_DAY: i64 = 86_400_000;
const NANOS_PER_SECOND: i64 = 1_000_000_000;

pub(super) use khata_types::calendar::{civil_from_days, days_from_civil};

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

/// Whether `text` is `-?\d+` (Cassandra's "raw" pattern for dates, times and timestamps).
fn is_raw(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn invalid(message: String) -> LiteralError {
    LiteralError::InvalidConstant(message)
}

/// A `date` literal (`SimpleDateSerializer.dateStringToDays`).
pub(super) fn parse_date(text: &str) -> Result<u32, LiteralError> {
    if is_raw(text) {
        return text
            .parse::<i64>()
            .ok()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                invalid(format!(
                    "Unable to make unsigned int (for date) from: '{text}'"
                ))
            });
    }
    let coerce = || {
        invalid(format!(
            "Unable to coerce '{text}' to a formatted date (long)"
        ))
    };
    let days = parse_iso_date(text).ok_or_else(coerce)?;
    if days < i64::from(i32::MIN) {
        return Err(invalid(format!(
            "Input date {text} is less than min supported date -5877641-06-23T00:00Z"
        )));
    }
    if days > i64::from(i32::MAX) {
        return Err(invalid(format!(
            "Input date {text} is greater than max supported date 5881580-07-11T00:00Z"
        )));
    }
    Ok((days - i64::from(i32::MIN)) as u32)
}

/// `ISO_LOCAL_DATE` in strict mode: days since the epoch.
fn parse_iso_date(text: &str) -> Option<i64> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => (0, text),
    };
    let mut parts = rest.splitn(3, '-');
    let (year, month, day) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str, n: std::ops::RangeInclusive<usize>| {
        n.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
    };
    // Four-digit years may be unsigned; longer ones need a sign (SignStyle.EXCEEDS_PAD).
    let year_ok = if sign == 0 {
        digits(year, 4..=4)
    } else {
        digits(year, 4..=9)
    };
    if !year_ok || !digits(month, 2..=2) || !digits(day, 2..=2) {
        return None;
    }
    let year = year.parse::<i64>().ok()? * if sign < 0 { -1 } else { 1 };
    let (month, day) = (month.parse::<u32>().ok()?, day.parse::<u32>().ok()?);
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

/// A `date` as `'yyyy-mm-dd'` for years 0 to 9999, else `None` (write the raw day count).
pub(super) fn format_date(date: u32) -> String {
    let (year, month, day) = civil_from_days(i64::from(date) - i64::from(super::EPOCH_DATE));
    // `DateTimeFormatter.ISO_LOCAL_DATE`: four digits at least, a sign beyond 9999 or below 0.
    let year = match year {
        0..=9999 => format!("{year:04}"),
        10000.. => format!("+{year}"),
        _ => format!("-{:04}", year.unsigned_abs()),
    };
    format!("{year}-{month:02}-{day:02}")
}

/// A `time` literal (`TimeSerializer.timeStringToLong`).
pub(super) fn parse_time(text: &str) -> Result<i64, LiteralError> {
    if is_raw(text) {
        return text
            .parse::<i64>()
            .ok()
            .filter(|n| (0..super::NANOS_PER_DAY).contains(n))
            .ok_or_else(|| invalid(format!("Unable to make long (for time) from: '{text}'")));
    }
    parse_time_strictly(text.trim()).ok_or_else(|| {
        invalid(format!(
            "(TimeType) Unable to coerce '{text}' to a formatted time (long)"
        ))
    })
}

/// `hh:mm:ss[.fffffffff]` (`TimeSerializer.parseTimeStrictly`).
fn parse_time_strictly(s: &str) -> Option<i64> {
    let mut parts = s.splitn(3, ':');
    let (hour, minute, rest) = (parts.next()?, parts.next()?, parts.next()?);
    let (second, fraction) = match rest.split_once('.') {
        Some((second, fraction)) => (second, Some(fraction)),
        None => (rest, None),
    };
    let number = |s: &str, max: i64| {
        let n = s.parse::<i64>().ok()?;
        (s.bytes().all(|b| b.is_ascii_digit()) && (0..max).contains(&n)).then_some(n)
    };
    let (hour, minute, second) = (number(hour, 24)?, number(minute, 60)?, number(second, 60)?);
    let nanos = match fraction {
        None => 0,
        Some(f) if (1..=9).contains(&f.len()) && f.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{f:0<9}").parse::<i64>().ok()?
        }
        Some(_) => return None,
    };
    Some(((hour * 60 + minute) * 60 + second) * NANOS_PER_SECOND + nanos)
}

/// A `time` as `'hh:mm:ss.fffffffff'` (Cassandra's `TimeSerializer.toString`).
pub(super) fn format_time(nanos: i64) -> String {
    let (seconds, fraction) = (nanos / NANOS_PER_SECOND, nanos % NANOS_PER_SECOND);
    format!(
        "{:02}:{:02}:{:02}.{fraction:09}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// A `timestamp` literal (`TimestampSerializer.dateStringToTimestamp`); `now_millis` is the
/// coordinator's clock, for `'now'`.
pub(super) fn parse_timestamp(text: &str, now_millis: i64) -> Result<i64, LiteralError> {
    if text.eq_ignore_ascii_case("now") {
        return Ok(now_millis);
    }
    if is_raw(text) {
        return text
            .parse::<i64>()
            .map_err(|_| invalid(format!("Unable to make long (for date) from: '{text}'")));
    }
    parse_date_time(text).ok_or_else(|| {
        invalid(format!(
            "Unable to coerce '{text}' to a formatted date (long)"
        ))
    })
}

/// A small cursor over the bytes of a timestamp literal.
struct Cursor<'a> {
    s: &'a [u8],
}

impl Cursor<'_> {
    fn eat(&mut self, b: u8) -> bool {
        if self.s.first() == Some(&b) {
            self.s = &self.s[1..];
            true
        } else {
            false
        }
    }

    /// Between `min` and `max` digits, as a number.
    fn number(&mut self, min: usize, max: usize) -> Option<i64> {
        let n = self.s.iter().take_while(|b| b.is_ascii_digit()).count();
        if n < min || n > max {
            return None;
        }
        let value = std::str::from_utf8(&self.s[..n]).ok()?.parse().ok()?;
        self.s = &self.s[n..];
        Some(value)
    }
}

/// The most digits a field of a timestamp may have: Cassandra 4.1's `y-M-d H:m:s` patterns
/// read any number of digits (`appendValue(field, 1, 19, NORMAL)`), so zeros may pad a field
/// (CASSANDRA-16105: `'1970-0001-0001T0:010:0.1Z'`); the value is then checked.
const FIELD_DIGITS: usize = 18;

fn parse_date_time(text: &str) -> Option<i64> {
    let mut c = Cursor { s: text.as_bytes() };
    let year = c
        .number(1, FIELD_DIGITS)
        .filter(|y| (1..=999_999_999).contains(y))?;
    let month = u32::try_from(c.eat(b'-').then(|| c.number(1, FIELD_DIGITS))??).ok()?;
    let day = u32::try_from(c.eat(b'-').then(|| c.number(1, FIELD_DIGITS))??).ok()?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let mut millis = days_from_civil(year, month, day).checked_mul(MILLIS_PER_DAY)?;
    let time_follows = c.s.len() > 1 && c.s[1].is_ascii_digit() && matches!(c.s[0], b' ' | b'T');
    if time_follows {
        c.s = &c.s[1..];
        let hour = c.number(1, FIELD_DIGITS).filter(|h| *h < 24)?;
        let minute = c
            .eat(b':')
            .then(|| c.number(1, FIELD_DIGITS))?
            .filter(|m| *m < 60)?;
        let mut second = 0;
        let mut milli = 0;
        if c.eat(b':') {
            second = c.number(1, FIELD_DIGITS).filter(|s| *s < 60)?;
            if c.eat(b'.') {
                // A fraction of a second of 1 to 9 digits, truncated to milliseconds
                // (CASSANDRA-15976: `.1` is 100 ms).
                let n = c.s.iter().take_while(|b| b.is_ascii_digit()).count();
                if !(1..=9).contains(&n) {
                    return None;
                }
                let mut digits = [b'0'; 3];
                let kept = n.min(3);
                digits[..kept].copy_from_slice(&c.s[..kept]);
                milli = std::str::from_utf8(&digits).ok()?.parse().ok()?;
                c.s = &c.s[n..];
            }
        }
        millis = millis.checked_add(((hour * 60 + minute) * 60 + second) * 1000 + milli)?;
    }
    let offset_minutes = parse_zone(c.s)?;
    millis.checked_sub(offset_minutes * 60_000)
}

/// The zone after a date or time, in minutes east of UTC (0 when there is none).
fn parse_zone(s: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(s).ok()?;
    if s.is_empty() {
        return Some(0);
    }
    // `X` patterns follow directly; `z` patterns after a space.
    let (zone, spaced) = match s.strip_prefix(' ') {
        Some(zone) => (zone, true),
        None => (s, false),
    };
    if zone == "Z" {
        return Some(0);
    }
    if spaced {
        if ["UTC", "GMT", "UT"].contains(&zone) {
            return Some(0);
        }
        if let Some(offset) = zone
            .strip_prefix("GMT")
            .or_else(|| zone.strip_prefix("UTC"))
        {
            return parse_offset(offset, true);
        }
    }
    parse_offset(zone, false)
}

/// `+hh`, `+hhmm`, `+hh:mm` (or `-`); with `loose`, also one-digit hours (`GMT+8`, `GMT+8:30`).
fn parse_offset(s: &str, loose: bool) -> Option<i64> {
    let sign = match s.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let body = &s[1..];
    let (hours, minutes) = match body.split_once(':') {
        Some((h, m)) if m.len() == 2 => (h, m),
        Some(_) => return None,
        None if body.len() == 4 && body.is_ascii() => body.split_at(2),
        None => (body, "0"),
    };
    let hours_ok = hours.len() == 2 || (loose && hours.len() == 1);
    if !hours_ok
        || !hours
            .bytes()
            .chain(minutes.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let (h, m) = (hours.parse::<i64>().ok()?, minutes.parse::<i64>().ok()?);
    (h < 24 && m < 60).then_some(sign * (h * 60 + m))
}

/// A `timestamp` as `'yyyy-mm-ddThh:mm:ss.SSSZ'` (Cassandra's `toCQLLiteral`) for years 1583
/// to 9999, else `None` (write the milliseconds): Cassandra reads earlier dates in the Julian
/// calendar, and its patterns have no signed years.
pub(super) fn format_timestamp(millis: i64) -> Option<String> {
    let (days, in_day) = (
        millis.div_euclid(MILLIS_PER_DAY),
        millis.rem_euclid(MILLIS_PER_DAY),
    );
    let (year, month, day) = civil_from_days(days);
    if !(1583..=9999).contains(&year) {
        return None;
    }
    let (seconds, milli) = (in_day / 1000, in_day % 1000);
    Some(format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date("1970-01-01"), Ok(1 << 31));
        assert_eq!(parse_date("2024-01-31"), Ok((1 << 31) + 19_753));
        assert_eq!(parse_date("2147483648"), Ok(1 << 31));
        assert!(parse_date("2023-02-29").is_err());
        assert!(parse_date("2024-1-31").is_err());
        assert!(parse_date("12024-01-31").is_err());
        assert_eq!(
            parse_date("+12024-01-31"),
            Ok((1 << 31) + days_from_civil(12_024, 1, 31) as u32)
        );
        assert_eq!(
            parse_date("-1").unwrap_err().to_string(),
            "Unable to make unsigned int (for date) from: '-1'"
        );
        assert_eq!(
            parse_date("+9999999-01-01").unwrap_err().to_string(),
            "Input date +9999999-01-01 is greater than max supported date 5881580-07-11T00:00Z"
        );
        assert_eq!(format_date(1 << 31), "1970-01-01");
        assert_eq!(format_date(0), "-5877641-06-23");
        assert_eq!(format_date(u32::MAX), "+5881580-07-11");
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("08:12:54.123"), Ok(29_574_123_000_000));
        assert_eq!(parse_time("08:12:54"), Ok(29_574_000_000_000));
        assert_eq!(parse_time(" 23:59:59.999999999 "), Ok(86_399_999_999_999));
        assert_eq!(parse_time("1000"), Ok(1000));
        assert!(parse_time("24:00:00").is_err());
        assert!(parse_time("12:00:00.").is_err());
        assert!(parse_time("12:00:00.1234567890").is_err());
        assert_eq!(
            parse_time("86400000000000").unwrap_err().to_string(),
            "Unable to make long (for time) from: '86400000000000'"
        );
        assert_eq!(format_time(29_574_123_000_000), "08:12:54.123000000");
    }

    #[test]
    fn timestamps() {
        let base = 1_706_688_774_000; // 2024-01-31T08:12:54Z
        assert_eq!(parse_timestamp("2024-01-31 08:12:54", 0), Ok(base));
        // CASSANDRA-15976: the fraction is a fraction, up to nanoseconds, truncated.
        for (text, millis) in [
            ("1970-01-01 00:00:00.10 UTC", 100),
            ("1970-01-01 00:00:00.1+00", 100),
            ("1970-01-01T00:00:00.10-0000", 100),
            ("1970-01-01T00:00:00.1Z", 100),
            ("1970-01-01T00:00:00.5Z", 500),
            ("1970-01-01T00:00:00.345678Z", 345),
            ("1970-01-01T00:00:00.123456789Z", 123),
        ] {
            assert_eq!(parse_timestamp(text, 0), Ok(millis), "{text}");
        }
        assert!(parse_timestamp("1970-01-01T00:00:00.1234567890Z", 0).is_err());
        assert!(parse_timestamp("1970-01-01T00:00:00.Z", 0).is_err());
        assert_eq!(
            parse_timestamp("2024-01-31T08:12:54.123Z", 0),
            Ok(base + 123)
        );
        assert_eq!(parse_timestamp("2024-01-31T08:12:54.5", 0), Ok(base + 500));
        assert_eq!(parse_timestamp("2024-01-31 09:12:54+0100", 0), Ok(base));
        assert_eq!(parse_timestamp("2024-01-31 09:12:54+01:00", 0), Ok(base));
        assert_eq!(parse_timestamp("2024-01-31 07:12:54 GMT-1", 0), Ok(base));
        assert_eq!(parse_timestamp("2024-01-31 08:12:54 UTC", 0), Ok(base));
        assert_eq!(parse_timestamp("2024-01-31 08:12", 0), Ok(base - 54_000));
        assert_eq!(parse_timestamp("2024-01-31", 0), Ok(base - 29_574_000));
        assert_eq!(parse_timestamp("NOW", 42), Ok(42));
        assert_eq!(parse_timestamp("-5", 0), Ok(-5));
        assert!(parse_timestamp("2024-01-31 08:12:54 PST", 0).is_err());
        assert!(parse_timestamp("2024-01-31T25:00", 0).is_err());
        // Multi-byte characters where an offset's digits belong.
        assert!(parse_timestamp("2024-01-31 08:00+a€", 0).is_err());
        assert!(parse_timestamp("2024-01-31 08:00 GMT+é", 0).is_err());
        assert_eq!(
            format_timestamp(base + 123).as_deref(),
            Some("2024-01-31T08:12:54.123Z")
        );
        assert_eq!(format_timestamp(i64::MIN), None);
    }
}
