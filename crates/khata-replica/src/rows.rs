//! Rows of the replica's own tables (system keyspaces), written and read the way the CQL
//! front end writes and reads user rows: partition key serialized as Cassandra does,
//! clustering in the order-preserving encoding, cell values in their native-protocol
//! serialization, an INSERT-style row marker, and non-frozen collections one cell per element.
//!
//! Only the handful of types the system tables use are supported here (`text`, `int`,
//! `boolean`, `double`, `uuid`, `inet`, `timestamp`, `blob`, frozen and non-frozen collections
//! of text); the full value layer is the CQL front end's.

use std::collections::BTreeMap;
use std::net::IpAddr;

use bytes::Bytes;
use khata_types::cell::{Cell, DeletionTime, Expiry, LivenessInfo};
use khata_types::clustering::encode_key;
use khata_types::partition::Partition;
use khata_types::row::{CellKey, Row};
use khata_types::schema::{ColumnKind, CqlType, TableDef};
use khata_types::token::{DecoratedKey, serialize_partition_key, split_partition_key};
use khata_types::{LocalTime, Timestamp};
use uuid::Uuid;

use crate::error::{ReplicaError, Result};

/// A value of a system-table column.
#[derive(Clone, Debug, PartialEq)]
pub enum SysValue {
    Text(String),
    Int(i32),
    BigInt(i64),
    Bool(bool),
    Double(f64),
    Uuid(Uuid),
    Inet(IpAddr),
    /// Milliseconds since the epoch.
    Timestamp(i64),
    Blob(Bytes),
    /// A set or list of text (frozen or not, as the column's type says).
    Texts(Vec<String>),
    /// A map of text to text (frozen or not, as the column's type says).
    TextMap(Vec<(String, String)>),
    /// A map of text to blob.
    BlobMap(Vec<(String, Bytes)>),
}

fn put_len_prefixed(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn serialize_collection<'a>(count: usize, items: impl Iterator<Item = &'a [u8]>) -> Bytes {
    let mut out = Vec::new();
    out.extend_from_slice(&(count as i32).to_be_bytes());
    for item in items {
        put_len_prefixed(&mut out, item);
    }
    Bytes::from(out)
}

/// The native-protocol serialization of a single-cell value.
pub fn serialize(value: &SysValue) -> Bytes {
    match value {
        SysValue::Text(s) => Bytes::copy_from_slice(s.as_bytes()),
        SysValue::Int(i) => Bytes::copy_from_slice(&i.to_be_bytes()),
        SysValue::BigInt(i) => Bytes::copy_from_slice(&i.to_be_bytes()),
        SysValue::Bool(b) => Bytes::copy_from_slice(&[u8::from(*b)]),
        SysValue::Double(d) => Bytes::copy_from_slice(&d.to_be_bytes()),
        SysValue::Uuid(u) => Bytes::copy_from_slice(u.as_bytes()),
        SysValue::Inet(IpAddr::V4(a)) => Bytes::copy_from_slice(&a.octets()),
        SysValue::Inet(IpAddr::V6(a)) => Bytes::copy_from_slice(&a.octets()),
        SysValue::Timestamp(ms) => Bytes::copy_from_slice(&ms.to_be_bytes()),
        SysValue::Blob(b) => b.clone(),
        SysValue::Texts(items) => {
            serialize_collection(items.len(), items.iter().map(|s| s.as_bytes()))
        }
        SysValue::TextMap(entries) => serialize_collection(
            entries.len(),
            entries
                .iter()
                .flat_map(|(k, v)| [k.as_bytes(), v.as_bytes()]),
        ),
        SysValue::BlobMap(entries) => serialize_collection(
            entries.len(),
            entries.iter().flat_map(|(k, v)| [k.as_bytes(), &v[..]]),
        ),
    }
}

/// Builds one row of a table from column values.
#[derive(Debug)]
pub struct RowWriter<'a> {
    table: &'a TableDef,
    values: BTreeMap<&'a str, SysValue>,
}

impl<'a> RowWriter<'a> {
    pub fn new(table: &'a TableDef) -> Self {
        RowWriter {
            table,
            values: BTreeMap::new(),
        }
    }

    pub fn set(mut self, column: &'a str, value: SysValue) -> Self {
        self.values.insert(column, value);
        self
    }

