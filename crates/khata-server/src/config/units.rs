//! Cassandra 4.1's syntax for durations, data sizes and data rates in configuration values.
//!
//! Cassandra 4.1 (CASSANDRA-15234) moved `cassandra.yaml` from unit-suffixed names
//! (`commitlog_sync_period_in_ms: 10000`) to values that carry their unit
//! (`commitlog_sync_period: 10s`). This module parses those values the way Cassandra 4.1's
//! `DurationSpec`, `DataStorageSpec` and `DataRateSpec` do, so a value Cassandra accepts is
//! accepted here with the same meaning, and a value it refuses is refused with the same message:
//!
//! - **Durations**: `^(\d+)(d|h|s|ms|us|µs|ns|m)$`. Digits are ASCII, case matters, no sign, no
//!   space, no fraction; a unit is required (`10000` alone is refused).
//! - **Data sizes**: `^(\d+)(GiB|MiB|KiB|B)$`, binary multiples only (no `MB`, no `mb`).
//! - **Data rates**: `^(\d+)(MiB/s|KiB/s|B/s)$`.
//!
//! Each setting has a *bound* (Cassandra's `IntMillisecondsBound`, `IntMebibytesBound`, ...):
//! its smallest accepted unit and an exclusive maximum counted in that unit. A unit below the
//! smallest (`10us` for a millisecond setting) is refused; so is a value whose conversion to the
//! smallest unit reaches the maximum (`25d` is 2 160 000 000 ms, past `Integer.MAX_VALUE`).
//! Conversions saturate as Java's `TimeUnit.convert` does, so an overflowing value is refused
//! rather than wrapped.
//!
//! The pre-4.1 names hand over a bare number in a fixed unit; [`duration_from_quantity`],
//! [`storage_from_quantity`] and [`rate_from_quantity`] are Cassandra's converters for them
//! (negative numbers refused).
//!
//! Deliberately not copied: Cassandra 5.0 later accepts a bare `0` without a unit for sizes and
//! rates; 4.1 does not, and neither does khata.

use std::fmt;
use std::time::Duration;

/// Java's `Long.MAX_VALUE`, the bound of the `Long*Bound` settings.
const LONG_MAX: u64 = i64::MAX as u64;
/// Java's `Integer.MAX_VALUE`, the bound of the `Int*Bound` settings.
const INT_MAX: u64 = i32::MAX as u64;

/// A value Cassandra would refuse; the text is Cassandra's own message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError(pub String);

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnitError {}

/// Splits `^(\d+)(rest)$` into the quantity and the unit text. `None` when there are no
/// leading ASCII digits or the quantity does not fit a Java `long`.
fn split_quantity(text: &str) -> Option<(u64, &str)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    // Java's Long.parseLong: leading zeros are fine, past Long.MAX_VALUE is not.
    let quantity: u64 = text[..digits].parse().ok()?;
    (quantity <= LONG_MAX).then_some((quantity, &text[digits..]))
}

/// `quantity * factor` in Java `long` arithmetic that saturates at `Long.MAX_VALUE`, as
/// `TimeUnit.convert` and `DataStorageUnit.x` do.
fn saturating_scale(quantity: u64, factor: u64) -> u64 {
    quantity.saturating_mul(factor).min(LONG_MAX)
}

// ---------------------------------------------------------------------------------------------
// Durations

/// Java's `TimeUnit`, in its declaration order (which Cassandra's "Accepted units" lists use).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimeUnit {
    Nanoseconds,
    Microseconds,
    Milliseconds,
    Seconds,
    Minutes,
    Hours,
    Days,
}

impl TimeUnit {
    const ALL: [TimeUnit; 7] = [
        TimeUnit::Nanoseconds,
        TimeUnit::Microseconds,
        TimeUnit::Milliseconds,
        TimeUnit::Seconds,
        TimeUnit::Minutes,
        TimeUnit::Hours,
        TimeUnit::Days,
    ];

