//! What the storage engine knows about a table, and how it is kept on disk.
//!
//! The storage engine needs only a table's identity and storage options (compaction, gc grace,
//! compression); column names and types belong to the replica layer's schema. Each table
//! directory holds a `table.options` file written durably (temporary file, sync, rename, sync
//! directory): a version line then `key=value` lines, human readable on purpose.
//!
//! ```text
//! khata-table-options 1
//! id=5f0c...            keyspace=...            name=...
//! gc_grace_seconds=864000
//! default_time_to_live=0
//! compaction=size_tiered 4 32 0.5 1.5 52428800 | leveled 167772160 10 | time_window 86400
//! compression=lz4 | none
//! chunk_length_bytes=16384
//! truncated_at=<segment_id>:<offset>     (optional: commit-log records at or before are ignored)
//! comment=<text, with \n and \\ escaped>
//! ```

use khata_types::schema::{CompactionStrategy, Compression, TableOptions};
use uuid::Uuid;

use crate::commitlog::CommitLogPosition;

/// The header line of a `table.options` file.
pub const OPTIONS_HEADER: &str = "khata-table-options 1";

/// A table as the storage engine sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct TableSpec {
    pub id: Uuid,
    pub keyspace: String,
    pub name: String,
    pub options: TableOptions,
}

impl TableSpec {
    pub fn new(
        keyspace: impl Into<String>,
        name: impl Into<String>,
        options: TableOptions,
    ) -> Self {
        TableSpec {
            id: Uuid::new_v4(),
            keyspace: keyspace.into(),
            name: name.into(),
            options,
        }
    }

    /// The table's directory name: `<name>-<id without dashes>`, as Cassandra names them.
    pub fn dir_name(&self) -> String {
        format!("{}-{}", self.name, self.id.simple())
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Render a spec (and an optional truncation point) as a `table.options` file.
pub fn encode_spec(spec: &TableSpec, truncated_at: Option<CommitLogPosition>) -> String {
    let o = &spec.options;
    let compaction = match &o.compaction {
        CompactionStrategy::SizeTiered {
            min_threshold,
            max_threshold,
            bucket_low,
            bucket_high,
            min_sstable_size_bytes,
        } => {
            format!(
                "size_tiered {min_threshold} {max_threshold} {bucket_low} {bucket_high} {min_sstable_size_bytes}"
            )
        }
        CompactionStrategy::Leveled {
            sstable_size_bytes,
            fanout_size,
        } => {
            format!("leveled {sstable_size_bytes} {fanout_size}")
        }
        CompactionStrategy::TimeWindow {
            window_size_seconds,
        } => format!("time_window {window_size_seconds}"),
    };
    let compression = match o.compression {
        Compression::Lz4 => "lz4",
        Compression::None => "none",
    };
    let mut s = format!(
        "{OPTIONS_HEADER}\nid={}\nkeyspace={}\nname={}\ngc_grace_seconds={}\ndefault_time_to_live={}\ncompaction={}\ncompression={}\nchunk_length_bytes={}\n",
        spec.id,
        escape(&spec.keyspace),
        escape(&spec.name),
        o.gc_grace_seconds,
        o.default_time_to_live,
        compaction,
        compression,
        o.chunk_length_bytes
    );
    if let Some(p) = truncated_at {
        s.push_str(&format!("truncated_at={}:{}\n", p.segment_id, p.offset));
    }
    s.push_str(&format!("comment={}\n", escape(&o.comment)));
    s
}

fn parse_num<T: std::str::FromStr>(v: &str, what: &str) -> Result<T, String> {
    v.trim().parse().map_err(|_| format!("bad {what}: {v:?}"))
}

/// Parse a `table.options` file.
pub fn decode_spec(text: &str) -> Result<(TableSpec, Option<CommitLogPosition>), String> {
    let mut lines = text.lines();
    match lines.next() {
        Some(h) if h == OPTIONS_HEADER => {}
        Some(h) => {
            return Err(format!(
                "unknown header {h:?} (this build reads {OPTIONS_HEADER:?})"
            ));
        }
        None => return Err("empty file".into()),
    }
    let mut id = None;
    let (mut keyspace, mut name) = (None, None);
    let mut options = TableOptions::default();
    let mut truncated_at = None;
    for line in lines {
        if line.is_empty() {
            continue;
        }
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| format!("bad line {line:?}"))?;
        match k {
            "id" => id = Some(Uuid::parse_str(v).map_err(|e| format!("bad id: {e}"))?),
            "keyspace" => keyspace = Some(unescape(v)),
            "name" => name = Some(unescape(v)),
            "gc_grace_seconds" => options.gc_grace_seconds = parse_num(v, k)?,
            "default_time_to_live" => options.default_time_to_live = parse_num(v, k)?,
            "compression" => {
                options.compression = match v {
                    "lz4" => Compression::Lz4,
                    "none" => Compression::None,
                    _ => return Err(format!("bad compression {v:?}")),
                }
            }
            "chunk_length_bytes" => options.chunk_length_bytes = parse_num(v, k)?,
            "comment" => options.comment = unescape(v),
            "truncated_at" => {
                let (s, o) = v.split_once(':').ok_or("bad truncated_at")?;
                truncated_at = Some(CommitLogPosition {
                    segment_id: parse_num(s, k)?,
                    offset: parse_num(o, k)?,
                });
            }
            "compaction" => {
                let parts: Vec<&str> = v.split_whitespace().collect();
                options.compaction = match parts.as_slice() {
                    ["size_tiered", a, b, c, d, e] => CompactionStrategy::SizeTiered {
                        min_threshold: parse_num(a, k)?,
                        max_threshold: parse_num(b, k)?,
                        bucket_low: parse_num(c, k)?,
                        bucket_high: parse_num(d, k)?,
                        min_sstable_size_bytes: parse_num(e, k)?,
                    },
                    ["leveled", a, b] => CompactionStrategy::Leveled {
                        sstable_size_bytes: parse_num(a, k)?,
                        fanout_size: parse_num(b, k)?,
                    },
                    ["time_window", a] => CompactionStrategy::TimeWindow {
                        window_size_seconds: parse_num(a, k)?,
                    },
                    _ => return Err(format!("bad compaction {v:?}")),
                }
            }
            // Unknown keys from a newer build are ignored so that a downgrade can still start.
            _ => {}
        }
    }
    let spec = TableSpec {
        id: id.ok_or("missing id")?,
        keyspace: keyspace.ok_or("missing keyspace")?,
        name: name.ok_or("missing name")?,
        options,
    };
    Ok((spec, truncated_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for compaction in [
            CompactionStrategy::size_tiered(),
            CompactionStrategy::leveled(),
            CompactionStrategy::time_window(),
        ] {
            let spec = TableSpec::new(
                "ks",
                "t",
                TableOptions {
                    compaction,
                    comment: "a\nb\\c".into(),
                    gc_grace_seconds: 5,
                    ..Default::default()
                },
            );
            let pos = Some(CommitLogPosition {
                segment_id: 3,
                offset: 99,
            });
            let (back, t) = decode_spec(&encode_spec(&spec, pos)).unwrap();
            assert_eq!(back, spec);
            assert_eq!(t, pos);
        }
    }
}