    pub fn set_opt(self, column: &'a str, value: Option<SysValue>) -> Self {
        match value {
            Some(v) => self.set(column, v),
            None => self,
        }
    }

    /// The partition key and the update, as an INSERT at `timestamp` writes it: a row marker,
    /// every given cell, and a non-frozen collection replaced (deleted just before its new
    /// elements).
    pub fn build(self, timestamp: Timestamp, now: LocalTime) -> Result<(DecoratedKey, Partition)> {
        self.build_with_ttl(timestamp, now, None)
    }

    /// [`RowWriter::build`], as `INSERT ... USING TTL ttl` writes it when `ttl` is given: the
    /// marker and every cell expire `ttl` seconds after `now`.
    pub fn build_with_ttl(
        self,
        timestamp: Timestamp,
        now: LocalTime,
        ttl: Option<u32>,
    ) -> Result<(DecoratedKey, Partition)> {
        let expiry = ttl.map(|ttl| Expiry::new(ttl, now.saturating_add(ttl)));
        let cell = |value: Bytes| match expiry {
            Some(e) => Cell::expiring(timestamp, value, e.ttl, e.local_expiry),
            None => Cell::live(timestamp, value),
        };
        let missing = |name: &str| {
            ReplicaError::Invalid(format!(
                "no value for primary key column {name} of {}.{}",
                self.table.keyspace, self.table.name
            ))
        };
        let mut pk_values = Vec::new();
        for column in self.table.partition_key() {
            let value = self
                .values
                .get(column.name.as_str())
                .ok_or_else(|| missing(&column.name))?;
            pk_values.push(serialize(value));
        }
        let pk_refs: Vec<&[u8]> = pk_values.iter().map(|b| &b[..]).collect();
        let key = serialize_partition_key(&pk_refs)
            .map_err(|e| ReplicaError::Invalid(format!("partition key: {e}")))?;
        let clustering = self.table.clustering();
        let mut ck_values = Vec::new();
        for (column, _) in &clustering {
            let value = self
                .values
                .get(column.name.as_str())
                .ok_or_else(|| missing(&column.name))?;
            ck_values.push(serialize(value));
        }
        let types: Vec<_> = clustering.iter().map(|(c, o)| (c.ty.clone(), *o)).collect();
        let ck_refs: Vec<&[u8]> = ck_values.iter().map(|b| &b[..]).collect();
        let clustering_key = encode_key(&types, &ck_refs)
            .map_err(|e| ReplicaError::Invalid(format!("clustering key: {e}")))?;

        let mut row = Row {
            liveness: Some(LivenessInfo::new(timestamp, expiry)),
            ..Row::default()
        };
        for column in &self.table.columns {
            if !matches!(column.kind, ColumnKind::Regular | ColumnKind::Static) {
                continue;
            }
            let Some(value) = self.values.get(column.name.as_str()) else {
                continue;
            };
            if column.ty.is_multi_cell() {
                row.column_deletions
                    .insert(column.id, DeletionTime::new(timestamp - 1, now));
                let elements: Vec<(Bytes, Bytes)> = match value {
                    SysValue::Texts(items) if matches!(column.ty, CqlType::Set { .. }) => items
                        .iter()
                        .map(|s| (Bytes::copy_from_slice(s.as_bytes()), Bytes::new()))
                        .collect(),
                    SysValue::TextMap(entries) => entries
                        .iter()
                        .map(|(k, v)| {
                            (
                                Bytes::copy_from_slice(k.as_bytes()),
                                Bytes::copy_from_slice(v.as_bytes()),
                            )
                        })
                        .collect(),
                    other => {
                        return Err(ReplicaError::Invalid(format!(
                            "{other:?} for non-frozen column {}",
                            column.name
                        )));
                    }
                };
                for (path, value) in elements {
                    row.cells
                        .insert(CellKey::element(column.id, path), cell(value));
                }
            } else {
                row.cells
                    .insert(CellKey::simple(column.id), cell(serialize(value)));
            }
        }
        let mut update = Partition::new();
        update.add_row(clustering_key, row);
        Ok((DecoratedKey::new(key), update))
    }
}

/// One live row read back: each column's serialized value (primary key columns included;
/// a non-frozen collection comes back serialized as its frozen form).
pub type ReadRow = BTreeMap<String, Bytes>;

