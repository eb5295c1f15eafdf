//! Global and local secondary indexes.
//!
//! **Storage.** Each index is a hidden engine table in its base table's keyspace (created and
//! dropped by schema changes; DynamoDB's ListTables does not see it, since only base tables
//! carry the [`crate::tables::EXTENSION`] metadata). Its name is Alternator's: `T:I` for GSI
//! `I` of table `T`, `T!:I` for an LSI (cut and hashed past 192 characters, as table names
//! are). Its key, with the key encodings of [`crate::items`] (S as text, N as the
//! order-preserving number encoding, B as bytes):
//!
//! ```text
//! partition key  the index hash key value
//! clustering     the index range key value (if the index has one), then the table's hash
//!                and range key values that are not already part of the index key
//! row            a row marker at the timestamp of the write that gave the item this key
//! ```
//!
//! So one index hash value is one partition sorted by the index range key (DynamoDB's
//! order), and each entry names its base item.
//!
//! A GSI with a multi-attribute key (up to four HASH and four RANGE attributes) has one
//! partition key column per HASH attribute (a composite partition key, serialized as
//! Cassandra's) and one clustering column per RANGE attribute, in key schema order, before
//! the table keys: one combination of HASH values is one partition, sorted by the RANGE values
//! as a tuple, each by its own type's order. With one attribute per role this is the layout
//! above, so indexes made before multi-attribute keys keep their storage. An entry holds no attributes: Query and Scan
//! read the base item for each entry and project it there (KEYS_ONLY: the table and index
//! keys; INCLUDE: those and the named attributes; ALL: everything). docs/format/dynamo-items.md
//! has the byte layout.
//!
//! **Writes.** [`index_entries`] gives the entries a write of an item makes; callers put them
//! in the same `Coordinator::write` or compare-and-set mutation list as the base write, base
//! mutation first, so they are one commit-log record and a visible entry never outruns its
//! item. Nothing is read before an unconditional write (except on tables with LSIs, whose
//! writes all read the old item, [`crate::collections`]), so an overwritten or deleted item
//! leaves its old entry behind; where the old item is known anyway (conditional writes,
//! UpdateItem) [`obsolete_entries`] deletes the old entry at once, one microsecond below the
//! write (the write replaces every value that could have made that entry).
//!
//! **Reads** ([`query`]) check every entry against its base item, read after the entry: an
//! entry whose item is gone or has other index key values is skipped and deleted with a
//! tombstone at the entry's own timestamp, which shadows that entry and no later rewrite of it
//! (the cleanup of Cassandra's secondary indexes, `khata-replica/src/index.rs`).
//!
//! **Creation and deletion** ([`build`]). Indexes given to CreateTable are empty and ACTIVE at
//! once. A GSI added by UpdateTable is `CREATING` (Backfilling) while a background task scans
//! the base table and writes each item's entry at the timestamp of its index key values (so a
//! concurrent write that moved the item on, or its tombstone, wins); writes are indexed from
//! the moment the index is in the metadata. A deleted GSI is `DELETING` until its table is
//! dropped. Both states are in the table's metadata, so a restart resumes them.
//!
//! The 10 GB item collection limit of tables with LSIs is [`crate::collections`]; index
//! capacity units are [`crate::capacity::Consumed::with_index_writes`].

pub mod build;
pub mod query;

use std::collections::BTreeSet;
use std::sync::Arc;

use bytes::Bytes;
use khata_coordinator::catalog::{Mutation, TableSchema, column_id};
use khata_types::cell::{DeletionTime, LivenessInfo};
use khata_types::clustering::encode_key as encode_clustering;
use khata_types::partition::Partition;
use khata_types::row::Row;
use khata_types::schema::{
    ClusteringOrder, ColumnDef, ColumnKind, CqlType, TableDef, TableOptions,
};
use khata_types::token::{DecoratedKey, serialize_partition_key, split_partition_key};
use khata_types::{LocalTime, Timestamp};
use serde_json::Value;
use uuid::Uuid;