    /// Nanoseconds in one of this unit.
    pub const fn nanos(self) -> u64 {
        match self {
            TimeUnit::Nanoseconds => 1,
            TimeUnit::Microseconds => 1_000,
            TimeUnit::Milliseconds => 1_000_000,
            TimeUnit::Seconds => 1_000_000_000,
            TimeUnit::Minutes => 60_000_000_000,
            TimeUnit::Hours => 3_600_000_000_000,
            TimeUnit::Days => 86_400_000_000_000,
        }
    }

    /// The symbol Cassandra writes (`us`, not `µs`).
    pub const fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Nanoseconds => "ns",
            TimeUnit::Microseconds => "us",
            TimeUnit::Milliseconds => "ms",
            TimeUnit::Seconds => "s",
            TimeUnit::Minutes => "m",
            TimeUnit::Hours => "h",
            TimeUnit::Days => "d",
        }
    }

    fn from_symbol(symbol: &str) -> Option<TimeUnit> {
        Some(match symbol {
            "ns" => TimeUnit::Nanoseconds,
            "us" | "µs" => TimeUnit::Microseconds,
            "ms" => TimeUnit::Milliseconds,
            "s" => TimeUnit::Seconds,
            "m" => TimeUnit::Minutes,
            "h" => TimeUnit::Hours,
            "d" => TimeUnit::Days,
            _ => return None,
        })
    }

    /// Java's enum constant name (`MILLISECONDS`).
    const fn java_name(self) -> &'static str {
        match self {
            TimeUnit::Nanoseconds => "NANOSECONDS",
            TimeUnit::Microseconds => "MICROSECONDS",
            TimeUnit::Milliseconds => "MILLISECONDS",
            TimeUnit::Seconds => "SECONDS",
            TimeUnit::Minutes => "MINUTES",
            TimeUnit::Hours => "HOURS",
            TimeUnit::Days => "DAYS",
        }
    }

    /// `minUnit.convert(quantity, self)`, saturating; only called with `self >= min_unit`.
    fn convert_to(self, quantity: u64, min_unit: TimeUnit) -> u64 {
        saturating_scale(quantity, self.nanos() / min_unit.nanos())
    }
}

/// `[MILLISECONDS, SECONDS, MINUTES, HOURS, DAYS]`: Java's `Arrays.toString` of the accepted units.
fn accepted_time_units(min_unit: TimeUnit) -> String {
    let names: Vec<_> = TimeUnit::ALL
        .iter()
        .filter(|u| **u >= min_unit)
        .map(|u| u.java_name())
        .collect();
    format!("[{}]", names.join(", "))
}

/// The smallest unit and the exclusive maximum of a duration setting (Cassandra's
/// `DurationSpec.*Bound` classes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurationBound {
    pub min_unit: TimeUnit,
    /// Exclusive, counted in `min_unit`.
    pub max: u64,
}

impl DurationBound {
    pub const LONG_NANOSECONDS: DurationBound = DurationBound {
        min_unit: TimeUnit::Nanoseconds,
        max: LONG_MAX,
    };
    pub const LONG_MILLISECONDS: DurationBound = DurationBound {
        min_unit: TimeUnit::Milliseconds,
        max: LONG_MAX,
    };
    pub const LONG_SECONDS: DurationBound = DurationBound {
        min_unit: TimeUnit::Seconds,
        max: LONG_MAX,
    };
    pub const INT_MILLISECONDS: DurationBound = DurationBound {
        min_unit: TimeUnit::Milliseconds,
        max: INT_MAX,
    };
    pub const INT_SECONDS: DurationBound = DurationBound {
        min_unit: TimeUnit::Seconds,
        max: INT_MAX,
    };
    pub const INT_MINUTES: DurationBound = DurationBound {
        min_unit: TimeUnit::Minutes,
        max: INT_MAX,
    };

    fn to_duration(self, in_min_unit: u64) -> Duration {
        // Below the bound, so at most i64::MAX of the unit: milliseconds and coarser fit a
        // Duration's u64 seconds; nanoseconds and microseconds fit u64 nanoseconds.
        let nanos = u128::from(in_min_unit) * u128::from(self.min_unit.nanos());
        let secs = u64::try_from(nanos / 1_000_000_000).unwrap_or(u64::MAX);
        Duration::new(secs, (nanos % 1_000_000_000) as u32)
    }
}

