//! Table options as Cassandra spells them: the `compaction` and `compression` maps of
//! `CREATE TABLE ... WITH` and of `system_schema.tables`, to and from [`TableOptions`].
//!
//! Class names may be given short (`SizeTieredCompactionStrategy`, `LZ4Compressor`) or fully
//! qualified, as Cassandra accepts; they are written fully qualified, as Cassandra writes them.
//! Unknown sub-options are refused with Cassandra's wording, so a typo does not pass silently.

use std::collections::BTreeMap;

use crate::schema::{CompactionStrategy, Compression, TableOptions};

const COMPACTION_PACKAGE: &str = "org.apache.cassandra.db.compaction.";
const COMPRESSION_PACKAGE: &str = "org.apache.cassandra.io.compress.";

fn short(class: &str, package: &str) -> String {
    class.strip_prefix(package).unwrap_or(class).to_string()
}

/// The `compaction` map `system_schema.tables` and `DESCRIBE` show: the one given, else the
/// strategy's.
pub fn reported_compaction_map(o: &TableOptions) -> BTreeMap<String, String> {
    if o.reported.compaction.is_empty() {
        compaction_to_map(&o.compaction)
    } else {
        o.reported.compaction.clone()
    }
}

/// The `compression` map `system_schema.tables` and `DESCRIBE` show: the one given, else the
/// setting's.
pub fn reported_compression_map(o: &TableOptions) -> BTreeMap<String, String> {
    if o.reported.compression.is_empty() {
        compression_to_map(o.compression, o.chunk_length_bytes)
    } else {
        o.reported.compression.clone()
    }
}

/// Forget the given maps that say no more than the strategy and setting do, so that equal
/// options compare (and digest) equal whether they were given, defaulted or read back.
pub fn normalize_reported_maps(o: &mut TableOptions) {
    if o.reported.compaction == compaction_to_map(&o.compaction) {
        o.reported.compaction.clear();
    }
    if o.reported.compression == compression_to_map(o.compression, o.chunk_length_bytes) {
        o.reported.compression.clear();
    }
}

/// The `compaction` map of a strategy.
pub fn compaction_to_map(strategy: &CompactionStrategy) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    match strategy {
        CompactionStrategy::SizeTiered {
            min_threshold,
            max_threshold,
            ..
        } => {
            m.insert(
                "class".into(),
                format!("{COMPACTION_PACKAGE}SizeTieredCompactionStrategy"),
            );
            m.insert("max_threshold".into(), max_threshold.to_string());
            m.insert("min_threshold".into(), min_threshold.to_string());
        }
        CompactionStrategy::Leveled {
            sstable_size_bytes,
            fanout_size,
        } => {
            m.insert(
                "class".into(),
                format!("{COMPACTION_PACKAGE}LeveledCompactionStrategy"),
            );
            m.insert(
                "sstable_size_in_mb".into(),
                (sstable_size_bytes / (1024 * 1024)).to_string(),
            );
            m.insert("fanout_size".into(), fanout_size.to_string());
        }
        CompactionStrategy::TimeWindow {
            window_size_seconds,
        } => {
            m.insert(
                "class".into(),
                format!("{COMPACTION_PACKAGE}TimeWindowCompactionStrategy"),
            );
            let (unit, size) = if window_size_seconds % 86_400 == 0 {
                ("DAYS", window_size_seconds / 86_400)
            } else if window_size_seconds % 3_600 == 0 {
                ("HOURS", window_size_seconds / 3_600)
            } else {
                ("MINUTES", (window_size_seconds / 60).max(1))
            };
            m.insert("compaction_window_unit".into(), unit.into());
            m.insert("compaction_window_size".into(), size.to_string());
        }
    }
    m
}

fn parse_number<T: std::str::FromStr>(key: &str, value: &str) -> Result<T, String> {
    value
        .trim()
        .parse()
        .map_err(|_| format!("{value} is not a valid value for {key}"))
}