use crate::items::{
    ItemLayout, MAX_HASH_KEY_BYTES, MAX_RANGE_KEY_BYTES, clustering_type, column_bytes,
    column_value, key_type_of, type_letter,
};
use crate::tables::{IndexMeta, TableMeta, key_column_type, keyspace_name, storage_name};
use crate::value::{AttributeValue, Item, KeyType, ValidationError};

/// The key of an index table's own marker in its `extensions`: the base table and index name.
pub const INDEX_EXTENSION: &str = "khata:dynamodb-index";

/// DynamoDB's limit on attributes projected by INCLUDE, over all of a table's indexes.
pub const MAX_PROJECTED_ATTRIBUTES: usize = 100;

/// Where an index is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexStatus {
    /// Being backfilled: written to, not readable.
    Creating,
    Active,
    /// Being dropped: neither written nor readable.
    Deleting,
}

impl IndexStatus {
    pub fn of(meta: &IndexMeta) -> IndexStatus {
        match meta.index_status.as_deref() {
            Some("CREATING") => IndexStatus::Creating,
            Some("DELETING") => IndexStatus::Deleting,
            _ => IndexStatus::Active,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            IndexStatus::Creating => "CREATING",
            IndexStatus::Active => "ACTIVE",
            IndexStatus::Deleting => "DELETING",
        }
    }
}

/// What an index projects besides the keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Projected {
    All,
    KeysOnly,
    Include(BTreeSet<String>),
}