/// Parses a Cassandra 4.1 duration such as `10s`, `10000ms` or `3h`.
pub fn parse_duration(text: &str, bound: DurationBound) -> Result<Duration, UnitError> {
    let (quantity, unit) = split_quantity(text)
        .and_then(|(q, symbol)| TimeUnit::from_symbol(symbol).map(|u| (q, u)))
        .ok_or_else(|| {
            UnitError(format!(
                "Invalid duration: {text} Accepted units:{} where case matters and only \
                 non-negative values.",
                accepted_time_units(bound.min_unit)
            ))
        })?;
    if unit < bound.min_unit {
        return Err(UnitError(format!(
            "Invalid duration: {text} Accepted units:{}",
            accepted_time_units(bound.min_unit)
        )));
    }
    let in_min_unit = unit.convert_to(quantity, bound.min_unit);
    if in_min_unit >= bound.max {
        return Err(UnitError(format!(
            "Invalid duration: {text}. It shouldn't be more than {} in {}",
            bound.max - 1,
            bound.min_unit.java_name().to_lowercase()
        )));
    }
    Ok(bound.to_duration(in_min_unit))
}

/// Cassandra's converter for a pre-4.1 duration given as a bare number in `unit`
/// (`max_hint_window_in_ms: 10800000`).
pub fn duration_from_quantity(
    quantity: i64,
    unit: TimeUnit,
    bound: DurationBound,
) -> Result<Duration, UnitError> {
    let Ok(quantity) = u64::try_from(quantity) else {
        return Err(UnitError(
            "Invalid duration: value must be non-negative".to_owned(),
        ));
    };
    let in_min_unit = unit.convert_to(quantity, bound.min_unit);
    if in_min_unit >= bound.max {
        return Err(UnitError(format!(
            "Invalid duration: {quantity} {}. It shouldn't be more than {} in {}",
            unit.java_name().to_lowercase(),
            bound.max - 1,
            bound.min_unit.java_name().to_lowercase()
        )));
    }
    Ok(bound.to_duration(in_min_unit))
}

/// Writes a duration in the largest unit at or above `min_unit` that holds it exactly
/// (`10s`, not `10000ms`), so it reads back to the same value.
pub fn format_duration(value: Duration, min_unit: TimeUnit) -> String {
    let nanos = value.as_nanos();
    if nanos == 0 {
        return format!("0{}", min_unit.symbol());
    }
    let unit = TimeUnit::ALL
        .iter()
        .rev()
        .copied()
        .filter(|u| *u >= min_unit)
        .find(|u| nanos.is_multiple_of(u128::from(u.nanos())))
        .unwrap_or(min_unit);
    format!("{}{}", nanos / u128::from(unit.nanos()), unit.symbol())
}

// ---------------------------------------------------------------------------------------------
// Data sizes

/// Cassandra's `DataStorageUnit`, in declaration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StorageUnit {
    Bytes,
    Kibibytes,
    Mebibytes,
    Gibibytes,
}

impl StorageUnit {
    const ALL: [StorageUnit; 4] = [
        StorageUnit::Bytes,
        StorageUnit::Kibibytes,
        StorageUnit::Mebibytes,
        StorageUnit::Gibibytes,
    ];

    /// Bytes in one of this unit.
    pub const fn bytes(self) -> u64 {
        match self {
            StorageUnit::Bytes => 1,
            StorageUnit::Kibibytes => 1 << 10,
            StorageUnit::Mebibytes => 1 << 20,
            StorageUnit::Gibibytes => 1 << 30,
        }
    }