/// The live rows of a partition of `table`, at `now`.
pub fn read_rows(
    table: &TableDef,
    key: &DecoratedKey,
    partition: &Partition,
    now: LocalTime,
) -> Result<Vec<ReadRow>> {
    let pk = table.partition_key();
    let pk_values = split_partition_key(&key.key, pk.len())
        .ok_or_else(|| ReplicaError::CorruptSchema("composite partition key".into()))?;
    let clustering = table.clustering();
    let types: Vec<_> = clustering.iter().map(|(c, o)| (c.ty.clone(), *o)).collect();
    let mut out = Vec::new();
    for (ck, row) in partition.live_rows(now) {
        let mut values = ReadRow::new();
        for (column, value) in pk.iter().zip(&pk_values) {
            values.insert(column.name.clone(), value.clone());
        }
        let ck_values = khata_types::clustering::decode_key(&types, ck)
            .map_err(|e| ReplicaError::CorruptSchema(format!("clustering key: {e}")))?;
        for ((column, _), value) in clustering.iter().zip(ck_values) {
            values.insert(column.name.clone(), value);
        }
        let mut collections: BTreeMap<u32, Vec<(Bytes, Bytes)>> = BTreeMap::new();
        for (cell_key, cell) in row.cells.iter() {
            let Some(value) = cell.live_value(now) else {
                continue;
            };
            match &cell_key.path {
                None => {
                    if let Some(column) = table.column_by_id(cell_key.column) {
                        values.insert(column.name.clone(), value.clone());
                    }
                }
                Some(path) => collections
                    .entry(cell_key.column)
                    .or_default()
                    .push((path.clone(), value.clone())),
            }
        }
        for (id, elements) in collections {
            let Some(column) = table.column_by_id(id) else {
                continue;
            };
            let bytes = match column.ty {
                CqlType::Map { .. } => serialize_collection(
                    elements.len(),
                    elements.iter().flat_map(|(k, v)| [&k[..], &v[..]]),
                ),
                _ => serialize_collection(elements.len(), elements.iter().map(|(k, _)| &k[..])),
            };
            values.insert(column.name.clone(), bytes);
        }
        out.push(values);
    }
    Ok(out)
}

/// Typed access to a [`ReadRow`].
pub trait ReadRowExt {
    fn text(&self, column: &str) -> Result<String>;
    fn text_opt(&self, column: &str) -> Result<Option<String>>;
    fn int_opt(&self, column: &str) -> Result<Option<i32>>;
    fn double_opt(&self, column: &str) -> Result<Option<f64>>;
    fn bool_opt(&self, column: &str) -> Result<Option<bool>>;
    fn uuid_opt(&self, column: &str) -> Result<Option<Uuid>>;
    fn texts(&self, column: &str) -> Result<Vec<String>>;
    fn text_map(&self, column: &str) -> Result<Vec<(String, String)>>;
    /// A `map<text, blob>`; an absent column is an empty map.
    fn blob_map(&self, column: &str) -> Result<Vec<(String, Bytes)>>;
    fn timestamp_opt(&self, column: &str) -> Result<Option<i64>>;
}

fn corrupt(column: &str, what: &str) -> ReplicaError {
    ReplicaError::CorruptSchema(format!("column {column}: {what}"))
}

fn utf8(column: &str, bytes: &[u8]) -> Result<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| corrupt(column, "invalid UTF-8"))
}

fn collection_items(column: &str, bytes: &[u8]) -> Result<Vec<Bytes>> {
    let bad = || corrupt(column, "malformed collection");
    if bytes.len() < 4 {
        return Err(bad());
    }
    let count = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let count = usize::try_from(count).map_err(|_| bad())?;
    let mut rest = &bytes[4..];
    let mut out = Vec::new();
    while !rest.is_empty() {
        if rest.len() < 4 {
            return Err(bad());
        }
        let len = i32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let len = usize::try_from(len).map_err(|_| bad())?;
        if rest.len() < 4 + len {
            return Err(bad());
        }
        out.push(Bytes::copy_from_slice(&rest[4..4 + len]));
        rest = &rest[4 + len..];
    }
    if out.len() != count && out.len() != count * 2 {
        return Err(bad());
    }
    Ok(out)
}