impl Projected {
    pub fn of(projection: &Value) -> Projected {
        match projection.get("ProjectionType").and_then(Value::as_str) {
            Some("KEYS_ONLY") => Projected::KeysOnly,
            Some("INCLUDE") => Projected::Include(
                projection
                    .get("NonKeyAttributes")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            _ => Projected::All,
        }
    }
}

/// One index of a table, as writes and reads use it.
#[derive(Clone, Debug)]
pub struct IndexLayout {
    pub name: String,
    pub global: bool,
    /// The HASH attributes, in key schema order (one, or up to four for a GSI).
    pub hash: Vec<(String, KeyType)>,
    /// The RANGE attributes, in key schema order (none, one, or up to four for a GSI).
    pub range: Vec<(String, KeyType)>,
    pub projection: Projected,
    pub status: IndexStatus,
    /// The engine table of the entries.
    pub table: Uuid,
    /// The entry clustering columns: the index range key, then the table keys not in the
    /// index key.
    pub clustering: Vec<(String, KeyType)>,
}

/// The engine table name of index `index` of table `table`.
pub fn index_storage_name(table: &str, index: &str, global: bool) -> String {
    let sep = if global { ":" } else { "!:" };
    storage_name(&format!("{table}{sep}{index}"))
}

fn key_type(meta: &TableMeta, name: &str) -> Result<KeyType, String> {
    match meta.attribute_type(name) {
        Some("S") => Ok(KeyType::S),
        Some("N") => Ok(KeyType::N),
        Some("B") => Ok(KeyType::B),
        other => Err(format!(
            "table {}: key {name} has type {other:?}",
            meta.table_name
        )),
    }
}

/// The key columns of an index's entries: the partition key columns (the HASH attributes)
/// first, then the clustering columns.
fn entry_columns(meta: &TableMeta, index: &IndexMeta) -> Result<Vec<(String, KeyType)>, String> {
    let mut names: Vec<&str> = Vec::new();
    for k in &index.key_schema {
        names.push(&k.attribute_name);
    }
    for k in &meta.key_schema {
        if !names.contains(&k.attribute_name.as_str()) {
            names.push(&k.attribute_name);
        }
    }
    names
        .into_iter()
        .map(|n| Ok((n.to_string(), key_type(meta, n)?)))
        .collect()
}

/// The engine table of an index (`global`: a GSI).
pub fn table_schema(
    meta: &TableMeta,
    index: &IndexMeta,
    global: bool,
    id: Uuid,
) -> Result<TableSchema, String> {
    let columns = entry_columns(meta, index)?;
    let hashes = hash_count(index);
    let defs = columns
        .iter()
        .enumerate()
        .map(|(i, (name, t))| ColumnDef {
            id: column_id(name),
            name: name.clone(),
            ty: key_column_type(type_letter(*t)),
            kind: if i < hashes {
                ColumnKind::PartitionKey { position: i as u16 }
            } else {
                ColumnKind::Clustering {
                    position: (i - hashes) as u16,
                    order: ClusteringOrder::Asc,
                }
            },
        })
        .collect();
    let marker = serde_json::json!({
        "TableName": meta.table_name,
        "IndexName": index.index_name,
        "Global": global,
    });
    let options = TableOptions {
        comment: format!(
            "DynamoDB {} secondary index {} of table {}",
            if global { "global" } else { "local" },
            index.index_name,
            meta.table_name
        ),
        extensions: std::collections::BTreeMap::from([(
            INDEX_EXTENSION.to_string(),
            marker.to_string().into_bytes(),
        )]),
        ..TableOptions::default()
    };
    Ok(TableSchema {
        def: TableDef {
            id,
            keyspace: keyspace_name(&meta.table_name),
            name: index_storage_name(&meta.table_name, &index.index_name, global),
            columns: defs,
            options,
        },
        dropped: Vec::new(),
        indexes: Vec::new(),
    })
}

/// How many HASH attributes an index's key has (its key schema lists them first).
fn hash_count(index: &IndexMeta) -> usize {
    index
        .key_schema
        .iter()
        .take_while(|k| k.key_type == "HASH")
        .count()
        .max(1)
}

/// The indexes of a table that have their engine table (all of them, unless metadata from
/// before indexes were kept is waiting for its build).
pub fn layouts(meta: &TableMeta) -> Result<Vec<IndexLayout>, String> {
    let globals = meta.global_secondary_indexes.iter().map(|i| (i, true));
    let locals = meta.local_secondary_indexes.iter().map(|i| (i, false));
    let mut out = Vec::new();
    for (index, global) in globals.chain(locals) {
        let Some(table) = index.table() else {
            continue;
        };
        let mut columns = entry_columns(meta, index)?;
        let clustering = columns.split_off(hash_count(index));
        let ranges = index
            .key_schema
            .iter()
            .filter(|k| k.key_type == "RANGE")
            .count();
        out.push(IndexLayout {
            name: index.index_name.clone(),
            global,
            hash: columns,
            range: clustering[..ranges].to_vec(),
            projection: Projected::of(&index.projection),
            status: IndexStatus::of(index),
            table,
            clustering,
        });
    }
    Ok(out)
}

fn invalid(message: String) -> ValidationError {
    ValidationError(message)
}

impl IndexLayout {
    /// The index key attributes (hash, then range).
    pub fn key_names(&self) -> impl Iterator<Item = &(String, KeyType)> {
        self.hash.iter().chain(&self.range)
    }

    /// Whether the index key has more than one attribute in a role (a multi-attribute GSI key).
    pub fn multi_attribute(&self) -> bool {
        self.hash.len() > 1 || self.range.len() > 1
    }

    /// The partition of the index that these HASH values (in key schema order) name.
    pub fn partition_of(&self, values: &[Vec<u8>]) -> Option<DecoratedKey> {
        let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
        serialize_partition_key(&refs).ok().map(DecoratedKey::new)
    }

    fn clustering_types(&self) -> Vec<(CqlType, ClusteringOrder)> {
        self.clustering
            .iter()
            .map(|(_, t)| (clustering_type(*t), ClusteringOrder::Asc))
            .collect()
    }

