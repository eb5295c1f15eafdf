//! Cassandra 5.0's `floor` function (CASSANDRA-11871): a `timestamp`, `timeuuid`, `date` or
//! `time` rounded down to a multiple of a duration counted from a starting point (the Unix
//! epoch, or midnight, unless given), in selections and as the last element of a `GROUP BY`
//! (`GROUP BY pk, floor(time, 1h)`), computed as Cassandra's `Duration.floorTimestamp` and
//! `Duration.floorTime` compute it, with their refusals.

use khata_types::calendar::{civil_from_days, days_from_civil};
use khata_types::schema::CqlType;

use super::error::ExecError;
use crate::value::{CqlValue, Duration};

const MILLIS_PER_DAY: i64 = 86_400_000;
const NANOS_PER_MILLI: i64 = 1_000_000;
const NANOS_PER_DAY: i64 = MILLIS_PER_DAY * NANOS_PER_MILLI;

/// The type `floor` returns for a first argument of type `ty` (a `timeuuid` floors to a
/// `timestamp`), and the type of its starting point; none for a type it does not take.
pub(super) fn types(ty: &CqlType) -> Option<(CqlType, CqlType)> {
    Some(match ty {
        CqlType::Timestamp | CqlType::Timeuuid => (CqlType::Timestamp, CqlType::Timestamp),
        CqlType::Date => (CqlType::Date, CqlType::Date),
        CqlType::Time => (CqlType::Time, CqlType::Time),
        _ => return None,
    })
}

/// `floor(value, duration[, start])` of values already decoded; `None` for a value that is
/// not of a type `floor` takes.
pub(super) fn floor(
    value: &CqlValue,
    duration: &Duration,
    start: Option<&CqlValue>,
) -> Result<Option<CqlValue>, ExecError> {
    Ok(Some(match value {
        CqlValue::Timestamp(millis) => {
            let start = start_millis(start)?;
            CqlValue::Timestamp(floor_timestamp(*millis, duration, start)?)
        }
        CqlValue::Timeuuid(u) => {
            let Some(millis) = super::functions::uuid_millis(u) else {
                return Ok(None);
            };
            let start = start_millis(start)?;
            CqlValue::Timestamp(floor_timestamp(millis, duration, start)?)
        }
        CqlValue::Date(days) => {
            if duration.nanos != 0 {
                return Err(ExecError::invalid(format!(
                    "The floor on date values cannot be computed for the {} duration as precision is below 1 day",
                    CqlValue::Duration(*duration)
                )));
            }
            let start = match start {
                Some(CqlValue::Date(d)) => date_days(*d),
                _ => 0,
            };
            let floored = floor_timestamp(
                date_days(*days) * MILLIS_PER_DAY,
                duration,
                start * MILLIS_PER_DAY,
            )?;
            match CqlValue::date_from_epoch_days(floored.div_euclid(MILLIS_PER_DAY)) {
                Some(d) => d,
                None => return Ok(None),
            }
        }
        CqlValue::Time(nanos) => {
            let start = match start {
                Some(CqlValue::Time(n)) => *n,
                _ => 0,
            };
            CqlValue::Time(floor_time(*nanos, duration, start)?)
        }
        _ => return Ok(None),
    }))
}

/// Days since the epoch of a `date`.
fn date_days(d: u32) -> i64 {
    i64::from(d) - i64::from(crate::value::EPOCH_DATE)
}

fn start_millis(start: Option<&CqlValue>) -> Result<i64, ExecError> {
    Ok(match start {
        Some(CqlValue::Timestamp(m)) => *m,
        _ => 0,
    })
}

/// The checks `floor` makes of every argument before computing.
fn check(time: i64, duration: &Duration, start: i64) -> Result<(), ExecError> {
    if start > time {
        return Err(ExecError::invalid(
            "The floor function starting time is greater than the provided time",
        ));
    }
    if duration.months < 0 || duration.days < 0 || duration.nanos < 0 {
        return Err(ExecError::invalid(
            "Negative durations are not supported by the floor function",
        ));
    }
    Ok(())
}

/// Cassandra's `Duration.floorTimestamp`.
fn floor_timestamp(time: i64, duration: &Duration, start: i64) -> Result<i64, ExecError> {
    check(time, duration, start)?;
    if duration.months == 0 {
        let step = duration_millis(duration)?;
        if step == 0 {
            return Ok(time);
        }
        return Ok(time - (time - start) % step);
    }
    // The largest multiple of the duration from `start` at or before `time`: estimated from
    // the months between them, then walked back while the days and time overshoot.
    let (year, month) = year_month(time);
    let (start_year, start_month) = year_month(start);
    let months_between = (year - start_year) * 12 + (month - start_month);
    let mut multiplier = months_between / i64::from(duration.months);
    let mut calendar = add_months(start, multiplier * i64::from(duration.months));
    if duration.days == 0 && duration.nanos == 0 {
        return Ok(calendar);
    }
    let step = duration_millis(duration)?;
    let mut floor = calendar + multiplier * step;
    while floor > time {
        multiplier -= 1;
        calendar = add_months(calendar, -i64::from(duration.months));
        floor = calendar + multiplier * step;
    }
    Ok(start.max(floor))
}

