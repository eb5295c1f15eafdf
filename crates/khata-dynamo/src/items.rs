//! DynamoDB items as engine rows, in the layout of [`crate::tables`] (ScyllaDB Alternator's):
//! the hash key is the partition key column, the range key the clustering column, and every
//! other top-level attribute one cell of the `:attrs` map, keyed by the attribute's name and
//! holding [`encode_value`]'s bytes.
//!
//! Key columns hold an S key as its UTF-8 bytes (`text`), a B key as its bytes and an N key as
//! [`encode_key`]'s order-preserving bytes (both `blob`), so the engine's byte order of
//! clustering keys is DynamoDB's order of range keys.
//!
//! Writes:
//! - PutItem replaces the whole item: a row deletion one microsecond before the write's
//!   timestamp, then the row marker and every attribute at the timestamp.
//! - UpdateItem writes only the attributes it changed (a tombstone for a removed one) plus the
//!   row marker, so updates of different attributes by concurrent clients merge.
//! - DeleteItem is a row deletion.

use std::collections::BTreeSet;
use std::sync::Arc;

use bytes::Bytes;
use khata_coordinator::catalog::{Mutation, TableSchema};
use khata_types::cell::{Cell, DeletionTime, LivenessInfo};
use khata_types::clustering::{encode_key as encode_clustering, end_bound};
use khata_types::partition::Partition;
use khata_types::row::{CellKey, Row};
use khata_types::schema::{ClusteringOrder, ColumnKind, CqlType};
use khata_types::token::DecoratedKey;
use khata_types::{ColumnId, LocalTime, Timestamp};

use crate::value::{
    AttributeValue, DecodeError, Item, KeyType, MAX_ITEM_SIZE_BYTES, Map, ValidationError,
    decode_key, decode_value, encode_key, encode_value,
};

/// The start of DynamoDB's refusal of an empty string or binary key value, which a
/// transaction answers as a plain `ValidationException`, not as a cancellation reason.
pub(crate) const EMPTY_KEY_VALUE: &str = "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty";

/// The largest hash key value, in bytes.
pub const MAX_HASH_KEY_BYTES: usize = 2048;
/// The largest range key value, in bytes.
pub const MAX_RANGE_KEY_BYTES: usize = 1024;

/// The name of the map column of the other attributes (also [`crate::tables`]'s).
const ATTRS: &str = ":attrs";

/// Where an item's key lives in the engine: its partition and its clustering key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemKey {
    pub partition: DecoratedKey,
    /// The encoded clustering key (empty without a range key).
    pub clustering: Bytes,
}

/// How one DynamoDB table's items map to its engine table.
#[derive(Clone, Debug)]
pub struct ItemLayout {
    pub table: Arc<TableSchema>,
    pub hash: (String, KeyType),
    pub range: Option<(String, KeyType)>,
    attrs: ColumnId,
    /// The table's enabled stream: writes go through a compare-and-set that adds its record
    /// ([`crate::streams::cas_item`]).
    pub stream: Option<Arc<crate::streams::Stream>>,
    /// The table's secondary indexes that writes keep ([`crate::indexes`]).
    pub indexes: Arc<[crate::indexes::IndexLayout]>,
    /// How the table keeps its item collections' sizes (a table with LSIs): every write then
    /// reads the old item ([`crate::collections`]).
    pub collections: Option<crate::collections::Collections>,
}

fn invalid(message: impl Into<String>) -> ValidationError {
    ValidationError(message.into())
}

pub(crate) fn type_letter(t: KeyType) -> &'static str {
    match t {
        KeyType::S => "S",
        KeyType::N => "N",
        KeyType::B => "B",
    }
}

/// The type of a key value, if it can be one.
pub(crate) fn key_type_of(v: &AttributeValue) -> Option<KeyType> {
    match v {
        AttributeValue::S(_) => Some(KeyType::S),
        AttributeValue::N(_) => Some(KeyType::N),
        AttributeValue::B(_) => Some(KeyType::B),
        _ => None,
    }
}