    /// Check the index key attributes `item` has (DynamoDB's messages); the table's own key
    /// attributes were checked as such.
    pub fn check(&self, table: &ItemLayout, item: &Item) -> Result<(), ValidationError> {
        let table_keys = [Some(&table.hash.0), table.range.as_ref().map(|r| &r.0)];
        for (i, (name, t)) in self.key_names().enumerate() {
            let is_hash = i < self.hash.len();
            if table_keys.contains(&Some(name)) {
                continue;
            }
            let Some(v) = item.get(name) else { continue };
            if key_type_of(v) != Some(*t) {
                return Err(invalid(format!(
                    "One or more parameter values were invalid: Type mismatch for Index Key {name} Expected: {} Actual: {} IndexName: {}",
                    type_letter(*t),
                    v.type_name(),
                    self.name
                )));
            }
            let empty = match v {
                AttributeValue::S(s) if s.is_empty() => Some("string"),
                AttributeValue::B(b) if b.is_empty() => Some("binary"),
                _ => None,
            };
            if let Some(what) = empty {
                return Err(invalid(format!(
                    "One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty {what} value. IndexName: {}, IndexKey: {name}",
                    self.name
                )));
            }
            let size = column_bytes(v).len();
            if is_hash && size > MAX_HASH_KEY_BYTES {
                return Err(invalid(format!(
                    "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of{MAX_HASH_KEY_BYTES} bytes"
                )));
            }
            if !is_hash && size > MAX_RANGE_KEY_BYTES {
                return Err(invalid(format!(
                    "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of {MAX_RANGE_KEY_BYTES} bytes"
                )));
            }
        }
        Ok(())
    }

    /// The entry of `item` (partition, clustering), or `None` if the item lacks an index key
    /// attribute or has one of another type (it is not in the index: a sparse index).
    pub fn entry_key(&self, item: &Item) -> Option<(DecoratedKey, Bytes)> {
        let typed = |(name, t): &(String, KeyType)| {
            item.get(name)
                .filter(|v| key_type_of(v) == Some(*t))
                .map(column_bytes)
                .filter(|b| !b.is_empty())
        };
        let mut hashes = Vec::with_capacity(self.hash.len());
        for column in &self.hash {
            hashes.push(typed(column)?);
        }
        let partition = self.partition_of(&hashes)?;
        let mut values = Vec::with_capacity(self.clustering.len());
        for column in &self.clustering {
            values.push(typed(column)?);
        }
        let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
        let clustering = encode_clustering(&self.clustering_types(), &refs).ok()?;
        Some((partition, clustering))
    }

    /// The key attributes (index keys and table keys) an entry names.
    pub fn entry_values(
        &self,
        partition: &DecoratedKey,
        clustering: &[u8],
    ) -> Result<Item, String> {
        let mut out = Item::new();
        let hashes = split_partition_key(&partition.key, self.hash.len())
            .ok_or("bad index entry: a partition key of other components")?;
        for ((name, t), bytes) in self.hash.iter().zip(hashes) {
            let v = column_value(*t, &bytes).map_err(|e| e.0.to_string())?;
            out.insert(name.clone(), v);
        }
        let values = khata_types::clustering::decode_key(&self.clustering_types(), clustering)
            .map_err(|e| format!("bad index entry: {e}"))?;
        if values.len() != self.clustering.len() {
            return Err("bad index entry: missing key values".into());
        }
        for ((name, t), bytes) in self.clustering.iter().zip(values) {
            let v = column_value(*t, &bytes).map_err(|e| e.0.to_string())?;
            out.insert(name.clone(), v);
        }
        Ok(out)
    }

    pub(crate) fn entry_write(&self, key: (DecoratedKey, Bytes), ts: Timestamp) -> Mutation {
        let mut update = Partition::new();
        update.add_row(
            key.1,
            Row {
                liveness: Some(LivenessInfo::new(ts, None)),
                ..Row::default()
            },
        );
        Mutation::new(self.table, key.0, update)
    }