impl ReadRowExt for ReadRow {
    fn text(&self, column: &str) -> Result<String> {
        self.text_opt(column)?
            .ok_or_else(|| corrupt(column, "missing"))
    }

    fn text_opt(&self, column: &str) -> Result<Option<String>> {
        self.get(column).map(|b| utf8(column, b)).transpose()
    }

    fn int_opt(&self, column: &str) -> Result<Option<i32>> {
        self.get(column)
            .map(|b| {
                <[u8; 4]>::try_from(&b[..])
                    .map(i32::from_be_bytes)
                    .map_err(|_| corrupt(column, "not an int"))
            })
            .transpose()
    }

    fn double_opt(&self, column: &str) -> Result<Option<f64>> {
        self.get(column)
            .map(|b| {
                <[u8; 8]>::try_from(&b[..])
                    .map(f64::from_be_bytes)
                    .map_err(|_| corrupt(column, "not a double"))
            })
            .transpose()
    }

    fn bool_opt(&self, column: &str) -> Result<Option<bool>> {
        self.get(column)
            .map(|b| match &b[..] {
                [v] => Ok(*v != 0),
                _ => Err(corrupt(column, "not a boolean")),
            })
            .transpose()
    }

    fn uuid_opt(&self, column: &str) -> Result<Option<Uuid>> {
        self.get(column)
            .map(|b| Uuid::from_slice(b).map_err(|_| corrupt(column, "not a uuid")))
            .transpose()
    }

    fn texts(&self, column: &str) -> Result<Vec<String>> {
        match self.get(column) {
            None => Ok(Vec::new()),
            Some(b) => collection_items(column, b)?
                .iter()
                .map(|item| utf8(column, item))
                .collect(),
        }
    }

    fn text_map(&self, column: &str) -> Result<Vec<(String, String)>> {
        let items = self.texts(column)?;
        if items.len() % 2 != 0 {
            return Err(corrupt(column, "odd map"));
        }
        Ok(items
            .chunks(2)
            .map(|kv| (kv[0].clone(), kv[1].clone()))
            .collect())
    }

    fn blob_map(&self, column: &str) -> Result<Vec<(String, Bytes)>> {
        let items = match self.get(column) {
            None => return Ok(Vec::new()),
            Some(b) => collection_items(column, b)?,
        };
        if items.len() % 2 != 0 {
            return Err(corrupt(column, "odd map"));
        }
        items
            .chunks(2)
            .map(|kv| Ok((utf8(column, &kv[0])?, kv[1].clone())))
            .collect()
    }

    fn timestamp_opt(&self, column: &str) -> Result<Option<i64>> {
        self.get(column)
            .map(|b| {
                <[u8; 8]>::try_from(&b[..])
                    .map(i64::from_be_bytes)
                    .map_err(|_| corrupt(column, "not a timestamp"))
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system_tables;

    #[test]
    fn a_row_reads_back() {
        let table = system_tables::keyspaces();
        let (key, update) = RowWriter::new(&table)
            .set("keyspace_name", SysValue::Text("ks".into()))
            .set("durable_writes", SysValue::Bool(true))
            .set(
                "replication",
                SysValue::TextMap(vec![("class".into(), "SimpleStrategy".into())]),
            )
            .build(10, 1)
            .unwrap();
        let rows = read_rows(&table, &key, &update, 1).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].text("keyspace_name").unwrap(), "ks");
        assert_eq!(rows[0].bool_opt("durable_writes").unwrap(), Some(true));
        assert_eq!(
            rows[0].text_map("replication").unwrap(),
            vec![("class".to_string(), "SimpleStrategy".to_string())]
        );
    }

    #[test]
    fn a_non_frozen_set_is_one_cell_per_element() {
        let table = system_tables::local();
        let (key, update) = RowWriter::new(&table)
            .set("key", SysValue::Text("local".into()))
            .set("tokens", SysValue::Texts(vec!["1".into(), "-5".into()]))
            .build(10, 1)
            .unwrap();
        let row = update.rows.values().next().unwrap();
        assert_eq!(row.cells.len(), 2);
        let rows = read_rows(&table, &key, &update, 1).unwrap();
        let mut tokens = rows[0].texts("tokens").unwrap();
        tokens.sort();
        assert_eq!(tokens, vec!["-5".to_string(), "1".to_string()]);
    }
}