    pub const fn symbol(self) -> &'static str {
        match self {
            StorageUnit::Bytes => "B",
            StorageUnit::Kibibytes => "KiB",
            StorageUnit::Mebibytes => "MiB",
            StorageUnit::Gibibytes => "GiB",
        }
    }

    fn from_symbol(symbol: &str) -> Option<StorageUnit> {
        StorageUnit::ALL.into_iter().find(|u| u.symbol() == symbol)
    }

    const fn java_name(self) -> &'static str {
        match self {
            StorageUnit::Bytes => "BYTES",
            StorageUnit::Kibibytes => "KIBIBYTES",
            StorageUnit::Mebibytes => "MEBIBYTES",
            StorageUnit::Gibibytes => "GIBIBYTES",
        }
    }

    fn convert_to(self, quantity: u64, min_unit: StorageUnit) -> u64 {
        saturating_scale(quantity, self.bytes() / min_unit.bytes())
    }
}

fn accepted_storage_units(min_unit: StorageUnit) -> String {
    let names: Vec<_> = StorageUnit::ALL
        .iter()
        .filter(|u| **u >= min_unit)
        .map(|u| u.java_name())
        .collect();
    format!("[{}]", names.join(", "))
}

/// The smallest unit and exclusive maximum of a data-size setting (`DataStorageSpec.*Bound`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StorageBound {
    pub min_unit: StorageUnit,
    /// Exclusive, counted in `min_unit`.
    pub max: u64,
}

impl StorageBound {
    pub const LONG_BYTES: StorageBound = StorageBound {
        min_unit: StorageUnit::Bytes,
        max: LONG_MAX,
    };
    pub const INT_BYTES: StorageBound = StorageBound {
        min_unit: StorageUnit::Bytes,
        max: INT_MAX,
    };
    pub const INT_KIBIBYTES: StorageBound = StorageBound {
        min_unit: StorageUnit::Kibibytes,
        max: INT_MAX,
    };
    pub const INT_MEBIBYTES: StorageBound = StorageBound {
        min_unit: StorageUnit::Mebibytes,
        max: INT_MAX,
    };
    pub const LONG_MEBIBYTES: StorageBound = StorageBound {
        min_unit: StorageUnit::Mebibytes,
        max: LONG_MAX,
    };

    fn to_bytes(self, in_min_unit: u64) -> u64 {
        // Saturates only for LONG_MEBIBYTES values past 8 EiB, which no setting uses.
        in_min_unit.saturating_mul(self.min_unit.bytes())
    }
}

/// Parses a Cassandra 4.1 data size such as `16MiB` or `5KiB`, returning bytes.
pub fn parse_storage(text: &str, bound: StorageBound) -> Result<u64, UnitError> {
    let (quantity, unit) = split_quantity(text)
        .and_then(|(q, symbol)| StorageUnit::from_symbol(symbol).map(|u| (q, u)))
        .ok_or_else(|| {
            UnitError(format!(
                "Invalid data storage: {text} Accepted units:{} where case matters and only \
                 non-negative values are accepted",
                accepted_storage_units(bound.min_unit)
            ))
        })?;
    if unit < bound.min_unit {
        return Err(UnitError(format!(
            "Invalid data storage: {text} Accepted units:{}",
            accepted_storage_units(bound.min_unit)
        )));
    }
    let in_min_unit = unit.convert_to(quantity, bound.min_unit);
    if in_min_unit >= bound.max {
        return Err(UnitError(format!(
            "Invalid data storage: {text}. It shouldn't be more than {} in {}",
            bound.max - 1,
            bound.min_unit.java_name().to_lowercase()
        )));
    }
    Ok(bound.to_bytes(in_min_unit))
}

/// Cassandra's converter for a pre-4.1 size given as a bare number in `unit`
/// (`commitlog_segment_size_in_mb: 32`), returning bytes.
pub fn storage_from_quantity(
    quantity: i64,
    unit: StorageUnit,
    bound: StorageBound,
) -> Result<u64, UnitError> {
    let Ok(quantity) = u64::try_from(quantity) else {
        return Err(UnitError(
            "Invalid data storage: value must be non-negative".to_owned(),
        ));
    };
    let in_min_unit = unit.convert_to(quantity, bound.min_unit);
    if in_min_unit >= bound.max {
        return Err(UnitError(format!(
            "Invalid data storage: {quantity} {}. It shouldn't be more than {} in {}",
            unit.java_name().to_lowercase(),
            bound.max - 1,
            bound.min_unit.java_name().to_lowercase()
        )));
    }
    Ok(bound.to_bytes(in_min_unit))
}