/// A key value as its column stores it.
pub(crate) fn column_bytes(v: &AttributeValue) -> Vec<u8> {
    match v {
        AttributeValue::S(s) => s.as_bytes().to_vec(),
        AttributeValue::B(b) => b.clone(),
        other => encode_key(other).unwrap_or_default(),
    }
}

/// A key value back from its column's bytes.
pub(crate) fn column_value(t: KeyType, bytes: &[u8]) -> Result<AttributeValue, DecodeError> {
    Ok(match t {
        KeyType::S => AttributeValue::S(
            String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError("key is not UTF-8"))?,
        ),
        KeyType::B => AttributeValue::B(bytes.to_vec()),
        KeyType::N => decode_key(KeyType::N, bytes)?.0,
    })
}

pub(crate) fn clustering_type(t: KeyType) -> CqlType {
    match t {
        KeyType::S => CqlType::Text,
        KeyType::N | KeyType::B => CqlType::Blob,
    }
}

impl ItemLayout {
    /// Refuses the request's document paths that go inside a key attribute of the table or of
    /// one of its indexes, then names and values that no expression used.
    pub fn finish_expressions(
        &self,
        ex: crate::expr::Expressions<'_>,
    ) -> Result<(), ValidationError> {
        let keys = std::iter::once(self.hash.0.as_str())
            .chain(self.range.as_ref().map(|(n, _)| n.as_str()));
        let index_keys = self
            .indexes
            .iter()
            .flat_map(|i| i.key_names().map(|(n, _)| n.as_str()));
        ex.scalar_keys(keys, index_keys)?;
        ex.finish()
    }

    /// The layout of `table`, whose hash (and range) key attributes have these names and types.
    /// `None` if the table lacks the `:attrs` column.
    pub fn new(
        table: Arc<TableSchema>,
        hash: (String, KeyType),
        range: Option<(String, KeyType)>,
    ) -> Option<ItemLayout> {
        let attrs = table.def.column(ATTRS)?.id;
        Some(ItemLayout {
            table,
            hash,
            range,
            attrs,
            stream: None,
            indexes: Arc::from(Vec::new()),
            collections: None,
        })
    }

    /// This layout with the table's secondary indexes.
    pub fn with_indexes(mut self, indexes: Vec<crate::indexes::IndexLayout>) -> ItemLayout {
        self.indexes = Arc::from(indexes);
        self
    }

    /// The id of the `:attrs` column.
    pub(crate) fn attrs_column(&self) -> ColumnId {
        self.attrs
    }

    /// The key names, for the messages that list them.
    fn key_names(&self) -> impl Iterator<Item = &(String, KeyType)> {
        std::iter::once(&self.hash).chain(self.range.as_ref())
    }

    /// Check one key attribute's value as PutItem does.
    fn check_key_value(
        name: &str,
        expected: KeyType,
        v: &AttributeValue,
        limit: usize,
        hash: bool,
    ) -> Result<(), ValidationError> {
        let actual = key_type_of(v);
        if actual != Some(expected) {
            return Err(invalid(format!(
                "One or more parameter values were invalid: Type mismatch for key {name} expected: {} actual: {}",
                type_letter(expected),
                v.type_name()
            )));
        }
        match v {
            AttributeValue::S(s) if s.is_empty() => {
                return Err(invalid(format!(
                    "{EMPTY_KEY_VALUE} string value. Key: {name}"
                )));
            }
            AttributeValue::B(b) if b.is_empty() => {
                return Err(invalid(format!(
                    "{EMPTY_KEY_VALUE} binary value. Key: {name}"
                )));
            }
            _ => {}
        }
        let size = match v {
            AttributeValue::S(s) => s.len(),
            AttributeValue::B(b) => b.len(),
            other => other.size_bytes(),
        };
        if size > limit {
            return Err(invalid(if hash {
                format!(
                    "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of{MAX_HASH_KEY_BYTES} bytes"
                )
            } else {
                format!(
                    "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of {MAX_RANGE_KEY_BYTES} bytes"
                )
            }));
        }
        Ok(())
    }

