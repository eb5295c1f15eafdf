//! The stream log: one engine table per DynamoDB table with a stream, in the table's own
//! keyspace, named `<storage name>:streams` (DynamoDB names cannot hold `:`, so it never
//! clashes with a DynamoDB table, and ListTables does not show it: it has no DynamoDB
//! metadata). CQL sees it, as Alternator's `<table>_scylla_cdc_log`.
//!
//! | column | type | kind |
//! |---|---|---|
//! | `p` | `text` | partition key |
//! | `c` | `text` | clustering, ascending |
//! | `v` | `blob` | regular: a JSON document |
//!
//! Partitions:
//!
//! - `streams`: one row per stream of the table, clustered by label, `v` a
//!   [`StreamEntry`]; a disabled stream's row expires 24 hours after it was disabled.
//! - `shards/<label>`: the stream's shard directory, clustered by shard id (ids start with
//!   their creation time, so this is creation order), `v` a [`ShardEntry`]; a closed shard's
//!   row expires 24 hours after it closed.
//! - `<shard id>` (`shardId-...`): the shard's records, clustered by the 21-digit sequence
//!   number, `v` the record's JSON; every record expires 24 hours after it was written.
//!
//! The table uses the time-window compaction strategy (one-hour windows) and a one-hour
//! `gc_grace_seconds`: nearly everything in it expires, and a fully expired SSTable is
//! dropped whole.

use std::collections::BTreeMap;

use bytes::Bytes;
use khata_coordinator::catalog::{Mutation, TableSchema, column_id};
use khata_coordinator::{Consistency, Coordinator, CoordinatorError, ReadCommand};
use khata_types::LocalTime;
use khata_types::cell::{Cell, Expiry, LivenessInfo};
use khata_types::clustering::encode_key;
use khata_types::partition::Partition;
use khata_types::row::{CellKey, Row};
use khata_types::schema::{
    ClusteringOrder, ColumnDef, ColumnKind, CompactionStrategy, CqlType, TableDef, TableOptions,
};
use khata_types::token::DecoratedKey;
use uuid::Uuid;

use super::state::{ShardEntry, StreamEntry, format_sequence};
use crate::tables::{keyspace_name, storage_name};

/// The suffix of a log table's name.
pub const LOG_SUFFIX: &str = ":streams";
/// The partition of the stream entries.
pub const STREAMS_PARTITION: &str = "streams";
/// Seconds a record (and a closed shard's or disabled stream's entry) is kept.
pub const RETENTION_SECONDS: u32 = 24 * 3600;

/// The log table's name for DynamoDB table `table`.
pub fn log_table_name(table: &str) -> String {
    format!("{}{LOG_SUFFIX}", storage_name(table))
}

/// The partition of a stream's shard directory.
pub fn shards_partition(label: &str) -> String {
    format!("shards/{label}")
}

/// The log table of DynamoDB table `table`.
pub fn log_schema(table: &str, id: Uuid) -> TableSchema {
    let column = |name: &str, ty: CqlType, kind: ColumnKind| ColumnDef {
        id: column_id(name),
        name: name.to_string(),
        ty,
        kind,
    };
    let options = TableOptions {
        comment: format!("DynamoDB Streams log of table {table}"),
        compaction: CompactionStrategy::TimeWindow {
            window_size_seconds: 3600,
        },
        gc_grace_seconds: 3600,
        ..TableOptions::default()
    };
    TableSchema {
        def: TableDef {
            id,
            keyspace: keyspace_name(table),
            name: log_table_name(table),
            columns: vec![
                column("p", CqlType::Text, ColumnKind::PartitionKey { position: 0 }),
                column(
                    "c",
                    CqlType::Text,
                    ColumnKind::Clustering {
                        position: 0,
                        order: ClusteringOrder::Asc,
                    },
                ),
                column("v", CqlType::Blob, ColumnKind::Regular),
            ],
            options,
        },
        dropped: Vec::new(),
        indexes: Vec::new(),
    }
}

/// The clustering bytes of `c`.
pub fn clustering(c: &str) -> Bytes {
    // A text value always encodes (any bytes are a valid text clustering value here: the
    // encoding escapes them).
    encode_key(&[(CqlType::Text, ClusteringOrder::Asc)], &[c.as_bytes()]).unwrap_or_default()
}

/// The clustering bytes of a sequence number.
pub fn sequence_clustering(seq: u64) -> Bytes {
    clustering(&format_sequence(seq))
}

fn partition_key(p: &str) -> DecoratedKey {
    DecoratedKey::new(Bytes::copy_from_slice(p.as_bytes()))
}

