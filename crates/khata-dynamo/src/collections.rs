//! Item collections of tables with local secondary indexes: their size, DynamoDB's 10 GB
//! limit (`ItemCollectionSizeLimitExceededException`) and `ReturnItemCollectionMetrics`.
//!
//! An item collection is every item of a table with one partition key value, plus their
//! entries in the table's local secondary indexes (developer guide, "Item collections in Local
//! Secondary Indexes"). Its size is what DynamoDB counts: each item's size
//! ([`Item::size_bytes`]) and, for each LSI holding the item, the entry's size (the table and
//! index keys and the projected attributes) plus 100 bytes of overhead.
//!
//! **Where the size is kept.** A table created with LSIs has one more column, the static
//! `bigint` [`COLLECTION_COLUMN`]: one cell per partition holding the collection's size in
//! bytes. Every write to such a table is a compare-and-set (it reads the old item under the
//! partition's lock, [`khata_replica::Replica::cas`]), so it knows what it removes and adds,
//! and writes the new size in the same mutation as the item (the same commit-log record).
//! All writers of a partition hold its lock, so the sizes never race. A write that would grow
//! a collection past the limit is refused whole; one that shrinks it always passes. Tables
//! created before this column existed have no size kept (no limit, no metrics).

use std::collections::BTreeMap;

use bytes::Bytes;
use khata_coordinator::catalog::{Mutation, TableSchema, column_id};
use khata_types::cell::Cell;
use khata_types::partition::Partition;
use khata_types::row::CellKey;
use khata_types::token::DecoratedKey;
use khata_types::{ColumnId, LocalTime, Timestamp};
use serde_json::{Map as JsonMap, Value};
use uuid::Uuid;

use crate::indexes::IndexStatus;
use crate::items::{ItemLayout, column_value};
use crate::value::{AttributeValue, Item};

/// The static column holding a partition's item collection size, in bytes.
pub const COLLECTION_COLUMN: &str = ":collection";

/// DynamoDB's limit on an item collection: 10 GB.
pub const DEFAULT_LIMIT_BYTES: u64 = 10 * 1024 * 1024 * 1024;

/// The overhead DynamoDB counts for each local secondary index entry.
pub const LSI_ENTRY_OVERHEAD_BYTES: u64 = 100;

/// The message of `ItemCollectionSizeLimitExceededException`.
pub const LIMIT_MESSAGE: &str = "Collection size exceeded.";

/// How a table keeps its item collections' sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Collections {
    column: ColumnId,
    /// The largest size a write may grow a collection to.
    pub limit: u64,
}

impl Collections {
    /// The collections of `table`, if it keeps their sizes (it was created with LSIs).
    pub fn of(table: &TableSchema, limit: u64) -> Option<Collections> {
        let column = table.def.column(COLLECTION_COLUMN)?.id;
        Some(Collections { column, limit })
    }

    /// The size stored in `partition` (what a compare-and-set read), 0 when none is.
    pub fn stored(&self, partition: &Partition, now: LocalTime) -> u64 {
        partition
            .static_row
            .cells
            .get(&CellKey::simple(self.column))
            .and_then(|c| c.live_value(now))
            .and_then(|v| <[u8; 8]>::try_from(v.as_ref()).ok())
            .map_or(0, |b| i64::from_be_bytes(b).max(0) as u64)
    }

    /// Put the size `bytes` into `update` (a mutation of the collection's partition) at `ts`.
    pub fn store(&self, update: &mut Partition, bytes: u64, ts: Timestamp) {
        update.static_row.cells.insert(
            CellKey::simple(self.column),
            Cell::live(ts, Bytes::copy_from_slice(&(bytes as i64).to_be_bytes())),
        );
    }
}

/// What `item` (absent: nothing) adds to its collection: its size and its LSI entries'.
pub fn contribution(layout: &ItemLayout, item: Option<&Item>) -> u64 {
    let Some(item) = item else { return 0 };
    let mut bytes = item.size_bytes() as u64;
    for index in layout.indexes.iter() {
        if index.global || index.status == IndexStatus::Deleting {
            continue;
        }
        if index.entry_key(item).is_some() {
            bytes += index.project(item).size_bytes() as u64 + LSI_ENTRY_OVERHEAD_BYTES;
        }
    }
    bytes
}

/// A collection's size after a write: `stored` less what `old` held plus what `new` holds.
/// `Err` when the write grows the collection past `limit`.
pub fn resize(stored: u64, removed: u64, added: u64, limit: u64) -> Result<u64, u64> {
    let size = stored.saturating_sub(removed).saturating_add(added);
    if added > removed && size > limit {
        Err(size)
    } else {
        Ok(size)
    }
}

/// `ItemCollectionMetrics` of one collection: its key and DynamoDB's estimate of its size in
/// GB, a lower and an upper bound one GB apart.
pub fn metrics_json(hash: &(String, AttributeValue), bytes: u64) -> Value {
    const GB: f64 = (1u64 << 30) as f64;
    let low = (bytes as f64 / GB).floor();
    let mut key = JsonMap::new();
    key.insert(hash.0.clone(), hash.1.to_json());
    let mut out = JsonMap::new();
    out.insert("ItemCollectionKey".into(), Value::Object(key));
    out.insert(
        "SizeEstimateRangeGB".into(),
        Value::Array(vec![float(low), float(low + 1.0)]),
    );
    Value::Object(out)
}