/// Writes a byte count in the largest unit at or above `min_unit` that holds it exactly.
pub fn format_storage(bytes: u64, min_unit: StorageUnit) -> String {
    if bytes == 0 {
        return format!("0{}", min_unit.symbol());
    }
    let unit = StorageUnit::ALL
        .iter()
        .rev()
        .copied()
        .filter(|u| *u >= min_unit)
        .find(|u| bytes.is_multiple_of(u.bytes()))
        .unwrap_or(min_unit);
    format!("{}{}", bytes / unit.bytes(), unit.symbol())
}

// ---------------------------------------------------------------------------------------------
// Data rates

/// Cassandra's `DataRateUnit`: `B/s`, `KiB/s`, `MiB/s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RateUnit {
    BytesPerSecond,
    KibibytesPerSecond,
    MebibytesPerSecond,
}

impl RateUnit {
    const ALL: [RateUnit; 3] = [
        RateUnit::BytesPerSecond,
        RateUnit::KibibytesPerSecond,
        RateUnit::MebibytesPerSecond,
    ];

    pub const fn bytes_per_second(self) -> u64 {
        match self {
            RateUnit::BytesPerSecond => 1,
            RateUnit::KibibytesPerSecond => 1 << 10,
            RateUnit::MebibytesPerSecond => 1 << 20,
        }
    }

    pub const fn symbol(self) -> &'static str {
        match self {
            RateUnit::BytesPerSecond => "B/s",
            RateUnit::KibibytesPerSecond => "KiB/s",
            RateUnit::MebibytesPerSecond => "MiB/s",
        }
    }

    const fn java_name(self) -> &'static str {
        match self {
            RateUnit::BytesPerSecond => "bytes_per_second",
            RateUnit::KibibytesPerSecond => "kibibytes_per_second",
            RateUnit::MebibytesPerSecond => "mebibytes_per_second",
        }
    }

    fn from_symbol(symbol: &str) -> Option<RateUnit> {
        RateUnit::ALL.into_iter().find(|u| u.symbol() == symbol)
    }
}

/// Parses a Cassandra 4.1 data rate such as `64MiB/s` into bytes per second, with the bound of
/// `DataRateSpec.LongBytesPerSecondBound` (the one `compaction_throughput` uses): below
/// `Long.MAX_VALUE` bytes per second.
pub fn parse_rate(text: &str) -> Result<u64, UnitError> {
    let (quantity, unit) = split_quantity(text)
        .and_then(|(q, symbol)| RateUnit::from_symbol(symbol).map(|u| (q, u)))
        .ok_or_else(|| {
            UnitError(format!(
                "Invalid data rate: {text} Accepted units: MiB/s, KiB/s, B/s where case matters \
                 and only non-negative values are valid"
            ))
        })?;
    let bytes = saturating_scale(quantity, unit.bytes_per_second());
    if bytes >= LONG_MAX {
        return Err(UnitError(format!(
            "Invalid data rate: {text}. It shouldn't be more than {} in bytes_per_second",
            LONG_MAX - 1
        )));
    }
    Ok(bytes)
}

/// Cassandra's converter for a pre-4.1 rate given as a bare number in `unit`
/// (`compaction_throughput_mb_per_sec: 64`), returning bytes per second.
pub fn rate_from_quantity(quantity: i64, unit: RateUnit) -> Result<u64, UnitError> {
    let Ok(quantity) = u64::try_from(quantity) else {
        return Err(UnitError(
            "Invalid data rate: value must be non-negative".to_owned(),
        ));
    };
    let bytes = saturating_scale(quantity, unit.bytes_per_second());
    if bytes >= LONG_MAX {
        return Err(UnitError(format!(
            "Invalid data rate: {quantity} {}. It shouldn't be more than {} in bytes_per_second",
            unit.java_name(),
            LONG_MAX - 1
        )));
    }
    Ok(bytes)
}