/// Cassandra's `Duration.floorTime`: a time of day, for durations shorter than a day.
fn floor_time(time: i64, duration: &Duration, start: i64) -> Result<i64, ExecError> {
    check(time, duration, start)?;
    if duration.months != 0 || duration.days != 0 || duration.nanos >= NANOS_PER_DAY {
        return Err(ExecError::invalid(
            "For time values, the floor can only be computed for durations smaller that a day",
        ));
    }
    if duration.nanos == 0 {
        return Ok(time);
    }
    Ok(time - (time - start) % duration.nanos)
}

/// A duration without months in milliseconds, refused below a millisecond's precision.
fn duration_millis(duration: &Duration) -> Result<i64, ExecError> {
    if duration.nanos % NANOS_PER_MILLI != 0 {
        return Err(ExecError::invalid(format!(
            "The floor cannot be computed for the {} duration as precision is below 1 millisecond",
            CqlValue::Duration(*duration)
        )));
    }
    Ok(i64::from(duration.days) * MILLIS_PER_DAY + duration.nanos / NANOS_PER_MILLI)
}

/// The UTC year and month (0-11) of an instant.
fn year_month(millis: i64) -> (i64, i64) {
    let (year, month, _) = civil_from_days(millis.div_euclid(MILLIS_PER_DAY));
    (year, i64::from(month) - 1)
}

/// `millis` moved by `months` in the UTC calendar, the day of the month kept or, where the
/// month is shorter, its last day (Java's `Calendar.add(MONTH, n)`).
fn add_months(millis: i64, months: i64) -> i64 {
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let time_of_day = millis.rem_euclid(MILLIS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let index = year * 12 + i64::from(month) - 1 + months;
    let (new_year, new_month) = (index.div_euclid(12), (index.rem_euclid(12) + 1) as u32);
    let last = last_day(new_year, new_month);
    days_from_civil(new_year, new_month, day.min(last)) * MILLIS_PER_DAY + time_of_day
}

fn last_day(year: i64, month: u32) -> u32 {
    let (next_year, next_month) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    (days_from_civil(next_year, next_month, 1) - days_from_civil(year, month, 1)) as u32
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

    const HOUR: i64 = 3_600_000_000_000;

    #[test]
    fn timestamps_floor_to_multiples_from_the_epoch_or_the_start() {
        // 2016-09-27 16:10:00 UTC
        let t = 1_474_992_600_000;
        assert_eq!(
            floor_timestamp(t, &d(0, 0, HOUR), 0).unwrap(),
            1_474_992_000_000
        );
        assert_eq!(
            floor_timestamp(t, &d(0, 0, 5 * 60_000_000_000), 0).unwrap(),
            t
        );
        assert_eq!(
            floor_timestamp(t, &d(0, 2, 0), 0).unwrap() % MILLIS_PER_DAY,
            0
        );
        // With months: 2016-09-01 from the epoch with 1mo.
        let sept = days_from_civil(2016, 9, 1) * MILLIS_PER_DAY;
        assert_eq!(floor_timestamp(t, &d(1, 0, 0), 0).unwrap(), sept);
        // 2mo from 2016-01-01: 2016-09-01.
        let jan = days_from_civil(2016, 1, 1) * MILLIS_PER_DAY;
        assert_eq!(floor_timestamp(t, &d(2, 0, 0), jan).unwrap(), sept);
        assert!(floor_timestamp(t, &d(0, 0, 10_000), 0).is_err());
        assert!(floor_timestamp(t, &d(0, 0, -HOUR), 0).is_err());
        assert!(floor_timestamp(0, &d(0, 0, HOUR), t).is_err());
    }

    #[test]
    fn months_added_keep_the_day_or_the_months_last() {
        let jan31 = days_from_civil(2016, 1, 31) * MILLIS_PER_DAY;
        assert_eq!(
            add_months(jan31, 1),
            days_from_civil(2016, 2, 29) * MILLIS_PER_DAY
        );
        assert_eq!(
            add_months(jan31, -2),
            days_from_civil(2015, 11, 30) * MILLIS_PER_DAY
        );
    }

    #[test]
    fn times_floor_within_the_day() {
        let t = 10 * HOUR + 1234;
        assert_eq!(floor_time(t, &d(0, 0, HOUR), 0).unwrap(), 10 * HOUR);
        assert!(floor_time(t, &d(0, 1, 0), 0).is_err());
    }
}