/// A strategy from a `compaction` map (Cassandra's option names and errors).
pub fn compaction_from_map(map: &BTreeMap<String, String>) -> Result<CompactionStrategy, String> {
    let Some(class) = map.get("class") else {
        return Err("Missing sub-option 'class' for the 'compaction' option.".into());
    };
    let mut unknown: Vec<&str> = Vec::new();
    let strategy = match short(class, COMPACTION_PACKAGE).as_str() {
        "SizeTieredCompactionStrategy" => {
            let CompactionStrategy::SizeTiered {
                mut min_threshold,
                mut max_threshold,
                bucket_low,
                bucket_high,
                min_sstable_size_bytes,
            } = CompactionStrategy::size_tiered()
            else {
                unreachable!("size_tiered() is size-tiered")
            };
            for (k, v) in map {
                match k.as_str() {
                    "class"
                    | "enabled"
                    | "tombstone_threshold"
                    | "tombstone_compaction_interval"
                    | "unchecked_tombstone_compaction"
                    | "only_purge_repaired_tombstones"
                    | "log_all"
                    | "provide_overlapping_tombstones" => {}
                    "min_threshold" => min_threshold = parse_number(k, v)?,
                    "max_threshold" => max_threshold = parse_number(k, v)?,
                    "bucket_low" | "bucket_high" | "min_sstable_size" => {}
                    other => unknown.push(other),
                }
            }
            if min_threshold < 2 {
                return Err(format!(
                    "min_threshold must be at least 2, but was {min_threshold}"
                ));
            }
            if max_threshold < min_threshold {
                return Err(format!(
                    "max_threshold cannot be less than min_threshold ({max_threshold} < {min_threshold})"
                ));
            }
            CompactionStrategy::SizeTiered {
                min_threshold,
                max_threshold,
                bucket_low,
                bucket_high,
                min_sstable_size_bytes,
            }
        }
        "LeveledCompactionStrategy" => {
            let mut sstable_size_mb: u64 = 160;
            let mut fanout_size: u32 = 10;
            for (k, v) in map {
                match k.as_str() {
                    "class"
                    | "enabled"
                    | "tombstone_threshold"
                    | "tombstone_compaction_interval"
                    | "unchecked_tombstone_compaction"
                    | "only_purge_repaired_tombstones"
                    | "log_all"
                    | "single_sstable_uplevel"
                    | "provide_overlapping_tombstones"
                    // Cassandra adds both to every strategy's options.
                    | "min_threshold"
                    | "max_threshold" => {}
                    "sstable_size_in_mb" => sstable_size_mb = parse_number(k, v)?,
                    "fanout_size" => fanout_size = parse_number(k, v)?,
                    other => unknown.push(other),
                }
            }
            if sstable_size_mb == 0 {
                return Err("sstable_size_in_mb must be larger than 0, but was 0".into());
            }
            if fanout_size < 2 {
                return Err(format!(
                    "fanout_size must be at least 2, but was {fanout_size}"
                ));
            }
            CompactionStrategy::Leveled {
                sstable_size_bytes: sstable_size_mb * 1024 * 1024,
                fanout_size,
            }
        }
        "TimeWindowCompactionStrategy" => {
            let mut unit_seconds = 86_400u64;
            let mut size = 1u64;
            for (k, v) in map {
                match k.as_str() {
                    "class"
                    | "enabled"
                    | "tombstone_threshold"
                    | "tombstone_compaction_interval"
                    | "unchecked_tombstone_compaction"
                    | "only_purge_repaired_tombstones"
                    | "log_all"
                    | "timestamp_resolution"
                    | "expired_sstable_check_frequency_seconds"
                    | "unsafe_aggressive_sstable_expiration"
                    | "min_threshold"
                    | "max_threshold"
                    | "provide_overlapping_tombstones" => {}
                    "compaction_window_unit" => {
                        unit_seconds = match v.to_ascii_uppercase().as_str() {
                            "MINUTES" => 60,
                            "HOURS" => 3_600,
                            "DAYS" => 86_400,
                            _ => {
                                return Err(format!("{v} is not valid for compaction_window_unit"));
                            }
                        }
                    }
                    "compaction_window_size" => size = parse_number(k, v)?,
                    other => unknown.push(other),
                }
            }
            if size == 0 {
                return Err("compaction_window_size must be greater than 0".into());
            }
            CompactionStrategy::TimeWindow {
                window_size_seconds: unit_seconds * size,
            }
        }
        other => {
            return Err(format!(
                "Unable to find compaction strategy class '{}'",
                if other.contains('.') {
                    other.to_string()
                } else {
                    format!("{COMPACTION_PACKAGE}{other}")
                }
            ));
        }
    };
    if !unknown.is_empty() {
        return Err(format!(
            "Properties specified [{}] are not understood by {}",
            unknown.join(", "),
            short(class, COMPACTION_PACKAGE)
        ));
    }
    Ok(strategy)
}