/// How long a row lives: forever, or until `expires_at` (seconds since the epoch).
#[derive(Clone, Copy, Debug)]
pub enum Lifetime {
    Forever,
    Until(LocalTime),
}

impl Lifetime {
    /// Expiring [`RETENTION_SECONDS`] after `micros`.
    pub fn retained_from(micros: i64) -> Lifetime {
        let secs = micros.div_euclid(1_000_000) + i64::from(RETENTION_SECONDS);
        Lifetime::Until(LocalTime::try_from(secs.max(0)).unwrap_or(LocalTime::MAX))
    }
}

/// A row of the log table: partition `p`, clustering `c`, value `v`, at timestamp `ts`.
pub fn row(table: Uuid, p: &str, c: &str, v: Vec<u8>, ts: i64, life: Lifetime) -> Mutation {
    let value = column_id("v");
    let (liveness, cell) = match life {
        Lifetime::Forever => (LivenessInfo::new(ts, None), Cell::live(ts, v)),
        Lifetime::Until(at) => (
            LivenessInfo::new(ts, Some(Expiry::new(RETENTION_SECONDS, at))),
            Cell::expiring(ts, v, RETENTION_SECONDS, at),
        ),
    };
    let mut r = Row {
        liveness: Some(liveness),
        ..Row::default()
    };
    r.cells.insert(CellKey::simple(value), cell);
    let mut update = Partition::new();
    update.add_row(clustering(c), r);
    Mutation::new(table, partition_key(p), update)
}

/// The directory row of a shard.
pub fn shard_row(table: Uuid, label: &str, shard: &ShardEntry, ts: i64) -> Mutation {
    let life = match shard.closed_micros {
        None => Lifetime::Forever,
        Some(at) => Lifetime::retained_from(at),
    };
    // Plain data: serializing cannot fail.
    let v = serde_json::to_vec(shard).unwrap_or_default();
    row(
        table,
        &shards_partition(label),
        &shard.shard_id,
        v,
        ts,
        life,
    )
}

/// The entry row of a stream.
pub fn stream_row(table: Uuid, entry: &StreamEntry, ts: i64) -> Mutation {
    let life = match entry.disabled_micros {
        None => Lifetime::Forever,
        Some(at) => Lifetime::retained_from(at),
    };
    let v = serde_json::to_vec(entry).unwrap_or_default();
    row(table, STREAMS_PARTITION, &entry.label, v, ts, life)
}

/// The live `v` values of partition `p` in clustering range `[from, to)`, at most `limit`,
/// newest first when `reversed`.
pub async fn read_values(
    coordinator: &Coordinator,
    table: Uuid,
    p: &str,
    range: (Bytes, Bytes),
    limit: Option<usize>,
    reversed: bool,
) -> Result<Vec<Bytes>, CoordinatorError> {
    let now = coordinator.now_seconds();
    let read = coordinator
        .read(
            ReadCommand {
                table,
                key: partition_key(p),
                ranges: vec![range],
                reversed,
                row_limit: limit,
                one_row: false,
                now,
            },
            Consistency::LocalQuorum,
        )
        .await?;
    let value = CellKey::simple(column_id("v"));
    let rows = read.partition.live_rows(now);
    let pick =
        |(_, r): (&Bytes, &Row)| r.cells.get(&value).and_then(|c| c.live_value(now).cloned());
    Ok(if reversed {
        rows.rev().filter_map(pick).collect()
    } else {
        rows.filter_map(pick).collect()
    })
}

/// Every value of partition `p`, decoded as `T` (undecodable rows are skipped: the log is
/// written only by this module).
pub async fn read_all<T: serde::de::DeserializeOwned>(
    coordinator: &Coordinator,
    table: Uuid,
    p: &str,
) -> Result<Vec<T>, CoordinatorError> {
    let values = read_values(
        coordinator,
        table,
        p,
        khata_types::clustering::full_range(),
        None,
        false,
    )
    .await?;
    Ok(values
        .iter()
        .filter_map(|v| serde_json::from_slice(v).ok())
        .collect())
}

/// The stream entries of a log table, by label.
pub async fn streams(
    coordinator: &Coordinator,
    table: Uuid,
) -> Result<BTreeMap<String, StreamEntry>, CoordinatorError> {
    Ok(
        read_all::<StreamEntry>(coordinator, table, STREAMS_PARTITION)
            .await?
            .into_iter()
            .map(|e| (e.label.clone(), e))
            .collect(),
    )
}