    /// Whether `item` has every key attribute (of whatever type).
    pub fn has_key_attributes(&self, item: &Map) -> bool {
        self.key_names().all(|(name, _)| item.contains_key(name))
    }

    /// The engine key of an item given whole (PutItem's `Item`): the key attributes must be
    /// there with their declared types.
    pub fn key_of_item(&self, item: &Map) -> Result<ItemKey, ValidationError> {
        for (i, (name, t)) in self.key_names().enumerate() {
            let v = item.get(name).ok_or_else(|| {
                invalid(format!(
                    "One or more parameter values were invalid: Missing the key {name} in the item"
                ))
            })?;
            let limit = if i == 0 {
                MAX_HASH_KEY_BYTES
            } else {
                MAX_RANGE_KEY_BYTES
            };
            Self::check_key_value(name, *t, v, limit, i == 0)?;
        }
        self.encode_key(item)
    }

    /// The engine key named by a `Key` parameter (GetItem, DeleteItem, UpdateItem): exactly
    /// the key attributes, with their declared types.
    pub fn key_of_param(&self, key: &Map) -> Result<ItemKey, ValidationError> {
        let mismatch = || invalid("The provided key element does not match the schema");
        if key.len() != self.key_names().count() {
            return Err(mismatch());
        }
        for (i, (name, t)) in self.key_names().enumerate() {
            let v = key.get(name).ok_or_else(mismatch)?;
            if key_type_of(v) != Some(*t) {
                return Err(mismatch());
            }
            let limit = if i == 0 {
                MAX_HASH_KEY_BYTES
            } else {
                MAX_RANGE_KEY_BYTES
            };
            Self::check_key_value(name, *t, v, limit, i == 0)?;
        }
        self.encode_key(key)
    }

    fn encode_key(&self, item: &Map) -> Result<ItemKey, ValidationError> {
        let hash = item
            .get(&self.hash.0)
            .ok_or_else(|| invalid("The provided key element does not match the schema"))?;
        let partition = DecoratedKey::new(Bytes::from(column_bytes(hash)));
        let clustering = match &self.range {
            None => Bytes::new(),
            Some((name, t)) => {
                let v = item
                    .get(name)
                    .ok_or_else(|| invalid("The provided key element does not match the schema"))?;
                let bytes = column_bytes(v);
                encode_clustering(&[(clustering_type(*t), ClusteringOrder::Asc)], &[&bytes])
                    .map_err(|e| invalid(format!("range key cannot be stored: {e}")))?
            }
        };
        Ok(ItemKey {
            partition,
            clustering,
        })
    }

    /// The byte range of the engine row of `key`.
    pub fn row_range(&self, key: &ItemKey) -> (Bytes, Bytes) {
        (key.clustering.clone(), end_bound(&key.clustering, true))
    }

    /// The row marker and attribute cells of `item` (without its key attributes) at `ts`.
    fn row_of(
        &self,
        item: &Map,
        ts: Timestamp,
        now: LocalTime,
        only: Option<&BTreeSet<String>>,
    ) -> Row {
        let mut row = Row {
            liveness: Some(LivenessInfo::new(ts, None)),
            ..Row::default()
        };
        let keys: Vec<&str> = self.key_names().map(|(n, _)| n.as_str()).collect();
        match only {
            None => {
                for (name, v) in item.iter().filter(|(n, _)| !keys.contains(&n.as_str())) {
                    row.cells.insert(
                        CellKey::element(self.attrs, Bytes::copy_from_slice(name.as_bytes())),
                        Cell::live(ts, encode_value(v)),
                    );
                }
            }
            Some(changed) => {
                for name in changed.iter().filter(|n| !keys.contains(&n.as_str())) {
                    let path =
                        CellKey::element(self.attrs, Bytes::copy_from_slice(name.as_bytes()));
                    let cell = match item.get(name) {
                        Some(v) => Cell::live(ts, encode_value(v)),
                        None => Cell::tombstone(ts, now),
                    };
                    row.cells.insert(path, cell);
                }
            }
        }
        row
    }