/// The `compression` map of a setting.
pub fn compression_to_map(
    compression: Compression,
    chunk_length_bytes: u32,
) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    match compression {
        Compression::Lz4 => {
            m.insert(
                "chunk_length_in_kb".into(),
                (chunk_length_bytes / 1024).to_string(),
            );
            m.insert(
                "class".into(),
                format!("{COMPRESSION_PACKAGE}LZ4Compressor"),
            );
        }
        Compression::None => {
            m.insert("enabled".into(), "false".into());
        }
    }
    m
}

/// A setting from a `compression` map: the compression and the chunk length in bytes.
pub fn compression_from_map(map: &BTreeMap<String, String>) -> Result<(Compression, u32), String> {
    let mut chunk_kb: u32 = 16;
    let mut enabled = true;
    let mut class: Option<&str> = None;
    for (k, v) in map {
        match k.as_str() {
            "class" | "sstable_compression" => class = Some(v),
            "enabled" => enabled = v.eq_ignore_ascii_case("true"),
            "chunk_length_in_kb" | "chunk_length_kb" => chunk_kb = parse_number(k, v)?,
            "crc_check_chance"
            | "min_compress_ratio"
            | "compression_level"
            | "lz4_compressor_type"
            | "lz4_high_compressor_level" => {}
            other => return Err(format!("Unknown compression options {other}")),
        }
    }
    // Cassandra's CompressionParams.fromMap: enabled compression names its class first.
    if !map.is_empty() && enabled && class.is_none() {
        return Err("Missing sub-option 'class' for the 'compression' option.".into());
    }
    if !chunk_kb.is_power_of_two() {
        return Err(format!(
            "chunk_length_in_kb must be a power of 2, but was {chunk_kb}"
        ));
    }
    if !(1..=4096).contains(&chunk_kb) {
        return Err(format!(
            "Invalid negative or too large chunk_length_in_kb: {chunk_kb}"
        ));
    }
    let compression = match class.map(|c| short(c, COMPRESSION_PACKAGE)) {
        _ if !enabled => Compression::None,
        None => return Err("Missing sub-option 'class' for the 'compression' option.".into()),
        Some(c) if c.is_empty() => Compression::None,
        // khata compresses with LZ4 whichever compressor is named: the others are accepted so
        // that schemas written for Cassandra load unchanged.
        Some(c)
            if matches!(
                c.as_str(),
                "LZ4Compressor" | "SnappyCompressor" | "DeflateCompressor" | "ZstdCompressor"
            ) =>
        {
            Compression::Lz4
        }
        Some(c) => {
            let class = class.unwrap_or_default();
            let class = if class.contains('.') {
                class.to_string()
            } else {
                format!("{COMPRESSION_PACKAGE}{c}")
            };
            return Err(format!("Could not create Compression for type {class}"));
        }
    };
    Ok((compression, chunk_kb * 1024))
}

/// A `compaction` map as Cassandra keeps what was given (`CompactionParams.create` and
/// `asMap`): the options as written, the class in full, `min_threshold` and `max_threshold`
/// added when not given. Call it on a map [`compaction_from_map`] accepted.
pub fn compaction_map_as_given(map: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut out = map.clone();
    if let Some(class) = map.get("class") {
        let full = if class.contains('.') {
            class.clone()
        } else {
            format!("{COMPACTION_PACKAGE}{class}")
        };
        out.insert("class".into(), full);
    }
    out.entry("min_threshold".into())
        .or_insert_with(|| "4".into());
    out.entry("max_threshold".into())
        .or_insert_with(|| "32".into());
    out
}