fn float(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// `ReturnItemCollectionMetrics`: whether it is `SIZE` (absent is `NONE`), or the message of
/// DynamoDB's ValidationException.
pub fn wanted(req: &JsonMap<String, Value>) -> Result<bool, crate::item_ops::OpError> {
    match crate::item_ops::string(req, "ReturnItemCollectionMetrics")? {
        None | Some("NONE") => Ok(false),
        Some("SIZE") => Ok(true),
        Some(other) => Err(crate::item_ops::OpError::Validation(format!(
            "1 validation error detected: Value '{other}' at 'returnItemCollectionMetrics' failed to satisfy constraint: Member must satisfy enum value set: [SIZE, NONE]"
        ))),
    }
}

/// The collection sizes a batch or transaction changes, partition by partition: several of
/// its items may share a collection, so the sizes are added up and written once.
#[derive(Debug, Default)]
pub struct Tracker {
    parts: BTreeMap<(Uuid, Bytes), Tracked>,
}

#[derive(Debug)]
struct Tracked {
    collections: Collections,
    table_name: String,
    key: DecoratedKey,
    hash: (String, AttributeValue),
    stored: u64,
    removed: u64,
    added: u64,
    ts: Timestamp,
    /// The positions (in the request) of the writes to this collection.
    writers: Vec<usize>,
}

/// A collection a batch or transaction would grow past its limit.
#[derive(Debug)]
pub struct Exceeded {
    /// The positions of the writes to it.
    pub writers: Vec<usize>,
}

/// The size of one collection a write left, for `ItemCollectionMetrics`.
#[derive(Clone, Debug)]
pub struct Metric {
    pub table_name: String,
    pub hash: (String, AttributeValue),
    pub bytes: u64,
}

impl Metric {
    pub fn to_json(&self) -> Value {
        metrics_json(&self.hash, self.bytes)
    }

    /// The `ItemCollectionMetrics` map of a batch or transaction: table name to a list.
    pub fn map_json(metrics: &[Metric]) -> Value {
        let mut out: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
        for m in metrics {
            out.entry(&m.table_name).or_default().push(m.to_json());
        }
        Value::Object(
            out.into_iter()
                .map(|(t, v)| (t.to_string(), Value::Array(v)))
                .collect(),
        )
    }
}

impl Tracker {
    /// Note the write at position `who` of `old` -> `new` to the item in partition `key` of
    /// a table with `layout`, whose partition read (under the lock) is `read`. Tables that
    /// keep no sizes are ignored.
    #[allow(clippy::too_many_arguments)]
    pub fn note(
        &mut self,
        who: usize,
        table_name: &str,
        layout: &ItemLayout,
        key: &DecoratedKey,
        read: &Partition,
        old: Option<&Item>,
        new: Option<&Item>,
        ts: Timestamp,
        now: LocalTime,
    ) {
        let Some(collections) = layout.collections else {
            return;
        };
        let slot = (layout.table.def.id, key.key.clone());
        let t = self.parts.entry(slot).or_insert_with(|| Tracked {
            collections,
            table_name: table_name.to_string(),
            key: key.clone(),
            hash: (
                layout.hash.0.clone(),
                column_value(layout.hash.1, &key.key).unwrap_or(AttributeValue::Null),
            ),
            stored: collections.stored(read, now),
            removed: 0,
            added: 0,
            ts,
            writers: Vec::new(),
        });
        t.removed += contribution(layout, old);
        t.added += contribution(layout, new);
        t.ts = t.ts.max(ts);
        t.writers.push(who);
    }

    /// The mutations that store the new sizes, and the sizes; or every collection the writes
    /// would grow past its limit.
    pub fn finish(self) -> Result<(Vec<Mutation>, Vec<Metric>), Vec<Exceeded>> {
        let mut mutations = Vec::with_capacity(self.parts.len());
        let mut metrics = Vec::with_capacity(self.parts.len());
        let mut exceeded = Vec::new();
        for ((table, _), t) in self.parts {
            match resize(t.stored, t.removed, t.added, t.collections.limit) {
                Ok(bytes) => {
                    let mut update = Partition::new();
                    t.collections.store(&mut update, bytes, t.ts);
                    mutations.push(Mutation::new(table, t.key, update));
                    metrics.push(Metric {
                        table_name: t.table_name,
                        hash: t.hash,
                        bytes,
                    });
                }
                Err(_) => exceeded.push(Exceeded { writers: t.writers }),
            }
        }
        if exceeded.is_empty() {
            Ok((mutations, metrics))
        } else {
            Err(exceeded)
        }
    }
}

/// The id of [`COLLECTION_COLUMN`], for schemas.
pub fn column() -> ColumnId {
    column_id(COLLECTION_COLUMN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resize_refuses_only_growth_past_the_limit() {
        assert_eq!(resize(100, 10, 20, 1000), Ok(110));
        assert_eq!(resize(990, 0, 20, 1000), Err(1010));
        // Shrinking an oversized collection passes, as does a write that does not grow it.
        assert_eq!(resize(2000, 500, 10, 1000), Ok(1510));
        assert_eq!(resize(2000, 10, 10, 1000), Ok(2000));
        // A size that was never stored does not go below zero.
        assert_eq!(resize(0, 50, 0, 1000), Ok(0));
    }

    #[test]
    fn metrics_are_one_gb_apart() {
        let hash = ("PK".to_string(), AttributeValue::S("u".into()));
        assert_eq!(
            metrics_json(&hash, 10),
            serde_json::json!({"ItemCollectionKey": {"PK": {"S": "u"}}, "SizeEstimateRangeGB": [0.0, 1.0]})
        );
        assert_eq!(
            metrics_json(&hash, 3 << 30),
            serde_json::json!({"ItemCollectionKey": {"PK": {"S": "u"}}, "SizeEstimateRangeGB": [3.0, 4.0]})
        );
    }
}