    /// A tombstone for one entry at `ts`.
    pub fn entry_delete(
        &self,
        key: (DecoratedKey, Bytes),
        ts: Timestamp,
        now: LocalTime,
    ) -> Mutation {
        let mut update = Partition::new();
        update.add_row(
            key.1,
            Row {
                deletion: Some(DeletionTime::new(ts, now)),
                ..Row::default()
            },
        );
        Mutation::new(self.table, key.0, update)
    }

    /// Whether `name` is a key attribute of the index or of its entries.
    fn uses(&self, name: &str) -> bool {
        self.hash
            .iter()
            .chain(&self.clustering)
            .any(|(n, _)| n == name)
    }

    /// What of `item` the index holds: its keys, the table's keys and the projection.
    pub fn project(&self, item: &Item) -> Item {
        match &self.projection {
            Projected::All => item.clone(),
            Projected::KeysOnly | Projected::Include(_) => item
                .iter()
                .filter(|(name, _)| {
                    self.uses(name)
                        || matches!(&self.projection, Projected::Include(a) if a.contains(*name))
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }
}

/// The index entries a write leaves `new` (the whole item after the write) with, checked with
/// DynamoDB's messages: one marker per index that holds the item, at the write's timestamp.
/// `changed` (UpdateItem of an existing item) limits them to the indexes whose key attributes
/// the write changed; `None` writes them all (PutItem, and an UpdateItem that creates the
/// item). Indexes being deleted are skipped. Put these after the base mutation, in the same
/// mutation list (module docs).
pub fn index_entries(
    layout: &ItemLayout,
    new: &Item,
    changed: Option<&BTreeSet<String>>,
    ts: Timestamp,
) -> Result<Vec<Mutation>, ValidationError> {
    let mut out = Vec::new();
    for index in layout.indexes.iter() {
        if index.status == IndexStatus::Deleting {
            continue;
        }
        if let Some(changed) = changed
            && !index.key_names().any(|(n, _)| changed.contains(n))
        {
            continue;
        }
        index.check(layout, new)?;
        if let Some(key) = index.entry_key(new) {
            out.push(index.entry_write(key, ts));
        }
    }
    Ok(out)
}

/// Tombstones for the entries of `old` that a write at `ts` leaving `new` (`None`: deleted)
/// makes stale, one microsecond below the write: every value that made such an entry is
/// replaced by the write. Callers that know the old item (a compare-and-set) add these to the
/// write; others leave stale entries to the readers' cleanup.
pub fn obsolete_entries(
    layout: &ItemLayout,
    old: &Item,
    new: Option<&Item>,
    ts: Timestamp,
    now: LocalTime,
) -> Vec<Mutation> {
    let mut out = Vec::new();
    for index in layout.indexes.iter() {
        if index.status == IndexStatus::Deleting {
            continue;
        }
        let Some(old_key) = index.entry_key(old) else {
            continue;
        };
        if new.and_then(|n| index.entry_key(n)).as_ref() == Some(&old_key) {
            continue;
        }
        out.push(index.entry_delete(old_key, ts - 1, now));
    }
    out
}

/// The index layouts of a table, attached to its item layout.
pub fn with_indexes(layout: ItemLayout, meta: &TableMeta) -> Result<ItemLayout, String> {
    Ok(layout.with_indexes(layouts(meta)?))
}

/// The shared, cheap-to-clone form of a table's indexes.
pub type Indexes = Arc<[IndexLayout]>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::{AttributeDefinition, FORMAT_VERSION, KeyElement, Throughput};
    use crate::value::Number;
    use serde_json::json;

    fn keys(hash: &str, range: Option<&str>) -> Vec<KeyElement> {
        let mut k = vec![KeyElement {
            attribute_name: hash.into(),
            key_type: "HASH".into(),
        }];
        if let Some(r) = range {
            k.push(KeyElement {
                attribute_name: r.into(),
                key_type: "RANGE".into(),
            });
        }
        k
    }

    fn index(name: &str, hash: &str, range: Option<&str>, projection: Value) -> IndexMeta {
        IndexMeta {
            index_name: name.into(),
            key_schema: keys(hash, range),
            projection,
            provisioned_throughput: None,
            index_status: None,
            table_id: Some(Uuid::from_u128(7).to_string()),
        }
    }

    /// Table (PK S, SK S) with GSI1 (GSI1PK, n N, INCLUDE x), inverted (SK, PK, KEYS_ONLY)
    /// and LSI by-n (PK, n, ALL).
    /// A pay-per-request table's metadata with these keys, attribute types and indexes.
    fn meta(
        key_schema: Vec<KeyElement>,
        defs: &[(&str, &str)],
        global_secondary_indexes: Vec<IndexMeta>,
        local_secondary_indexes: Vec<IndexMeta>,
    ) -> TableMeta {
        TableMeta {
            format_version: FORMAT_VERSION,
            table_name: "t12".into(),
            key_schema,
            attribute_definitions: defs
                .iter()
                .map(|(n, t)| AttributeDefinition {
                    attribute_name: (*n).into(),
                    attribute_type: (*t).into(),
                })
                .collect(),
            global_secondary_indexes,
            local_secondary_indexes,
            billing_mode: "PAY_PER_REQUEST".into(),
            billing_mode_stated: true,
            provisioned_throughput: Throughput {
                read_capacity_units: 0,
                write_capacity_units: 0,
            },
            pay_per_request_since_micros: None,
            throughput_changes: None,
            stream: None,
            ttl: None,
            tags: Vec::new(),
            deletion_protection: false,
            creation_micros: 0,
            table_class: None,
            warm_throughput: None,
            on_demand_throughput: None,
        }
    }

    fn layout() -> ItemLayout {
        let defs = [("PK", "S"), ("SK", "S"), ("GSI1PK", "S"), ("n", "N")];
        let meta = meta(
            keys("PK", Some("SK")),
            &defs,
            vec![
                index(
                    "GSI1",
                    "GSI1PK",
                    Some("n"),
                    json!({"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x"]}),
                ),
                index(
                    "inverted",
                    "SK",
                    Some("PK"),
                    json!({"ProjectionType": "KEYS_ONLY"}),
                ),
            ],
            vec![index(
                "by-n",
                "PK",
                Some("n"),
                json!({"ProjectionType": "ALL"}),
            )],
        );
        let table = Arc::new(crate::tables::table_schema(&meta, Uuid::from_u128(1)));
        let layout = ItemLayout::new(
            table,
            ("PK".into(), KeyType::S),
            Some(("SK".into(), KeyType::S)),
        )
        .unwrap();
        with_indexes(layout, &meta).unwrap()
    }

    fn item(pairs: &[(&str, AttributeValue)]) -> Item {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    fn s(v: &str) -> AttributeValue {
        AttributeValue::S(v.into())
    }

    fn n(v: &str) -> AttributeValue {
        AttributeValue::N(Number::parse(v).unwrap())
    }

    #[test]
    fn entries_name_their_item_and_sort_by_the_index_range_key() {
        let l = layout();
        let (gsi, inverted, lsi) = (&l.indexes[0], &l.indexes[1], &l.indexes[2]);
        let names = |i: &IndexLayout| -> Vec<String> {
            i.clustering.iter().map(|(n, _)| n.clone()).collect()
        };
        assert_eq!(names(gsi), ["n", "PK", "SK"]);
        assert_eq!(names(inverted), ["PK"]);
        assert_eq!(names(lsi), ["n", "SK"]);
        let a = item(&[
            ("PK", s("p")),
            ("SK", s("a")),
            ("GSI1PK", s("g")),
            ("n", n("-2")),
        ]);
        let b = item(&[
            ("PK", s("p")),
            ("SK", s("b")),
            ("GSI1PK", s("g")),
            ("n", n("10")),
        ]);
        let (pa, ca) = gsi.entry_key(&a).unwrap();
        let (pb, cb) = gsi.entry_key(&b).unwrap();
        assert_eq!(pa, pb);
        assert!(ca < cb, "numbers sort numerically");
        let back = gsi.entry_values(&pa, &ca).unwrap();
        assert_eq!(back.get("SK"), Some(&s("a")));
        assert_eq!(back.get("n"), Some(&n("-2")));
        assert_eq!(back.len(), 4);
        // Sparse: no GSI1PK, or a wrong type, is no entry.
        assert!(
            gsi.entry_key(&item(&[("PK", s("p")), ("SK", s("a"))]))
                .is_none()
        );
        let wrong = item(&[
            ("PK", s("p")),
            ("SK", s("a")),
            ("GSI1PK", n("1")),
            ("n", n("1")),
        ]);
        assert!(gsi.entry_key(&wrong).is_none());
        assert_eq!(
            gsi.check(&l, &wrong).unwrap_err().0,
            "One or more parameter values were invalid: Type mismatch for Index Key GSI1PK Expected: S Actual: N IndexName: GSI1"
        );
    }

    #[test]
    fn projections_keep_the_keys_and_what_they_name() {
        let l = layout();
        let it = item(&[
            ("PK", s("p")),
            ("SK", s("a")),
            ("GSI1PK", s("g")),
            ("n", n("1")),
            ("x", s("kept")),
            ("y", s("dropped")),
        ]);
        let names = |i: Item| -> Vec<String> { i.keys().cloned().collect() };
        assert_eq!(
            names(l.indexes[0].project(&it)),
            ["GSI1PK", "PK", "SK", "n", "x"]
        );
        assert_eq!(names(l.indexes[1].project(&it)), ["PK", "SK"]);
        assert_eq!(l.indexes[2].project(&it), it);
    }

    #[test]
    fn writes_add_entries_and_known_old_ones_are_deleted() {
        let l = layout();
        let old = item(&[
            ("PK", s("p")),
            ("SK", s("a")),
            ("GSI1PK", s("g")),
            ("n", n("1")),
        ]);
        let new = item(&[
            ("PK", s("p")),
            ("SK", s("a")),
            ("GSI1PK", s("h")),
            ("n", n("1")),
        ]);
        // Every index holds the new item.
        assert_eq!(index_entries(&l, &new, None, 100).unwrap().len(), 3);
        // An update of GSI1PK only rewrites GSI1's entry...
        let changed = BTreeSet::from(["GSI1PK".to_string()]);
        let m = index_entries(&l, &new, Some(&changed), 100).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].table, l.indexes[0].table);
        // ...and deletes the old one just below the write.
        let gone = obsolete_entries(&l, &old, Some(&new), 100, 5);
        assert_eq!(gone.len(), 1);
        let row = gone[0].update.rows.values().next().unwrap();
        assert_eq!(row.deletion.unwrap().marked_for_delete_at, 99);
        // A delete makes every entry of the old item stale.
        assert_eq!(obsolete_entries(&l, &old, None, 100, 5).len(), 3);
    }

