//! The table of configuration keys: for each setting its 4.1 name, how to read it, how to
//! write it back, and its other names (Cassandra's pre-4.1 names with their own value syntax,
//! and aliases matching the command-line flags).
//!
//! The order of [`KEYS`] is the order of `khata.yaml` and of [`Config::to_yaml`].

use std::path::PathBuf;

use serde_norway::{Number, Value};

use super::units::{
    DurationBound, StorageBound, StorageUnit, TimeUnit, format_duration, format_rate,
    format_storage,
};
use super::values as v;
use super::{CommitLogSync, Config, MAX_NUM_TOKENS};

/// Reads a value into the configuration, or says why it cannot.
pub(crate) type Setter = fn(&mut Config, &Value) -> Result<(), String>;
/// Renders the setting as YAML, in its 4.1 syntax.
pub(crate) type Getter = fn(&Config) -> Value;

/// One setting.
pub(crate) struct Key {
    /// The 4.1 name (`cassandra.yaml`'s where Cassandra has the setting).
    pub name: &'static str,
    pub get: Getter,
    pub set: Setter,
    /// Other names of the same setting, each with its own reader.
    pub aliases: &'static [(&'static str, Setter)],
}

const MS: TimeUnit = TimeUnit::Milliseconds;
const MIB: StorageUnit = StorageUnit::Mebibytes;
const KIB: StorageUnit = StorageUnit::Kibibytes;
const B: StorageUnit = StorageUnit::Bytes;

fn text(s: impl Into<String>) -> Value {
    Value::String(s.into())
}

fn number(n: impl Into<Number>) -> Value {
    Value::Number(n.into())
}

fn ms(d: std::time::Duration) -> Value {
    text(format_duration(d, MS))
}

fn mib(bytes: u64) -> Value {
    text(format_storage(bytes, MIB))
}

fn kib(bytes: u64) -> Value {
    text(format_storage(bytes, KIB))
}

/// A size of at least 1 MiB and below 2048 MiB (Cassandra's limits for commit-log segments
/// and native frames, which are addressed with Java ints).
fn positive_below_2gib(bytes: u64) -> Result<u64, String> {
    if bytes == 0 {
        return Err("must be positive".to_owned());
    }
    if bytes >= 2048 << 20 {
        return Err("must be smaller than 2048MiB".to_owned());
    }
    Ok(bytes)
}

fn positive(bytes: u64) -> Result<u64, String> {
    if bytes == 0 {
        return Err("must be positive".to_owned());
    }
    Ok(bytes)
}