    /// PutItem: the item replaces whatever was stored under its key (from
    /// [`ItemLayout::key_of_item`]). Checks the 400 KB limit.
    pub fn put(
        &self,
        key: &ItemKey,
        item: &Item,
        ts: Timestamp,
        now: LocalTime,
    ) -> Result<Mutation, ValidationError> {
        if item.size_bytes() > MAX_ITEM_SIZE_BYTES {
            return Err(invalid("Item size has exceeded the maximum allowed size"));
        }
        let mut row = self.row_of(item, ts, now, None);
        row.deletion = Some(DeletionTime::new(ts - 1, now));
        let mut update = Partition::new();
        update.add_row(key.clustering.clone(), row);
        Ok(Mutation::new(
            self.table.def.id,
            key.partition.clone(),
            update,
        ))
    }

    /// UpdateItem: the attributes in `changed` set to their values in `new` (or removed), and
    /// the item made to exist. Checks the 400 KB limit on `new`.
    pub fn update(
        &self,
        key: &ItemKey,
        new: &Item,
        changed: &BTreeSet<String>,
        ts: Timestamp,
        now: LocalTime,
    ) -> Result<Mutation, ValidationError> {
        if new.size_bytes() > MAX_ITEM_SIZE_BYTES {
            return Err(invalid(
                "Item size to update has exceeded the maximum allowed size",
            ));
        }
        let row = self.row_of(new, ts, now, Some(changed));
        let mut update = Partition::new();
        update.add_row(key.clustering.clone(), row);
        Ok(Mutation::new(
            self.table.def.id,
            key.partition.clone(),
            update,
        ))
    }

    /// DeleteItem.
    pub fn delete(&self, key: &ItemKey, ts: Timestamp, now: LocalTime) -> Mutation {
        let row = Row {
            deletion: Some(DeletionTime::new(ts, now)),
            ..Row::default()
        };
        let mut update = Partition::new();
        update.add_row(key.clustering.clone(), row);
        Mutation::new(self.table.def.id, key.partition.clone(), update)
    }