    /// Table (PK S) with GSI multi: HASH (tenant S, region S), RANGE (day N, id S).
    fn multi_meta() -> TableMeta {
        let defs = [
            ("PK", "S"),
            ("tenant", "S"),
            ("region", "S"),
            ("day", "N"),
            ("id", "S"),
        ];
        let key = |n: &str, t: &str| KeyElement {
            attribute_name: n.into(),
            key_type: t.into(),
        };
        meta(
            keys("PK", None),
            &defs,
            vec![IndexMeta {
                key_schema: vec![
                    key("tenant", "HASH"),
                    key("region", "HASH"),
                    key("day", "RANGE"),
                    key("id", "RANGE"),
                ],
                ..index("multi", "x", None, json!({"ProjectionType": "ALL"}))
            }],
            Vec::new(),
        )
    }

    #[test]
    fn multi_attribute_keys_are_a_composite_partition_and_a_clustering_tuple() {
        let meta = multi_meta();
        let table = Arc::new(crate::tables::table_schema(&meta, Uuid::from_u128(1)));
        let l = ItemLayout::new(table, ("PK".into(), KeyType::S), None).unwrap();
        let l = with_indexes(l, &meta).unwrap();
        let multi = &l.indexes[0];
        assert!(multi.multi_attribute());
        let names =
            |c: &[(String, KeyType)]| -> Vec<String> { c.iter().map(|(n, _)| n.clone()).collect() };
        assert_eq!(names(&multi.hash), ["tenant", "region"]);
        assert_eq!(names(&multi.range), ["day", "id"]);
        assert_eq!(names(&multi.clustering), ["day", "id", "PK"]);
        // The engine table: two partition key columns, then the clustering columns in order.
        let schema =
            table_schema(&meta, &meta.global_secondary_indexes[0], true, Uuid::nil()).unwrap();
        let kinds: Vec<ColumnKind> = schema.def.columns.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds[..3],
            [
                ColumnKind::PartitionKey { position: 0 },
                ColumnKind::PartitionKey { position: 1 },
                ColumnKind::Clustering {
                    position: 0,
                    order: ClusteringOrder::Asc
                },
            ]
        );
        let entry = |pk: &str, day: &str, id: &str| {
            item(&[
                ("PK", s(pk)),
                ("tenant", s("acme")),
                ("region", s("eu")),
                ("day", n(day)),
                ("id", s(id)),
            ])
        };
        let (p1, c1) = multi.entry_key(&entry("a", "10", "b")).unwrap();
        let (p2, c2) = multi.entry_key(&entry("b", "2", "z")).unwrap();
        let (p3, c3) = multi.entry_key(&entry("c", "10", "c")).unwrap();
        assert_eq!(p1, p2);
        assert_eq!(
            p1.key,
            serialize_partition_key(&[b"acme".as_slice(), b"eu".as_slice()]).unwrap()
        );
        // Sorted by (day, id): day numerically first, then id.
        assert!(c2 < c1 && c1 < c3);
        assert_eq!(multi.entry_values(&p3, &c3).unwrap(), entry("c", "10", "c"));
        // Sparse: an item lacking any key attribute is not in the index.
        let mut partial = entry("d", "1", "x");
        partial.remove("region");
        assert!(multi.entry_key(&partial).is_none());
        let mut partial = entry("d", "1", "x");
        partial.remove("id");
        assert!(multi.entry_key(&partial).is_none());
    }

    #[test]
    fn one_attribute_per_role_keeps_the_old_layout() {
        let l = layout();
        let gsi = &l.indexes[0];
        assert!(!gsi.multi_attribute());
        let it = item(&[
            ("PK", s("p")),
            ("SK", s("a")),
            ("GSI1PK", s("g")),
            ("n", n("1")),
        ]);
        // The partition key is the hash value's bytes, as before multi-attribute keys.
        let (partition, _) = gsi.entry_key(&it).unwrap();
        assert_eq!(&partition.key[..], b"g");
    }

    #[test]
    fn long_index_names_fit_the_file_system() {
        let name = index_storage_name(&"t".repeat(255), &"i".repeat(255), false);
        assert!(name.len() <= crate::tables::MAX_PLAIN_NAME);
        assert_eq!(index_storage_name("Orders", "GSI1", true), "Orders:GSI1");
        assert_eq!(
            index_storage_name("Orders", "byDate", false),
            "Orders!:byDate"
        );
    }
}