/// Every setting, in `khata.yaml`'s order.
pub(crate) static KEYS: &[Key] = &[
    // --- identity and network --------------------------------------------------------------
    Key {
        name: "cluster_name",
        get: |c| text(c.cluster_name.clone()),
        set: |c, x| {
            c.cluster_name = v::name(x)?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "data_dir",
        get: |c| text(c.data_dir.to_string_lossy()),
        set: |c, x| {
            c.data_dir = PathBuf::from(v::name(x)?);
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "listen_address",
        get: |c| text(c.listen_address.to_string()),
        set: |c, x| {
            c.listen_address = v::bind_address(x)?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "native_transport_port",
        get: |c| number(c.native_transport_port),
        set: |c, x| {
            c.native_transport_port = v::port(x)?;
            Ok(())
        },
        aliases: &[("cql_port", |c, x| {
            c.native_transport_port = v::port(x)?;
            Ok(())
        })],
    },
    Key {
        name: "dynamo_port",
        get: |c| number(c.dynamo_port),
        set: |c, x| {
            c.dynamo_port = v::port(x)?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "dynamo_access_keys",
        get: |c| {
            Value::Mapping(
                c.dynamo_access_keys
                    .iter()
                    .map(|(k, s)| (text(k.clone()), text(s.clone())))
                    .collect(),
            )
        },
        set: |c, x| {
            c.dynamo_access_keys = v::access_keys(x)?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "storage_port",
        get: |c| number(c.storage_port),
        set: |c, x| {
            c.storage_port = v::port(x)?;
            Ok(())
        },
        aliases: &[("internode_port", |c, x| {
            c.storage_port = v::port(x)?;
            Ok(())
        })],
    },
    Key {
        name: "admin_port",
        get: |c| number(c.admin_port),
        set: |c, x| {
            c.admin_port = v::port(x)?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "seeds",
        get: |c| {
            let seeds: Vec<String> = c.seeds.iter().map(ToString::to_string).collect();
            text(seeds.join(","))
        },
        set: |c, x| {
            c.seeds = v::seeds(x)?;
            Ok(())
        },
        aliases: &[("seed_provider", |c, x| {
            c.seeds = v::seed_provider(x)?;
            Ok(())
        })],
    },
    Key {
        name: "dc",
        get: |c| text(c.dc.clone()),
        set: |c, x| {
            c.dc = v::name(x)?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "rack",
        get: |c| text(c.rack.clone()),
        set: |c, x| {
            c.rack = v::name(x)?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "num_tokens",
        get: |c| number(c.num_tokens),
        set: |c, x| {
            c.num_tokens = v::u32_in(x, 1, MAX_NUM_TOKENS)?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "default_keyspace_rf",
        get: |c| number(c.default_keyspace_rf),
        set: |c, x| {
            c.default_keyspace_rf = v::u32_in(x, 0, i32::MAX as u32)?;
            Ok(())
        },
        aliases: &[],
    },
    // --- commit log ------------------------------------------------------------------------
    Key {
        name: "commitlog_sync",
        get: |c| text(c.commitlog_sync.as_str()),
        set: |c, x| {
            let s = v::string(x)?;
            c.commitlog_sync = CommitLogSync::parse(&s)
                .ok_or_else(|| "expected periodic, group or batch".to_owned())?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "commitlog_sync_period",
        get: |c| ms(c.commitlog_sync_period),
        set: |c, x| {
            c.commitlog_sync_period = v::duration(x, DurationBound::INT_MILLISECONDS)?;
            Ok(())
        },
        aliases: &[("commitlog_sync_period_in_ms", |c, x| {
            c.commitlog_sync_period = v::old_duration_int(x, MS, DurationBound::INT_MILLISECONDS)?;
            Ok(())
        })],
    },
    Key {
        name: "commitlog_sync_group_window",
        get: |c| ms(c.commitlog_sync_group_window),
        set: |c, x| {
            c.commitlog_sync_group_window = v::duration(x, DurationBound::INT_MILLISECONDS)?;
            Ok(())
        },
        aliases: &[("commitlog_sync_group_window_in_ms", |c, x| {
            c.commitlog_sync_group_window =
                v::old_duration_double_ms(x, DurationBound::INT_MILLISECONDS)?;
            Ok(())
        })],
    },
    Key {
        name: "commitlog_segment_size",
        get: |c| mib(c.commitlog_segment_size_bytes),
        set: |c, x| {
            c.commitlog_segment_size_bytes =
                positive_below_2gib(v::storage(x, StorageBound::INT_MEBIBYTES)?)?;
            Ok(())
        },
        aliases: &[("commitlog_segment_size_in_mb", |c, x| {
            c.commitlog_segment_size_bytes =
                positive_below_2gib(v::old_storage_int(x, MIB, StorageBound::INT_MEBIBYTES)?)?;
            Ok(())
        })],
    },
    Key {
        name: "commitlog_total_space",
        get: |c| mib(c.commitlog_total_space_bytes),
        set: |c, x| {
            c.commitlog_total_space_bytes = positive(v::storage(x, StorageBound::INT_MEBIBYTES)?)?;
            Ok(())
        },
        aliases: &[("commitlog_total_space_in_mb", |c, x| {
            c.commitlog_total_space_bytes =
                positive(v::old_storage_int(x, MIB, StorageBound::INT_MEBIBYTES)?)?;
            Ok(())
        })],
    },
    // --- memory ----------------------------------------------------------------------------
    Key {
        name: "memtable_heap_space",
        get: |c| mib(c.memtable_heap_space_bytes),
        set: |c, x| {
            c.memtable_heap_space_bytes = positive(v::storage(x, StorageBound::INT_MEBIBYTES)?)?;
            Ok(())
        },
        aliases: &[("memtable_heap_space_in_mb", |c, x| {
            c.memtable_heap_space_bytes =
                positive(v::old_storage_int(x, MIB, StorageBound::INT_MEBIBYTES)?)?;
            Ok(())
        })],
    },
    Key {
        name: "memtable_flush_size",
        get: |c| mib(c.memtable_flush_size_bytes),
        set: |c, x| {
            c.memtable_flush_size_bytes = positive(v::storage(x, StorageBound::INT_MEBIBYTES)?)?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "file_cache_size",
        get: |c| mib(c.file_cache_size_bytes),
        set: |c, x| {
            c.file_cache_size_bytes = v::storage(x, StorageBound::INT_MEBIBYTES)?;
            Ok(())
        },
        aliases: &[("file_cache_size_in_mb", |c, x| {
            c.file_cache_size_bytes = v::old_storage_int(x, MIB, StorageBound::INT_MEBIBYTES)?;
            Ok(())
        })],
    },
    // --- compaction and tombstones ---------------------------------------------------------
    Key {
        name: "compaction_throughput",
        get: |c| text(format_rate(c.compaction_throughput_bytes_per_second)),
        set: |c, x| {
            c.compaction_throughput_bytes_per_second = v::rate(x)?;
            Ok(())
        },
        aliases: &[("compaction_throughput_mb_per_sec", |c, x| {
            c.compaction_throughput_bytes_per_second = v::old_rate_mib(x)?;
            Ok(())
        })],
    },
    Key {
        name: "concurrent_compactors",
        get: |c| number(c.concurrent_compactors),
        set: |c, x| {
            c.concurrent_compactors = v::u32_in(x, 1, i32::MAX as u32)?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "gc_grace_seconds",
        get: |c| number(c.gc_grace_seconds),
        set: |c, x| {
            c.gc_grace_seconds = v::u32_in(x, 0, i32::MAX as u32)?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "tombstone_warn_threshold",
        get: |c| number(c.tombstone_warn_threshold),
        set: |c, x| {
            c.tombstone_warn_threshold = v::u32_in(x, 0, i32::MAX as u32)?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "tombstone_failure_threshold",
        get: |c| number(c.tombstone_failure_threshold),
        set: |c, x| {
            c.tombstone_failure_threshold = v::u32_in(x, 0, i32::MAX as u32)?;
            Ok(())
        },
        aliases: &[],
    },
    // --- CQL limits ------------------------------------------------------------------------
    Key {
        name: "batch_size_warn_threshold",
        get: |c| kib(c.batch_size_warn_threshold_bytes),
        set: |c, x| {
            c.batch_size_warn_threshold_bytes = v::storage(x, StorageBound::INT_KIBIBYTES)?;
            Ok(())
        },
        aliases: &[("batch_size_warn_threshold_in_kb", |c, x| {
            c.batch_size_warn_threshold_bytes =
                v::old_storage_int(x, KIB, StorageBound::INT_KIBIBYTES)?;
            Ok(())
        })],
    },
    Key {
        name: "batch_size_fail_threshold",
        get: |c| kib(c.batch_size_fail_threshold_bytes),
        set: |c, x| {
            c.batch_size_fail_threshold_bytes = v::storage(x, StorageBound::INT_KIBIBYTES)?;
            Ok(())
        },
        aliases: &[("batch_size_fail_threshold_in_kb", |c, x| {
            c.batch_size_fail_threshold_bytes =
                v::old_storage_int(x, KIB, StorageBound::INT_KIBIBYTES)?;
            Ok(())
        })],
    },
    Key {
        name: "native_transport_max_frame_size",
        get: |c| mib(c.native_transport_max_frame_size_bytes),
        set: |c, x| {
            c.native_transport_max_frame_size_bytes =
                positive_below_2gib(v::storage(x, StorageBound::INT_MEBIBYTES)?)?;
            Ok(())
        },
        aliases: &[("native_transport_max_frame_size_in_mb", |c, x| {
            c.native_transport_max_frame_size_bytes =
                positive_below_2gib(v::old_storage_int(x, MIB, StorageBound::INT_MEBIBYTES)?)?;
            Ok(())
        })],
    },
    Key {
        name: "native_transport_max_concurrent_connections",
        get: |c| match c.native_transport_max_concurrent_connections {
            None => number(-1i64),
            Some(n) => number(n),
        },
        set: |c, x| {
            // Cassandra: a Java long, and any value <= 0 means no limit.
            let n = v::integer(x)?;
            c.native_transport_max_concurrent_connections =
                u64::try_from(n).ok().filter(|n| *n > 0);
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "concurrent_reads",
        get: |c| number(c.concurrent_reads),
        set: |c, x| {
            let n = v::integer(x)?;
            if n < 2 {
                return Err(format!("concurrent_reads must be at least 2, but was {n}"));
            }
            c.concurrent_reads = u32::try_from(n).map_err(|_| format!("{n} is too large"))?;
            Ok(())
        },
        aliases: &[],
    },
    // --- timeouts --------------------------------------------------------------------------
    Key {
        name: "request_timeout",
        get: |c| ms(c.request_timeout),
        set: |c, x| {
            c.request_timeout = v::duration(x, DurationBound::LONG_MILLISECONDS)?;
            Ok(())
        },
        aliases: &[("request_timeout_in_ms", |c, x| {
            c.request_timeout = v::old_duration_long(x, MS, DurationBound::LONG_MILLISECONDS)?;
            Ok(())
        })],
    },
    Key {
        name: "read_request_timeout",
        get: |c| ms(c.read_request_timeout),
        set: |c, x| {
            c.read_request_timeout = v::duration(x, DurationBound::LONG_MILLISECONDS)?;
            Ok(())
        },
        aliases: &[("read_request_timeout_in_ms", |c, x| {
            c.read_request_timeout = v::old_duration_long(x, MS, DurationBound::LONG_MILLISECONDS)?;
            Ok(())
        })],
    },
    Key {
        name: "write_request_timeout",
        get: |c| ms(c.write_request_timeout),
        set: |c, x| {
            c.write_request_timeout = v::duration(x, DurationBound::LONG_MILLISECONDS)?;
            Ok(())
        },
        aliases: &[("write_request_timeout_in_ms", |c, x| {
            c.write_request_timeout =
                v::old_duration_long(x, MS, DurationBound::LONG_MILLISECONDS)?;
            Ok(())
        })],
    },
    Key {
        name: "range_request_timeout",
        get: |c| ms(c.range_request_timeout),
        set: |c, x| {
            c.range_request_timeout = v::duration(x, DurationBound::LONG_MILLISECONDS)?;
            Ok(())
        },
        aliases: &[("range_request_timeout_in_ms", |c, x| {
            c.range_request_timeout =
                v::old_duration_long(x, MS, DurationBound::LONG_MILLISECONDS)?;
            Ok(())
        })],
    },
    Key {
        name: "cas_contention_timeout",
        get: |c| ms(c.cas_contention_timeout),
        set: |c, x| {
            c.cas_contention_timeout = v::duration(x, DurationBound::LONG_MILLISECONDS)?;
            Ok(())
        },
        aliases: &[("cas_contention_timeout_in_ms", |c, x| {
            c.cas_contention_timeout =
                v::old_duration_long(x, MS, DurationBound::LONG_MILLISECONDS)?;
            Ok(())
        })],
    },
    // --- hints and DynamoDB TTL ------------------------------------------------------------
    Key {
        name: "max_hint_window",
        get: |c| ms(c.max_hint_window),
        set: |c, x| {
            c.max_hint_window = v::duration(x, DurationBound::INT_MILLISECONDS)?;
            Ok(())
        },
        aliases: &[("max_hint_window_in_ms", |c, x| {
            c.max_hint_window = v::old_duration_int(x, MS, DurationBound::INT_MILLISECONDS)?;
            Ok(())
        })],
    },
    Key {
        name: "ttl_scan_period_seconds",
        get: |c| number(c.ttl_scan_period_seconds),
        set: |c, x| {
            c.ttl_scan_period_seconds = v::u32_in(x, 1, i32::MAX as u32)?;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "size_estimates_recording_interval",
        get: |c| ms(c.size_estimates_recording_interval),
        set: |c, x| {
            let interval = v::duration(x, DurationBound::INT_MILLISECONDS)?;
            if interval.is_zero() {
                return Err("must be greater than zero".into());
            }
            c.size_estimates_recording_interval = interval;
            Ok(())
        },
        aliases: &[],
    },
    Key {
        name: "dynamo_item_collection_size_limit",
        get: |c| text(format_storage(c.dynamo_item_collection_size_limit_bytes, B)),
        set: |c, x| {
            c.dynamo_item_collection_size_limit_bytes =
                positive(v::storage(x, StorageBound::LONG_BYTES)?)?;
            Ok(())
        },
        aliases: &[],
    },
];

/// The setting a name belongs to (its 4.1 name) and the reader for that name.
pub(crate) fn lookup(name: &str) -> Option<(&'static str, Setter)> {
    KEYS.iter().find_map(|key| {
        if key.name == name {
            return Some((key.name, key.set));
        }
        key.aliases
            .iter()
            .find(|(alias, _)| *alias == name)
            .map(|(_, set)| (key.name, *set))
    })
}

/// The known name closest to a misspelt one, if any is close (for "did you mean").
pub(crate) fn nearest(name: &str) -> Option<&'static str> {
    let names = KEYS
        .iter()
        .flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().map(|(a, _)| *a)));
    let limit = (name.chars().count() / 3).max(2);
    names
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = Vec::with_capacity(b.len() + 1);
        current.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = KEYS
            .iter()
            .flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().map(|(a, _)| *a)))
            .collect();
        let total = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), total, "a name appears twice in KEYS");
    }

    #[test]
    fn suggestions() {
        assert_eq!(nearest("comitlog_sync"), Some("commitlog_sync"));
        assert_eq!(nearest("num_token"), Some("num_tokens"));
        assert_eq!(nearest("listen_adress"), Some("listen_address"));
        assert_eq!(nearest("partitioner"), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