    /// The live attributes of `row` (the cells of the attribute map), as name and encoded
    /// value, in name order.
    fn attributes<'r>(
        &self,
        row: &'r Row,
        now: LocalTime,
    ) -> impl Iterator<Item = Result<(&'r str, &'r Bytes), DecodeError>> + 'r {
        let attrs = self.attrs;
        row.cells.iter().filter_map(move |(k, cell)| {
            if k.column != attrs {
                return None;
            }
            let (Some(path), Some(value)) = (&k.path, cell.live_value(now)) else {
                return None;
            };
            Some(
                std::str::from_utf8(path)
                    .map(|name| (name, value))
                    .map_err(|_| DecodeError("attribute name is not UTF-8")),
            )
        })
    }

    /// The item stored in a live row: its key attributes from the keys, the others from the
    /// `:attrs` cells live at `now`.
    pub fn item(
        &self,
        partition: &DecoratedKey,
        clustering: &[u8],
        row: &Row,
        now: LocalTime,
    ) -> Result<Item, DecodeError> {
        let mut item = Item::new();
        item.insert(self.hash.0.clone(), self.hash_value(partition)?);
        if let Some((name, _)) = &self.range {
            item.insert(name.clone(), self.range_value(clustering)?);
        }
        for attribute in self.attributes(row, now) {
            let (name, value) = attribute?;
            item.insert(name.to_string(), decode_value(value)?);
        }
        Ok(item)
    }

    /// The hash key's value in a partition key.
    pub fn hash_value(&self, partition: &DecoratedKey) -> Result<AttributeValue, DecodeError> {
        column_value(self.hash.1, &partition.key)
    }

    /// The range key's value in a clustering key (of a table with a range key).
    pub fn range_value(&self, clustering: &[u8]) -> Result<AttributeValue, DecodeError> {
        let (_, t) = self
            .range
            .as_ref()
            .ok_or(DecodeError("the table has no range key"))?;
        let ty = [(clustering_type(*t), ClusteringOrder::Asc)];
        let values = khata_types::clustering::decode_key(&ty, clustering)
            .map_err(|_| DecodeError("bad clustering key"))?;
        let bytes = values.first().ok_or(DecodeError("missing range key"))?;
        column_value(*t, bytes)
    }

    /// Appends the item stored in a live row as DynamoDB JSON, the bytes
    /// `write_map(&self.item(..))` appends, without building the item: `hash` and `range`
    /// are its key values ([`ItemLayout::hash_value`], [`ItemLayout::range_value`]), string
    /// attributes are escaped straight from their cells. Returns the item's size
    /// ([`Item::size_bytes`]).
    pub fn write_item(
        &self,
        out: &mut Vec<u8>,
        hash: &AttributeValue,
        range: Option<&AttributeValue>,
        row: &Row,
        now: LocalTime,
    ) -> Result<usize, DecodeError> {
        // The key attributes, in name order, merged with the cells (in name order too: a
        // cell's path is its name's bytes, and `String` orders by bytes).
        let mut keys: [Option<(&str, &AttributeValue)>; 2] = [Some((&self.hash.0, hash)), None];
        if let (Some((name, _)), Some(v)) = (&self.range, range) {
            keys[1] = Some((name, v));
            if name.as_str() < self.hash.0.as_str() {
                keys.swap(0, 1);
            }
        }
        let mut keys = keys.into_iter().flatten().peekable();
        let mut size = 0;
        let mut first = true;
        let mut member = |out: &mut Vec<u8>, name: &str| {
            out.push(if first { b'{' } else { b',' });
            first = false;
            crate::value::write_str(out, name);
            out.push(b':');
            name.len()
        };
        for attribute in self.attributes(row, now) {
            let (name, value) = attribute?;
            while let Some((key, v)) = keys.next_if(|(key, _)| *key <= name) {
                // An attribute cell of a key's name would replace the key in `item`.
                if key != name {
                    size += member(out, key);
                    crate::value::write_value(out, v);
                    size += v.size_bytes();
                }
            }
            size += member(out, name);
            match crate::value::decode_str(value) {
                Some(s) => {
                    out.extend_from_slice(b"{\"S\":");
                    crate::value::write_str(out, s);
                    out.push(b'}');
                    size += s.len();
                }
                None => {
                    let v = decode_value(value)?;
                    crate::value::write_value(out, &v);
                    size += v.size_bytes();
                }
            }
        }
        for (key, v) in keys {
            size += member(out, key);
            crate::value::write_value(out, v);
            size += v.size_bytes();
        }
        if first {
            out.push(b'{');
        }
        out.push(b'}');
        Ok(size)
    }

    /// Whether `table`'s layout is this module's: a partition key column, at most one
    /// clustering column, and `:attrs`.
    pub fn fits(table: &TableSchema) -> bool {
        table.def.partition_key().len() == 1
            && table.def.clustering().len() <= 1
            && table
                .def
                .columns
                .iter()
                .any(|c| c.name == ATTRS && c.kind == ColumnKind::Regular)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Number;
    use khata_types::schema::{ColumnDef, TableDef, TableOptions};

    fn layout(range: Option<KeyType>) -> ItemLayout {
        let mut columns = vec![ColumnDef {
            id: 1,
            name: "pk".into(),
            ty: CqlType::Text,
            kind: ColumnKind::PartitionKey { position: 0 },
        }];
        if let Some(t) = range {
            columns.push(ColumnDef {
                id: 2,
                name: "sk".into(),
                ty: clustering_type(t),
                kind: ColumnKind::Clustering {
                    position: 0,
                    order: ClusteringOrder::Asc,
                },
            });
        }
        columns.push(ColumnDef {
            id: 3,
            name: ATTRS.into(),
            ty: CqlType::Map {
                key: Box::new(CqlType::Text),
                value: Box::new(CqlType::Blob),
                frozen: false,
            },
            kind: ColumnKind::Regular,
        });
        let table = Arc::new(TableSchema {
            def: TableDef {
                id: uuid::Uuid::nil(),
                keyspace: "alternator_t".into(),
                name: "t".into(),
                columns,
                options: TableOptions::default(),
            },
            dropped: Vec::new(),
            indexes: Vec::new(),
        });
        assert!(ItemLayout::fits(&table));
        ItemLayout::new(
            table,
            ("pk".into(), KeyType::S),
            range.map(|t| ("sk".to_string(), t)),
        )
        .unwrap()
    }

    fn item(pairs: &[(&str, AttributeValue)]) -> Item {
        let mut item = Item::new();
        for (k, v) in pairs {
            item.insert(k.to_string(), v.clone());
        }
        item
    }

    fn s(v: &str) -> AttributeValue {
        AttributeValue::S(v.into())
    }

    fn n(v: &str) -> AttributeValue {
        AttributeValue::N(Number::parse(v).unwrap())
    }

    #[test]
    fn a_put_item_reads_back_whole() {
        let l = layout(Some(KeyType::N));
        let it = item(&[
            ("pk", s("USER#42")),
            ("sk", n("-1.5")),
            ("name", s("ann")),
            ("tags", AttributeValue::Ss(vec!["a".into(), "b".into()])),
        ]);
        let m = l.put(&l.key_of_item(&it).unwrap(), &it, 100, 7).unwrap();
        let (clustering, row) = m.update.rows.iter().next().unwrap();
        assert_eq!(row.deletion.unwrap().marked_for_delete_at, 99);
        assert_eq!(l.item(&m.key, clustering, row, 7).unwrap(), it);
    }

    /// What `write_item` appends for a row, and that it is what `write_map` of `item` gives.
    fn written(l: &ItemLayout, key: &DecoratedKey, clustering: &Bytes, row: &Row) -> Vec<u8> {
        let hash = l.hash_value(key).unwrap();
        let range = l.range.as_ref().map(|_| l.range_value(clustering).unwrap());
        let mut out = b"[".to_vec();
        let size = l
            .write_item(&mut out, &hash, range.as_ref(), row, 7)
            .unwrap();
        let item = l.item(key, clustering, row, 7).unwrap();
        let mut expected = b"[".to_vec();
        crate::value::write_map(&mut expected, &item);
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&expected)
        );
        assert_eq!(size, item.size_bytes());
        out
    }

    #[test]
    fn an_item_is_written_from_its_row_as_from_the_item() {
        let attrs = [
            ("a", s("before both keys \"quoted\" \u{1}")),
            ("pl", n("-12.50")),
            ("q", AttributeValue::B(vec![0, 1, 2])),
            ("sa", s("between")),
            ("zz", AttributeValue::Ss(vec!["x".into(), "y".into()])),
            ("zzz", AttributeValue::Null),
            ("é", s("non-ASCII name")),
        ];
        for range in [None, Some(KeyType::S), Some(KeyType::N)] {
            let l = layout(range);
            for count in 0..=attrs.len() {
                let mut pairs = vec![("pk", s("USER#42"))];
                match range {
                    Some(KeyType::N) => pairs.push(("sk", n("7"))),
                    Some(_) => pairs.push(("sk", s("ORDER#1"))),
                    None => {}
                }
                pairs.extend(attrs[..count].iter().cloned());
                let it = item(&pairs);
                let m = l.put(&l.key_of_item(&it).unwrap(), &it, 100, 7).unwrap();
                let (clustering, row) = m.update.rows.iter().next().unwrap();
                written(&l, &m.key, clustering, row);
            }
        }
        // Removed attributes (tombstones) are not written.
        let l = layout(None);
        let key = l.key_of_param(&item(&[("pk", s("p"))])).unwrap();
        let new = item(&[("pk", s("p")), ("a", n("1"))]);
        let changed: BTreeSet<String> = ["a".to_string(), "gone".to_string()].into();
        let m = l.update(&key, &new, &changed, 50, 3).unwrap();
        let (clustering, row) = m.update.rows.iter().next().unwrap();
        let out = written(&l, &m.key, clustering, row);
        assert_eq!(out, br#"[{"a":{"N":"1"},"pk":{"S":"p"}}"#);
    }

    #[test]
    fn number_range_keys_sort_numerically() {
        let l = layout(Some(KeyType::N));
        let mut keys: Vec<(Bytes, &str)> = ["-10", "-1.5", "0", "2", "10", "1e3"]
            .iter()
            .map(|v| {
                let k = l
                    .key_of_item(&item(&[("pk", s("p")), ("sk", n(v))]))
                    .unwrap();
                (k.clustering, *v)
            })
            .collect();
        keys.sort();
        let order: Vec<&str> = keys.iter().map(|(_, v)| *v).collect();
        assert_eq!(order, ["-10", "-1.5", "0", "2", "10", "1e3"]);
    }

    #[test]
    fn keys_are_checked_with_dynamodbs_messages() {
        let l = layout(Some(KeyType::S));
        let e = l.key_of_item(&item(&[("pk", s("p"))])).unwrap_err();
        assert_eq!(
            e.0,
            "One or more parameter values were invalid: Missing the key sk in the item"
        );
        let e = l
            .key_of_item(&item(&[("pk", n("1")), ("sk", s("x"))]))
            .unwrap_err();
        assert_eq!(
            e.0,
            "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N"
        );
        let e = l
            .key_of_item(&item(&[("pk", s("")), ("sk", s("x"))]))
            .unwrap_err();
        assert!(e.0.contains("cannot contain an empty string value. Key: pk"));
        let e = l
            .key_of_item(&item(&[("pk", s(&"x".repeat(2049))), ("sk", s("x"))]))
            .unwrap_err();
        assert!(e.0.contains("maximum size limit of2048 bytes"), "{}", e.0);
        let e = l
            .key_of_item(&item(&[("pk", s("p")), ("sk", s(&"x".repeat(1025)))]))
            .unwrap_err();
        assert!(e.0.contains("size limit of 1024 bytes"), "{}", e.0);
        let e = l
            .key_of_param(&item(&[("pk", s("p")), ("sk", s("x")), ("other", s("y"))]))
            .unwrap_err();
        assert_eq!(e.0, "The provided key element does not match the schema");
        assert!(
            l.key_of_param(&item(&[("pk", s("p")), ("sk", s("x"))]))
                .is_ok()
        );
    }

    #[test]
    fn an_update_writes_only_what_changed() {
        let l = layout(None);
        let key = l.key_of_param(&item(&[("pk", s("p"))])).unwrap();
        let new = item(&[("pk", s("p")), ("a", n("1")), ("b", s("kept"))]);
        let changed: BTreeSet<String> = ["a".to_string(), "gone".to_string()].into();
        let m = l.update(&key, &new, &changed, 50, 3).unwrap();
        let row = m.update.rows.values().next().unwrap();
        assert_eq!(row.cells.len(), 2);
        assert!(row.liveness.is_some());
        let gone = row
            .cells
            .get(&CellKey::element(l.attrs, Bytes::from_static(b"gone")))
            .unwrap();
        assert!(gone.is_tombstone());
    }

    #[test]
    fn oversized_items_are_refused() {
        let l = layout(None);
        let it = item(&[("pk", s("p")), ("big", s(&"x".repeat(MAX_ITEM_SIZE_BYTES)))]);
        assert_eq!(
            l.put(&l.key_of_item(&it).unwrap(), &it, 1, 1)
                .unwrap_err()
                .0,
            "Item size has exceeded the maximum allowed size"
        );
    }
}