/// A `compression` map as Cassandra keeps what was given (`CompressionParams.asMap`): `enabled`
/// false alone, or the compressor's other options with its class in full and the chunk length.
/// Call it on a map [`compression_from_map`] accepted, with the chunk length it read.
pub fn compression_map_as_given(
    map: &BTreeMap<String, String>,
    compression: Compression,
    chunk_length_bytes: u32,
) -> BTreeMap<String, String> {
    let class = map.get("class").or_else(|| map.get("sstable_compression"));
    let (Compression::Lz4, Some(class)) = (compression, class) else {
        return compression_to_map(compression, chunk_length_bytes);
    };
    let mut out: BTreeMap<String, String> = map
        .iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "class"
                    | "sstable_compression"
                    | "enabled"
                    | "chunk_length_kb"
                    | "chunk_length_in_kb"
                    | "crc_check_chance"
            )
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let full = if class.contains('.') {
        class.clone()
    } else {
        format!("{COMPRESSION_PACKAGE}{class}")
    };
    out.insert("class".into(), full);
    out.insert(
        "chunk_length_in_kb".into(),
        (chunk_length_bytes / 1024).to_string(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(items: &[(&str, &str)]) -> BTreeMap<String, String> {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn strategies_round_trip() {
        for s in [
            CompactionStrategy::size_tiered(),
            CompactionStrategy::leveled(),
            CompactionStrategy::time_window(),
            CompactionStrategy::TimeWindow {
                window_size_seconds: 7_200,
            },
        ] {
            assert_eq!(compaction_from_map(&compaction_to_map(&s)).unwrap(), s);
        }
    }

    #[test]
    fn short_names_and_errors() {
        assert_eq!(
            compaction_from_map(&map(&[("class", "LeveledCompactionStrategy")])).unwrap(),
            CompactionStrategy::leveled()
        );
        assert!(
            compaction_from_map(&map(&[("class", "Nope")]))
                .unwrap_err()
                .contains("Unable to find compaction strategy class")
        );
        assert!(
            compaction_from_map(&map(&[
                ("class", "SizeTieredCompactionStrategy"),
                ("bogus", "1")
            ]))
            .unwrap_err()
            .contains("[bogus]")
        );
    }

    #[test]
    fn maps_as_given() {
        assert_eq!(
            compaction_map_as_given(&map(&[
                ("class", "LeveledCompactionStrategy"),
                ("tombstone_threshold", "0.3")
            ])),
            map(&[
                (
                    "class",
                    "org.apache.cassandra.db.compaction.LeveledCompactionStrategy"
                ),
                ("max_threshold", "32"),
                ("min_threshold", "4"),
                ("tombstone_threshold", "0.3"),
            ])
        );
        let given = map(&[("class", "ZstdCompressor"), ("compression_level", "5")]);
        let (c, chunk) = compression_from_map(&given).unwrap();
        assert_eq!(
            compression_map_as_given(&given, c, chunk),
            map(&[
                ("chunk_length_in_kb", "16"),
                ("class", "org.apache.cassandra.io.compress.ZstdCompressor"),
                ("compression_level", "5"),
            ])
        );
        let off = map(&[("enabled", "false")]);
        let (c, chunk) = compression_from_map(&off).unwrap();
        assert_eq!(compression_map_as_given(&off, c, chunk), off);
    }

    #[test]
    fn compression_maps() {
        assert_eq!(
            compression_from_map(&compression_to_map(Compression::Lz4, 16384)).unwrap(),
            (Compression::Lz4, 16384)
        );
        assert_eq!(
            compression_from_map(&map(&[("enabled", "false")]))
                .unwrap()
                .0,
            Compression::None
        );
        assert!(
            compression_from_map(&map(&[
                ("class", "LZ4Compressor"),
                ("chunk_length_in_kb", "3")
            ]))
            .is_err()
        );
        assert_eq!(
            compression_from_map(&map(&[("chunk_length_in_kb", "3")])).unwrap_err(),
            "Missing sub-option 'class' for the 'compression' option."
        );
        assert_eq!(
            compression_from_map(&map(&[("class", "FooCompressor")])).unwrap_err(),
            "Could not create Compression for type org.apache.cassandra.io.compress.FooCompressor"
        );
    }
}
