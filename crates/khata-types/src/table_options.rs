//! Table options as Cassandra spells them: the `compaction` and `compression` maps of
//! `CREATE TABLE ... WITH` and of `system_schema.tables`, to and from [`TableOptions`].
//!
//! Class names may be given short (`SizeTieredCompactionStrategy`, `LZ4Compressor`) or fully
//! qualified, as Cassandra accepts; they are written fully qualified, as Cassandra writes them.
//! Unknown sub-options are refused with Cassandra's wording, so a typo does not pass silently.

use std::collections::BTreeMap;

use crate::java_text::java_double;
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
    let strategy = compaction_strategy(map)?;
    let unified = map
        .get("class")
        .is_some_and(|c| short(c, COMPACTION_PACKAGE) == "UnifiedCompactionStrategy");
    if let CompactionStrategy::Leveled {
        sstable_size_bytes,
        fanout_size,
    } = strategy
        && !unified
    {
        check_level_sizes(sstable_size_bytes / (1024 * 1024), fanout_size)?;
    }
    Ok(strategy)
}

/// A strategy from a `compaction` map read back from `system_schema.tables`: as
/// [`compaction_from_map`], without the checks added since an earlier khata kept the map, so
/// that a table it created still loads.
pub fn compaction_from_stored_map(
    map: &BTreeMap<String, String>,
) -> Result<CompactionStrategy, String> {
    compaction_strategy(map)
}

/// The options every strategy takes (Cassandra's `AbstractCompactionStrategy`).
const COMMON_COMPACTION_OPTIONS: &[&str] = &[
    "class",
    "enabled",
    "tombstone_threshold",
    "tombstone_compaction_interval",
    "unchecked_tombstone_compaction",
    "only_purge_repaired_tombstones",
    "log_all",
    "provide_overlapping_tombstones",
];