/// Writes a rate in the largest unit that holds it exactly.
pub fn format_rate(bytes_per_second: u64) -> String {
    if bytes_per_second == 0 {
        return "0B/s".to_owned();
    }
    let unit = RateUnit::ALL
        .iter()
        .rev()
        .copied()
        .find(|u| bytes_per_second.is_multiple_of(u.bytes_per_second()))
        .unwrap_or(RateUnit::BytesPerSecond);
    format!(
        "{}{}",
        bytes_per_second / unit.bytes_per_second(),
        unit.symbol()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: DurationBound = DurationBound::INT_MILLISECONDS;

    #[test]
    fn durations_in_every_unit() {
        let long_ns = DurationBound::LONG_NANOSECONDS;
        assert_eq!(parse_duration("10s", MS), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10000ms", MS), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("1h", MS), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("3m", MS), Ok(Duration::from_secs(180)));
        assert_eq!(parse_duration("2d", MS), Ok(Duration::from_secs(172_800)));
        assert_eq!(parse_duration("0ms", MS), Ok(Duration::ZERO));
        assert_eq!(parse_duration("007s", MS), Ok(Duration::from_secs(7)));
        assert_eq!(parse_duration("5us", long_ns), Ok(Duration::from_micros(5)));
        assert_eq!(parse_duration("5µs", long_ns), Ok(Duration::from_micros(5)));
        assert_eq!(parse_duration("5ns", long_ns), Ok(Duration::from_nanos(5)));
    }

    #[test]
    fn durations_refused_with_cassandras_message() {
        for bad in [
            "10", "10S", "10 s", " 10s", "-1s", "1.5s", "10sec", "s", "", "10Ms", "1e3ms",
        ] {
            let err = parse_duration(bad, MS).unwrap_err();
            assert_eq!(
                err.0,
                format!(
                    "Invalid duration: {bad} Accepted units:[MILLISECONDS, SECONDS, MINUTES, \
                     HOURS, DAYS] where case matters and only non-negative values."
                ),
                "{bad}"
            );
        }
        assert_eq!(
            parse_duration("10us", MS).unwrap_err().0,
            "Invalid duration: 10us Accepted units:[MILLISECONDS, SECONDS, MINUTES, HOURS, DAYS]"
        );
        assert_eq!(
            parse_duration("25d", MS).unwrap_err().0,
            "Invalid duration: 25d. It shouldn't be more than 2147483646 in milliseconds"
        );
        // 24 days fit an int of milliseconds; a long quantity that overflows saturates.
        assert!(parse_duration("24d", MS).is_ok());
        assert!(parse_duration("2147483646ms", MS).is_ok());
        assert!(parse_duration("2147483647ms", MS).is_err());
        assert!(parse_duration("9223372036854775807d", DurationBound::LONG_MILLISECONDS).is_err());
        assert!(parse_duration("9223372036854775808ms", DurationBound::LONG_MILLISECONDS).is_err());
    }

    #[test]
    fn old_duration_numbers() {
        assert_eq!(
            duration_from_quantity(10_000, TimeUnit::Milliseconds, MS),
            Ok(Duration::from_secs(10))
        );
        assert_eq!(
            duration_from_quantity(-1, TimeUnit::Milliseconds, MS)
                .unwrap_err()
                .0,
            "Invalid duration: value must be non-negative"
        );
        assert_eq!(
            duration_from_quantity(i64::from(i32::MAX), TimeUnit::Milliseconds, MS)
                .unwrap_err()
                .0,
            "Invalid duration: 2147483647 milliseconds. It shouldn't be more than 2147483646 \
             in milliseconds"
        );
    }

    #[test]
    fn sizes() {
        let mib = StorageBound::INT_MEBIBYTES;
        let kib = StorageBound::INT_KIBIBYTES;
        assert_eq!(parse_storage("16MiB", mib), Ok(16 << 20));
        assert_eq!(parse_storage("1GiB", mib), Ok(1 << 30));
        assert_eq!(parse_storage("5KiB", kib), Ok(5 << 10));
        assert_eq!(parse_storage("2MiB", kib), Ok(2 << 20));
        assert_eq!(parse_storage("0MiB", mib), Ok(0));
        assert_eq!(parse_storage("7B", StorageBound::INT_BYTES), Ok(7));
        for bad in [
            "16", "16mb", "16MB", "16mib", "16 MiB", "-1MiB", "1.5MiB", "0",
        ] {
            assert_eq!(
                parse_storage(bad, mib).unwrap_err().0,
                format!(
                    "Invalid data storage: {bad} Accepted units:[MEBIBYTES, GIBIBYTES] where \
                     case matters and only non-negative values are accepted"
                ),
                "{bad}"
            );
        }
        assert_eq!(
            parse_storage("512KiB", mib).unwrap_err().0,
            "Invalid data storage: 512KiB Accepted units:[MEBIBYTES, GIBIBYTES]"
        );
        assert_eq!(
            parse_storage("2097152GiB", mib).unwrap_err().0,
            "Invalid data storage: 2097152GiB. It shouldn't be more than 2147483646 in mebibytes"
        );
        assert_eq!(
            storage_from_quantity(-5, StorageUnit::Kibibytes, kib)
                .unwrap_err()
                .0,
            "Invalid data storage: value must be non-negative"
        );
        assert_eq!(
            storage_from_quantity(50, StorageUnit::Kibibytes, kib),
            Ok(50 << 10)
        );
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("64MiB/s"), Ok(64 << 20));
        assert_eq!(parse_rate("100KiB/s"), Ok(100 << 10));
        assert_eq!(parse_rate("0B/s"), Ok(0));
        for bad in [
            "64", "64MiB", "64mib/s", "64MB/s", "64 MiB/s", "-1MiB/s", "0",
        ] {
            assert_eq!(
                parse_rate(bad).unwrap_err().0,
                format!(
                    "Invalid data rate: {bad} Accepted units: MiB/s, KiB/s, B/s where case \
                     matters and only non-negative values are valid"
                )
            );
        }
        assert!(parse_rate("9223372036854775807B/s").is_err());
        assert!(parse_rate("9223372036854775806B/s").is_ok());
        assert!(parse_rate("8796093022208MiB/s").is_err());
        assert_eq!(
            rate_from_quantity(16, RateUnit::MebibytesPerSecond),
            Ok(16 << 20)
        );
        assert!(rate_from_quantity(-1, RateUnit::MebibytesPerSecond).is_err());
    }

    #[test]
    fn formatting_reads_back() {
        assert_eq!(
            format_duration(Duration::from_secs(10), TimeUnit::Milliseconds),
            "10s"
        );
        assert_eq!(
            format_duration(Duration::from_millis(1500), TimeUnit::Milliseconds),
            "1500ms"
        );
        assert_eq!(
            format_duration(Duration::from_secs(3 * 3600), TimeUnit::Milliseconds),
            "3h"
        );
        assert_eq!(
            format_duration(Duration::ZERO, TimeUnit::Milliseconds),
            "0ms"
        );
        assert_eq!(format_storage(32 << 20, StorageUnit::Mebibytes), "32MiB");
        assert_eq!(format_storage(5 << 10, StorageUnit::Kibibytes), "5KiB");
        assert_eq!(format_storage(1 << 30, StorageUnit::Mebibytes), "1GiB");
        assert_eq!(format_rate(64 << 20), "64MiB/s");
        assert_eq!(format_rate(1000), "1000B/s");
        for d in [1u64, 999, 1000, 60_000, 86_400_000 * 3] {
            let d = Duration::from_millis(d);
            let text = format_duration(d, TimeUnit::Milliseconds);
            assert_eq!(parse_duration(&text, MS), Ok(d), "{text}");
        }
    }
}
