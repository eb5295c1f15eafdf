//! The proleptic Gregorian calendar, for the front ends' dates (CQL `date` and `timestamp`
//! literals, DynamoDB's SigV4 request times and stream labels).
//!
//! Howard Hinnant's algorithms: days are split into 400-year eras of 146,097 days, and a year
//! is taken to start on 1 March so that the leap day is the last day of the year.

/// Days from 1970-01-01 to `year-month-day`.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y.rem_euclid(400);
    let m = i64::from(month);
    let day_of_year = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date `days` after 1970-01-01: (year, month, day).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // days from 0000-03-01
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYYMMDDTHHMMSSZ`, ISO 8601's basic format (SigV4's `X-Amz-Date`), of seconds since the
/// epoch.
pub fn iso8601_basic(seconds: i64) -> String {
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let in_day = seconds.rem_euclid(86_400);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        in_day / 3600,
        in_day / 60 % 60,
        in_day % 60
    )
}

/// Seconds since the epoch of a `YYYYMMDDTHHMMSSZ` time, if it is one.
pub fn parse_iso8601_basic(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<u32> {
        let s = text.get(range)?;
        if !s.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    let (year, month, day) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (hour, minute, second) = (num(9..11)?, num(11..13)?, num(13..15)?);
    if !(1..=12).contains(&month) || day == 0 || day > 31 || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let days = days_from_civil(i64::from(year), month, day);
    if civil_from_days(days) != (i64::from(year), month, day) {
        return None; // 31 April and the like
    }
    Some(days * 86_400 + i64::from(hour * 3600 + minute * 60 + second))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_round_trip() {
        let edges = [-719_468i64, -100_000_000, 100_000_000, 2_932_896];
        for days in (-800_000..800_000).step_by(37).chain(edges) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2024, 1, 31), 19_753);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn basic_format_round_trips() {
        assert_eq!(iso8601_basic(1_440_938_160), "20150830T123600Z");
        assert_eq!(parse_iso8601_basic("20150830T123600Z"), Some(1_440_938_160));
        for bad in [
            "20150830T123600",
            "2015-08-30T12:36:00Z",
            "20150431T000000Z",
            "2015083OT123600Z",
            "",
        ] {
            assert_eq!(parse_iso8601_basic(bad), None, "{bad}");
        }
    }
}