fn compaction_strategy(map: &BTreeMap<String, String>) -> Result<CompactionStrategy, String> {
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
                    k if COMMON_COMPACTION_OPTIONS.contains(&k) => {}
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
                    k if COMMON_COMPACTION_OPTIONS.contains(&k) => {}
                    // Cassandra adds both to every strategy's options.
                    "single_sstable_uplevel" | "min_threshold" | "max_threshold" => {}
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
                    k if COMMON_COMPACTION_OPTIONS.contains(&k) => {}
                    "timestamp_resolution"
                    | "expired_sstable_check_frequency_seconds"
                    | "unsafe_aggressive_sstable_expiration"
                    | "min_threshold"
                    | "max_threshold" => {}
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
        // Deprecated since Cassandra 3.8 and gone in 5.0, but 4.1 still takes it: khata
        // compacts such a table in one-day time windows, the nearest strategy it has.
        "DateTieredCompactionStrategy" => {
            for (k, v) in map {
                match k.as_str() {
                    k if COMMON_COMPACTION_OPTIONS.contains(&k) => {}
                    "timestamp_resolution"
                    | "expired_sstable_check_frequency_seconds"
                    | "min_threshold"
                    | "max_threshold" => {}
                    "base_time_seconds" | "max_window_size_seconds" => {
                        parse_number::<u64>(k, v)?;
                    }
                    "max_sstable_age_days" => {
                        parse_number::<f64>(k, v)?;
                    }
                    other => unknown.push(other),
                }
            }
            CompactionStrategy::TimeWindow {
                window_size_seconds: 86_400,
            }
        }
        // Cassandra 5.0's UnifiedCompactionStrategy: its options checked as its `Controller`
        // checks them, and the table compacted by the strategy its first scaling parameter
        // describes (UCS's "T<f>" is size-tiered with threshold and fanout f, "L<f>" leveled
        // with fanout f, "N" both at 2); the per-level parameters and the sharding by
        // token range are not khata's.
        "UnifiedCompactionStrategy" => {
            let mut scaling = vec![2i32];
            let mut target_bytes: u64 = 1 << 30;
            let mut max_to_compact: usize = 32;
            for (k, v) in map {
                match k.as_str() {
                    k if COMMON_COMPACTION_OPTIONS.contains(&k) => {}
                    "scaling_parameters" | "static_scaling_factors" => {
                        scaling = v
                            .split(',')
                            .map(|p| scaling_parameter(p.trim()))
                            .collect::<Result<_, _>>()?;
                    }
                    "target_sstable_size" => {
                        target_bytes = human_bytes(v)
                            .filter(|b| *b > 0)
                            .ok_or_else(|| format!("Invalid target sstable size {v}"))?;
                    }
                    "min_sstable_size" | "flush_size_override" => {
                        human_bytes(v).ok_or_else(|| format!("Invalid {k} {v}"))?;
                    }
                    "base_shard_count" => {
                        let n: i64 = parse_number(k, v)?;
                        if n <= 0 {
                            return Err(format!(
                                "Invalid configuration, base_shard_count should be positive: {n}"
                            ));
                        }
                    }
                    "sstable_growth" => {
                        let g: f64 = parse_number(k, v)?;
                        if !(0.0..=1.0).contains(&g) {
                            return Err(format!(
                                "Invalid configuration, sstable_growth should be between 0 and 1: {v}"
                            ));
                        }
                    }
                    "max_sstables_to_compact" => {
                        let n: i64 = parse_number(k, v)?;
                        max_to_compact = if n <= 0 { usize::MAX } else { n as usize };
                    }
                    "expired_sstable_check_frequency_seconds" => {
                        parse_number::<i64>(k, v)?;
                    }
                    "unsafe_aggressive_sstable_expiration"
                    | "overlap_inclusion_method"
                    | "log"
                    | "min_threshold"
                    | "max_threshold" => {}
                    other => unknown.push(other),
                }
            }
            let w = scaling.first().copied().unwrap_or(2);
            if w < 0 {
                CompactionStrategy::Leveled {
                    sstable_size_bytes: target_bytes,
                    fanout_size: (2 - w) as u32,
                }
            } else {
                let threshold = (2 + w) as usize;
                CompactionStrategy::SizeTiered {
                    min_threshold: threshold,
                    max_threshold: max_to_compact.max(threshold),
                    bucket_low: 0.5,
                    bucket_high: 1.5,
                    min_sstable_size_bytes: 50 * 1024 * 1024,
                }
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

/// One of UCS's scaling parameters as its `Controller.parseScalingParameter` reads it: `N`
/// (0), `T<f>` (tiered with fanout f: f - 2), `L<f>` (leveled with fanout f: 2 - f), or the
/// number itself.
fn scaling_parameter(text: &str) -> Result<i32, String> {
    let invalid = || format!("Unsupported scaling parameter format {text}");
    let upper = text.to_ascii_uppercase();
    let fanout = |rest: &str| -> Result<i32, String> {
        let f: i32 = rest.parse().map_err(|_| invalid())?;
        if f < 2 {
            return Err(invalid());
        }
        Ok(f)
    };
    match upper.as_bytes().first() {
        Some(b'N') if upper.len() == 1 => Ok(0),
        Some(b'T') => Ok(fanout(&upper[1..])? - 2),
        Some(b'L') => Ok(2 - fanout(&upper[1..])?),
        _ => upper.parse().map_err(|_| invalid()),
    }
}

/// A size as Cassandra's `FBUtilities.parseHumanReadableBytes` reads it: a number and an
/// optional unit (`B`, `KiB`, `MiB`, `GiB`, `TiB`, or the decimal `kB`, `MB`, `GB`, `TB`).
fn human_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let scale: f64 = match unit.trim() {
        "" | "B" => 1.0,
        "KiB" | "Ki" => 1024.0,
        "MiB" | "Mi" => 1024.0 * 1024.0,
        "GiB" | "Gi" => 1024.0 * 1024.0 * 1024.0,
        "TiB" | "Ti" => 1024.0f64.powi(4),
        "kB" | "KB" | "k" => 1e3,
        "MB" | "M" => 1e6,
        "GB" | "G" => 1e9,
        "TB" | "T" => 1e12,
        _ => return None,
    };
    let bytes = number * scale;
    (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}

/// Levels a leveled table may have (Cassandra's `LeveledGenerations.MAX_LEVEL_COUNT`).
const LEVEL_COUNT: i32 = 9;

/// Cassandra's `LeveledManifest.maxBytesForLevel` for the last level, which
/// `LeveledCompactionStrategy.validateOptions` computes so that a table whose levels could
/// not be sized is refused when created (CASSANDRA-20570) rather than when compacted.
fn check_level_sizes(sstable_size_mb: u64, fanout_size: u32) -> Result<(), String> {
    let sstable_bytes = sstable_size_mb as f64 * (1024.0 * 1024.0);
    let bytes = f64::from(fanout_size).powi(LEVEL_COUNT - 1) * sstable_bytes;
    if bytes > i64::MAX as f64 {
        return Err(format!(
            "At most {} bytes may be in a compaction level; your maxSSTableSize must be \
             absurdly high to compute {}",
            i64::MAX,
            java_double(bytes)
        ));
    }
    Ok(())
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

/// A setting from a `compression` map read back from `system_schema.tables`: as
/// [`compression_from_map`], but a map an earlier khata kept before a check was added (an
/// option its compressor does not take, a `min_compress_ratio` below 1) is still read, so that
/// the table it created loads.
pub fn compression_from_stored_map(
    map: &BTreeMap<String, String>,
) -> Result<(Compression, u32), String> {
    compression_from_map(map).or_else(|refusal| {
        let enabled = map
            .get("enabled")
            .is_none_or(|v| v.eq_ignore_ascii_case("true"));
        let class = map.get("class").or_else(|| map.get("sstable_compression"));
        let chunk_kb = map
            .get("chunk_length_in_kb")
            .or_else(|| map.get("chunk_length_kb"))
            .map_or(Ok(16), |v| v.trim().parse::<u32>())
            .ok()
            .filter(|kb| kb.is_power_of_two() && *kb <= 4096);
        match (enabled, class, chunk_kb) {
            (false, _, _) => Ok((Compression::None, 16 * 1024)),
            (true, Some(c), Some(kb)) if !c.is_empty() => Ok((Compression::Lz4, kb * 1024)),
            _ => Err(refusal),
        }
    })
}

/// The sub-options each compressor takes besides the class, the chunk length and
/// `min_compress_ratio` (each `ICompressor.supportedOptions`).
fn compressor_options(class: &str) -> &'static [&'static str] {
    match class {
        "LZ4Compressor" => &["lz4_compressor_type", "lz4_high_compressor_level"],
        "ZstdCompressor" => &["compression_level"],
        _ => &[],
    }
}

/// A setting from a `compression` map: the compression and the chunk length in bytes
/// (Cassandra 4.1's `CompressionParams.fromMap` and `validate`). An empty map is no
/// compression, as Cassandra reads it (enabled, but no class names a compressor).
pub fn compression_from_map(map: &BTreeMap<String, String>) -> Result<(Compression, u32), String> {
    let mut enabled = true;
    let mut class: Option<&str> = None;
    let mut chunk_kb: Option<&str> = None;
    let mut others: Vec<&str> = Vec::new();
    for (k, v) in map {
        match k.as_str() {
            "class" | "sstable_compression" => class = Some(v),
            "enabled" => enabled = v.eq_ignore_ascii_case("true"),
            "chunk_length_in_kb" | "chunk_length_kb" => chunk_kb = Some(v),
            // Moved to the table's own options; still taken here, as Cassandra takes it.
            "crc_check_chance" => {}
            other => others.push(other),
        }
    }
    if !map.is_empty() && enabled && class.is_none() {
        return Err("Missing sub-option 'class' for the 'compression' option.".into());
    }
    if !enabled {
        if map.len() > 1 {
            return Err(
                "If the 'enabled' option is set to false no other options must be specified".into(),
            );
        }
        return Ok((Compression::None, 16 * 1024));
    }
    // Each setting under one of its two names (`removeSstableCompressionClass`,
    // `removeChunkLength`).
    if map.contains_key("class") && map.contains_key("sstable_compression") {
        return Err(
            "The 'sstable_compression' option must not be used if the compression \
                    algorithm is already specified by the 'class' option"
                .into(),
        );
    }
    if map.contains_key("chunk_length_in_kb") && map.contains_key("chunk_length_kb") {
        return Err(
            "The 'chunk_length_kb' option must not be used if the chunk length is \
                    already specified by the 'chunk_length_in_kb' option"
                .into(),
        );
    }
    let chunk_kb = match chunk_kb {
        None => 16,
        Some(text) => {
            let kb: i64 = text
                .trim()
                .parse()
                .map_err(|_| "Invalid value for chunk_length_in_kb".to_string())?;
            if kb > i64::from(i32::MAX / 1024) {
                return Err(format!("Value of chunk_length_in_kb is too large ({kb})"));
            }
            kb
        }
    };
    if chunk_kb <= 0 {
        return Err("Invalid negative or null chunk_length_in_kb".into());
    }
    if !(chunk_kb as u64).is_power_of_two() {
        return Err("chunk_length_in_kb must be a power of 2".into());
    }
    // khata's own bound: a chunk is read whole into memory.
    if chunk_kb > 4096 {
        return Err(format!(
            "Invalid negative or too large chunk_length_in_kb: {chunk_kb}"
        ));
    }
    let chunk_bytes = chunk_kb as u32 * 1024;
    check_min_compress_ratio(map, chunk_bytes)?;
    let class = match class {
        // The legacy `sstable_compression` named no compressor with an empty class.
        Some("") if map.contains_key("sstable_compression") => {
            return Ok((Compression::None, chunk_bytes));
        }
        Some("") => {
            return Err(
                "The 'class' option must not be empty. To disable compression use 'enabled' : false"
                    .into(),
            );
        }
        // An empty map: no compressor.
        None => return Ok((Compression::None, chunk_bytes)),
        Some(class) => class,
    };
    let name = short(class, COMPRESSION_PACKAGE);
    // khata compresses with LZ4 whichever compressor is named: the others are accepted so
    // that schemas written for Cassandra load unchanged. `NoopCompressor` (Cassandra 4.0's)
    // stores chunks as they are.
    if !matches!(
        name.as_str(),
        "LZ4Compressor"
            | "SnappyCompressor"
            | "DeflateCompressor"
            | "ZstdCompressor"
            | "NoopCompressor"
    ) {
        let class = if class.contains('.') {
            class.to_string()
        } else {
            format!("{COMPRESSION_PACKAGE}{name}")
        };
        return Err(format!("Could not create Compression for type {class}"));
    }
    let supported = compressor_options(&name);
    if let Some(unknown) = others
        .iter()
        .find(|o| **o != "min_compress_ratio" && !supported.contains(o))
    {
        return Err(format!("Unknown compression options {unknown}"));
    }
    if name == "NoopCompressor" {
        return Ok((Compression::None, chunk_bytes));
    }
    Ok((Compression::Lz4, chunk_bytes))
}

/// `min_compress_ratio` as Cassandra checks it (`CompressionParams.validate`): the largest
/// compressed chunk it allows, the chunk length over the ratio, may not exceed the chunk
/// length unless the ratio is 0 (no limit).
fn check_min_compress_ratio(
    map: &BTreeMap<String, String>,
    chunk_bytes: u32,
) -> Result<(), String> {
    let Some(ratio) = min_compress_ratio(map)? else {
        return Ok(());
    };
    // Java's `(int) Math.ceil(Math.min(chunk / ratio, Integer.MAX_VALUE))`: `as` saturates and
    // makes NaN 0, as Java's cast does.
    let max_compressed = (f64::from(chunk_bytes) / ratio)
        .min(f64::from(i32::MAX))
        .ceil() as i32;
    if max_compressed < 0 {
        return Err("Invalid negative min_compress_ratio".into());
    }
    if i64::from(max_compressed) > i64::from(chunk_bytes) && max_compressed < i32::MAX {
        return Err("min_compress_ratio can either be 0 or greater than or equal to 1".into());
    }
    Ok(())
}

/// The `min_compress_ratio` given, as Java's `Double.parseDouble` reads it (a trailing `d` or
/// `f` allowed; `NaN` and `Infinity` spelled so).
fn min_compress_ratio(map: &BTreeMap<String, String>) -> Result<Option<f64>, String> {
    let Some(text) = map.get("min_compress_ratio") else {
        return Ok(None);
    };
    let trimmed = text.trim();
    let unsigned = trimmed.trim_start_matches(['+', '-']);
    let body = if matches!(unsigned, "NaN" | "Infinity") {
        trimmed
    } else {
        let body = trimmed
            .strip_suffix(['d', 'D', 'f', 'F'])
            .unwrap_or(trimmed);
        if !body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
        {
            return Err(format!(
                "{text} is not a valid value for min_compress_ratio"
            ));
        }
        body
    };
    body.parse::<f64>()
        .map(Some)
        .map_err(|_| format!("{text} is not a valid value for min_compress_ratio"))
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
/// false alone, or the compressor's other options with its class in full, the chunk length and
/// a `min_compress_ratio` other than 0 as a double.
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
                    | "min_compress_ratio"
            )
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // Kept as the double it was read as (`2` is `2.0`), and not at all when 0, the default.
    if let Ok(Some(ratio)) = min_compress_ratio(map)
        && ratio != 0.0
    {
        out.insert("min_compress_ratio".into(), java_double(ratio));
    }
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
    fn unified_compaction_compacts_by_its_first_scaling_parameter() {
        let ucs = |options: &[(&str, &str)]| {
            let mut m = map(&[("class", "UnifiedCompactionStrategy")]);
            m.extend(map(options));
            compaction_from_map(&m)
        };
        match ucs(&[]).unwrap() {
            CompactionStrategy::SizeTiered { min_threshold, .. } => assert_eq!(min_threshold, 4),
            other => panic!("T4 is tiered: {other:?}"),
        }
        match ucs(&[("scaling_parameters", "N")]).unwrap() {
            CompactionStrategy::SizeTiered { min_threshold, .. } => assert_eq!(min_threshold, 2),
            other => panic!("N is tiered at 2: {other:?}"),
        }
        match ucs(&[
            ("scaling_parameters", "L10, T4"),
            ("target_sstable_size", "256MiB"),
        ])
        .unwrap()
        {
            CompactionStrategy::Leveled {
                fanout_size,
                sstable_size_bytes,
            } => {
                assert_eq!(fanout_size, 10);
                assert_eq!(sstable_size_bytes, 256 << 20);
            }
            other => panic!("L10 is leveled: {other:?}"),
        }
        match ucs(&[("scaling_parameters", "-8")]).unwrap() {
            CompactionStrategy::Leveled { fanout_size, .. } => assert_eq!(fanout_size, 10),
            other => panic!("-8 is L10: {other:?}"),
        }
        assert!(ucs(&[("scaling_parameters", "Q2")]).is_err());
        assert!(ucs(&[("target_sstable_size", "1 parsec")]).is_err());
        assert_eq!(human_bytes("1GiB"), Some(1 << 30));
        assert_eq!(human_bytes("100MB"), Some(100_000_000));
        assert_eq!(human_bytes("4096"), Some(4096));
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

    #[test]
    fn empty_compression_map_is_no_compression() {
        let (c, chunk) = compression_from_map(&BTreeMap::new()).unwrap();
        assert_eq!(c, Compression::None);
        assert_eq!(
            compression_map_as_given(&BTreeMap::new(), c, chunk),
            map(&[("enabled", "false")])
        );
        assert_eq!(
            compression_from_map(&map(&[("enabled", "false"), ("class", "LZ4Compressor")]))
                .unwrap_err(),
            "If the 'enabled' option is set to false no other options must be specified"
        );
        assert!(
            compression_from_map(&map(&[("class", "")]))
                .unwrap_err()
                .starts_with("The 'class' option must not be empty.")
        );
    }

    #[test]
    fn min_compress_ratio_is_checked_and_kept_as_a_double() {
        let as_given = |ratio: &str| {
            let given = map(&[("class", "LZ4Compressor"), ("min_compress_ratio", ratio)]);
            compression_from_map(&given)
                .map(|(c, chunk)| compression_map_as_given(&given, c, chunk))
        };
        assert_eq!(
            as_given("2")
                .unwrap()
                .get("min_compress_ratio")
                .map(String::as_str),
            Some("2.0")
        );
        assert_eq!(
            as_given("1.5")
                .unwrap()
                .get("min_compress_ratio")
                .map(String::as_str),
            Some("1.5")
        );
        assert_eq!(as_given("0").unwrap().get("min_compress_ratio"), None);
        assert_eq!(
            as_given("0.5").unwrap_err(),
            "min_compress_ratio can either be 0 or greater than or equal to 1"
        );
        assert_eq!(
            as_given("-1").unwrap_err(),
            "Invalid negative min_compress_ratio"
        );
        assert!(as_given("abc").is_err());
    }

    #[test]
    fn compressors_take_only_their_options() {
        assert_eq!(
            compression_from_map(&map(&[
                ("class", "LZ4Compressor"),
                ("compression_level", "3")
            ]))
            .unwrap_err(),
            "Unknown compression options compression_level"
        );
        assert!(
            compression_from_map(&map(&[
                ("class", "LZ4Compressor"),
                ("lz4_compressor_type", "high")
            ]))
            .is_ok()
        );
        assert_eq!(
            compression_from_map(&map(&[
                ("class", "LZ4Compressor"),
                ("chunk_length_in_kb", "3")
            ]))
            .unwrap_err(),
            "chunk_length_in_kb must be a power of 2"
        );
        assert_eq!(
            compression_from_map(&map(&[
                ("class", "LZ4Compressor"),
                ("chunk_length_in_kb", "0")
            ]))
            .unwrap_err(),
            "Invalid negative or null chunk_length_in_kb"
        );
    }

    #[test]
    fn leveled_levels_must_be_sizable() {
        let lcs = |fanout: &str, size: &str| {
            compaction_from_map(&map(&[
                ("class", "LeveledCompactionStrategy"),
                ("fanout_size", fanout),
                ("sstable_size_in_mb", size),
            ]))
        };
        assert!(
            lcs("90", "1089")
                .unwrap_err()
                .contains("your maxSSTableSize must be absurdly high to compute")
        );
        assert!(lcs("10", "160").is_ok());
        assert!(lcs("20", "100").is_ok());
    }
}
