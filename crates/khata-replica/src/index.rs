//! Secondary indexes, local to each replica as Cassandra's are: every node indexes the data it
//! holds, and a query through an index asks each replica for its token ranges.
//!
//! An index on column `v` of table `t` is a hidden storage table `t.<index name>`:
//!
//! ```text
//! partition key  the indexed value's bytes
//! clustering     (token of the base partition: bigint, base partition key: blob,
//!                 the base clustering columns...)
//! row            a row marker with the indexed cell's timestamp and TTL
//! ```
//!
//! so one value's entries are one partition in token order, and a token range of the base
//! table is a clustering slice of it. What is indexed ([`Indexed`]): a regular column's cell;
//! each element of a non-frozen collection (`values()`: set elements, list elements, map values;
//! `keys()`: map keys; `entries()`: a map's key and value together, [`entry_value`]); a
//! clustering column, with an entry for every row a write makes live; or, with an empty base
//! clustering so that an entry names a whole partition, a static column or a component of a
//! composite partition key (an entry for every write to the partition). An entry's timestamp
//! is the newest of what made it, and it expires only when all of that expires.
//!
//! Entries are written in the same commit-log record as the base write that made them (see
//! [`entries`]); nothing is read before a write, so an entry outlives the value it pointed to
//! when that value is overwritten or deleted. Reads check every entry against the base row
//! (or partition) and delete the stale ones with a tombstone at the entry's own timestamp,
//! which shadows that entry and no later one (Cassandra's read-time cleanup).
//!
//! Every value is indexed, the empty one included (`WHERE v = ''` finds the rows whose `v` is
//! empty, as in Cassandra). A value of 64 KiB or more cannot be (Cassandra's limit: an index
//! table's partition key is at most 65535 bytes): a write of one is refused with Cassandra's
//! message, and a query for one too (see [`MAX_INDEXED_VALUE_BYTES`]).
//!
//! An index created on a table that already has data is built by scanning the table; a row
//! in the empty value's partition whose clustering no entry can have ([`BUILT_MARKER`]) marks
//! the build complete, and an index without it is built again when the node starts. (Before
//! empty values were indexed the marker was the row with the empty clustering; an index
//! carrying only that one is built again, so that it gains its empty values' entries.)
//!
//! An index's storage table is named `<table>.<index>`, and the storage engine names its
//! directory `<table>.<index>-<id>`, which has to fit in one file name: index names are
//! limited accordingly ([`check_name`]).

use std::ops::Bound;

use bytes::Bytes;
use khata_storage::{Engine, Mutation, TableSpec};
use khata_types::LocalTime;
use khata_types::cell::{CellKind, DeletionTime, Expiry, LivenessInfo};
use khata_types::clustering::{
    after_prefix, canonical_value, decode_key, encode_key, end_bound, full_range,
};
use khata_types::java_text::java_float;
use khata_types::partition::Partition;
use khata_types::row::{CellKey, ColumnId, Row};
use khata_types::schema::{ClusteringOrder, ColumnDef, ColumnKind, CqlType, TableDef};
use khata_types::token::{DecoratedKey, Token, split_partition_key};
use uuid::Uuid;

use crate::error::{ReplicaError, Result};
use crate::schema::{IndexDef, TableSchema};

/// What part of a column an index covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKind {
    /// The column's value (of a key, static or regular column).
    Simple,
    /// A frozen collection as a whole (`full(c)`).
    Full,
    /// The keys of a non-frozen map (`keys(m)`), for `CONTAINS KEY`.
    Keys,
    /// The elements of a non-frozen list or set, or the values of a map (`values(c)`), for
    /// `CONTAINS`.
    Values,
    /// The entries of a non-frozen map (`entries(m)`), for `m[key] = value`.
    Entries,
}

impl IndexKind {
    /// The function name of the target text (`keys` in `keys(m)`); none for a simple index.
    fn function(self) -> Option<&'static str> {
        match self {
            IndexKind::Simple => None,
            IndexKind::Full => Some("full"),
            IndexKind::Keys => Some("keys"),
            IndexKind::Values => Some("values"),
            IndexKind::Entries => Some("entries"),
        }
    }
}

impl IndexDef {
    /// The indexed column's name and what of it is indexed, from the target as
    /// `system_schema.indexes` keeps it (`v`, `"Quoted"`, `full(v)`, `values(tags)`).
    pub fn column(&self) -> (String, IndexKind) {
        let (inner, kind) = [
            IndexKind::Full,
            IndexKind::Keys,
            IndexKind::Values,
            IndexKind::Entries,
        ]
        .into_iter()
        .find_map(|kind| {
            let f = kind.function()?;
            self.target
                .strip_prefix(f)
                .and_then(|t| t.strip_prefix('('))
                .and_then(|t| t.strip_suffix(')'))
                .map(|inner| (inner, kind))
        })
        .unwrap_or((self.target.as_str(), IndexKind::Simple));
        let name = match inner.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
            Some(quoted) => quoted.replace("\"\"", "\""),
            None => inner.to_string(),
        };
        (name, kind)
    }

    /// Whether the index keeps entries in a storage table of its own: every index but a
    /// custom (SAI) one on a vector column, which only orders `ANN OF` queries, and those
    /// scan the table (an exact search).
    pub fn has_storage(&self, table: &TableDef) -> bool {
        self.custom.is_none()
            || !table
                .column(&self.column().0)
                .is_some_and(|c| matches!(c.ty, CqlType::Vector { .. }))
    }
}

/// The target text Cassandra keeps for an index on `column`.
pub fn target_text(column: &str, kind: IndexKind) -> String {
    let name = khata_types::type_text::quote_identifier(column);
    match kind.function() {
        None => name,
        Some(f) => format!("{f}({name})"),
    }
}

/// The value an `entries(m)` index files the entry `key: value` of a map under (what a query
/// `m[key] = value` looks up): both serialized values, the key with a 32-bit length.
pub fn entry_value(key: &[u8], value: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(4 + key.len() + value.len());
    out.extend_from_slice(&(key.len() as u32).to_be_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(value);
    Bytes::from(out)
}

/// The map key and value of an [`entry_value`].
fn split_entry_value(entry: &Bytes) -> Option<(Bytes, Bytes)> {
    let len = usize::try_from(u32::from_be_bytes(entry.get(..4)?.try_into().ok()?)).ok()?;
    let key = entry.get(4..4usize.checked_add(len)?)?;
    Some((entry.slice_ref(key), entry.slice(4 + len..)))
}

/// The size from which an indexed value is refused: Cassandra's `FBUtilities.MAX_UNSIGNED_SHORT`
/// (a write of a value this size or larger, or a query for a larger one, is refused).
pub const MAX_INDEXED_VALUE_BYTES: usize = 65535;

/// The longest file name (one path component) the file systems khata runs on take.
const MAX_FILE_NAME_BYTES: usize = 255;

/// What the storage engine adds to a table's name for its directory: `-` and the id's 32 hex
/// digits ([`TableSpec::dir_name`]).
const DIR_NAME_SUFFIX_BYTES: usize = 33;

/// The longest name an index on table `table` may have: its storage directory is
/// `<table>.<index>-<id>`, which must be one file name of at most 255 bytes.
pub fn max_name_len(table: &str) -> usize {
    MAX_FILE_NAME_BYTES.saturating_sub(table.len() + 1 + DIR_NAME_SUFFIX_BYTES)
}

/// Whether `name` is one an index on `table` may take: Cassandra's rule, ASCII word
/// characters only (`\w+`, `IndexMetadata.isNameValid`), and short enough for its storage
/// directory ([`max_name_len`]; Cassandra 4.1 has no limit and fails creating the files).
pub fn check_name(table: &str, name: &str) -> Result<()> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(ReplicaError::Invalid(format!("Illegal index name {name}")));
    }
    let max = max_name_len(table);
    if name.len() > max {
        return Err(ReplicaError::Invalid(format!(
            "Index name must not be empty, more than {max} characters long, or contain non-alphanumeric-underscore characters (got \"{name}\")"
        )));
    }
    Ok(())
}

/// The size Cassandra gives a value an index of `kind` files: an `entries()` value is its
/// key and value as a `CompositeType` (a 2-byte length and an end byte each), where khata's
/// [`entry_value`] has one 4-byte length.
fn cassandra_size(kind: IndexKind, filed: &[u8]) -> usize {
    match kind {
        IndexKind::Entries => filed.len() + 2,
        _ => filed.len(),
    }
}

/// The storage table id of index `name` on table `base`: derived from both, so every node
/// agrees on it without storing it.
pub fn index_table_id(base: Uuid, name: &str) -> Uuid {
    let text = format!("{base}/{name}");
    let hi = khata_types::token::murmur3_token(text.as_bytes()) as u64;
    let lo = khata_types::token::murmur3_token(format!("{text}#").as_bytes()) as u64;
    let bytes = ((u128::from(hi) << 64) | u128::from(lo)).to_be_bytes();
    uuid::Builder::from_bytes(bytes)
        .with_variant(uuid::Variant::RFC4122)
        .with_version(uuid::Version::Md5)
        .into_uuid()
}

/// The storage table of an index.
pub(crate) fn index_spec(base: &TableDef, index: &IndexDef) -> TableSpec {
    TableSpec {
        id: index_table_id(base.id, &index.name),
        keyspace: base.keyspace.clone(),
        name: format!("{}.{}", base.name, index.name),
        options: base.options.clone(),
    }
}

/// The indexed column of `index`, checked against the table.
pub(crate) fn indexed_column<'t>(table: &'t TableDef, index: &IndexDef) -> Result<&'t ColumnDef> {
    let (name, kind) = index.column();
    let column = table
        .column(&name)
        .ok_or_else(|| ReplicaError::Invalid(format!("Column '{name}' doesn't exist")))?;
    check_target(table, column, kind)?;
    Ok(column)
}

/// Whether khata can index `column` this way; the messages are Cassandra's where it has one.
pub fn check_target(table: &TableDef, column: &ColumnDef, kind: IndexKind) -> Result<()> {
    let invalid = |m: String| Err(ReplicaError::Invalid(m));
    if table.columns.iter().any(|c| c.ty == CqlType::Counter) {
        return invalid("Secondary indexes on counter tables aren't supported".into());
    }
    if mentions_duration(&column.ty) {
        return invalid(match column.ty {
            CqlType::List { .. } | CqlType::Set { .. } | CqlType::Map { .. } => {
                "Secondary indexes are not supported on collections containing durations".into()
            }
            CqlType::Tuple(_) => {
                "Secondary indexes are not supported on tuples containing durations".into()
            }
            CqlType::Udt { .. } => {
                "Secondary indexes are not supported on UDTs containing durations".into()
            }
            _ => "Secondary indexes are not supported on duration columns".into(),
        });
    }
    if matches!(column.kind, ColumnKind::PartitionKey { .. }) && table.partition_key().len() == 1 {
        return invalid(format!(
            "Cannot create secondary index on the only partition key column {}",
            column.name
        ));
    }
    let collection = matches!(
        column.ty,
        CqlType::List { .. } | CqlType::Set { .. } | CqlType::Map { .. }
    );
    let frozen_collection = collection && !column.ty.is_multi_cell();
    let function = kind.function().unwrap_or("");
    if frozen_collection && kind != IndexKind::Full {
        return invalid(format!(
            "Cannot create {function}() index on frozen column {0}. Frozen collections are immutable and must be fully indexed by using the 'full({0})' modifier",
            column.name
        ));
    }
    if !frozen_collection && kind == IndexKind::Full {
        return invalid("full() indexes can only be created on frozen collections".into());
    }
    if !collection && kind != IndexKind::Simple {
        return invalid(format!(
            "Cannot create {function}() index on {}. Non-collection columns only support simple indexes",
            column.name
        ));
    }
    let multi_cell_map = matches!(column.ty, CqlType::Map { frozen: false, .. });
    if !multi_cell_map && matches!(kind, IndexKind::Keys | IndexKind::Entries) {
        return invalid(format!(
            "Cannot create index on {function} of column {} with non-map type",
            column.name
        ));
    }
    if matches!(column.ty, CqlType::Udt { frozen: false, .. }) {
        return invalid(format!(
            "Cannot create index on non-frozen UDT column {}",
            column.name
        ));
    }
    Ok(())
}

fn mentions_duration(ty: &CqlType) -> bool {
    match ty {
        CqlType::Duration => true,
        CqlType::List { element, .. }
        | CqlType::Set { element, .. }
        | CqlType::Vector { element, .. } => mentions_duration(element),
        CqlType::Map { key, value, .. } => mentions_duration(key) || mentions_duration(value),
        CqlType::Tuple(items) => items.iter().any(mentions_duration),
        CqlType::Udt { fields, .. } => fields.iter().any(|(_, t)| mentions_duration(t)),
        _ => false,
    }
}

/// The clustering column types of an index table on `base`.
fn entry_types(base: &TableDef) -> Vec<(CqlType, ClusteringOrder)> {
    let mut types = vec![
        (CqlType::Bigint, ClusteringOrder::Asc),
        (CqlType::Blob, ClusteringOrder::Asc),
    ];
    types.extend(base.clustering().iter().map(|(c, o)| (c.ty.clone(), *o)));
    types
}

/// The index clustering prefix of one base partition: its token, then its key.
fn entry_prefix(key: &DecoratedKey) -> Result<Vec<u8>> {
    let types = [
        (CqlType::Bigint, ClusteringOrder::Asc),
        (CqlType::Blob, ClusteringOrder::Asc),
    ];
    let prefix = encode_key(&types, &[&key.token.0.to_be_bytes(), &key.key])
        .map_err(|e| ReplicaError::Invalid(format!("partition key cannot be indexed: {e}")))?;
    Ok(prefix.to_vec())
}

/// The start (or, `end`, the end) of a token bound in an index partition's clustering.
fn token_bound(bound: Bound<Token>, end: bool) -> Result<Bytes> {
    let types = [(CqlType::Bigint, ClusteringOrder::Asc)];
    let prefix = |t: Token| {
        encode_key(&types, &[&t.0.to_be_bytes()])
            .map_err(|e| ReplicaError::Invalid(format!("token bound: {e}")))
    };
    Ok(match (bound, end) {
        (Bound::Unbounded, false) => full_range().0,
        (Bound::Unbounded, true) => full_range().1,
        (Bound::Included(t), false) => prefix(t)?,
        (Bound::Excluded(t), false) => after_prefix(&prefix(t)?),
        (Bound::Included(t), true) => end_bound(&prefix(t)?, true),
        (Bound::Excluded(t), true) => prefix(t)?,
    })
}

/// Where an index finds the values it files entries under.
#[derive(Clone, Copy, Debug)]
enum Indexed {
    /// A regular column's cell: a simple value, or a frozen collection whole.
    Cell(ColumnId),
    /// The keys, values or entries of a regular non-frozen collection (`set`: a set, whose
    /// elements are the cells' paths).
    Elements {
        column: ColumnId,
        kind: IndexKind,
        set: bool,
    },
    /// A static column's cell; its entries name partitions.
    Static(ColumnId),
    /// The keys, values or entries of a static non-frozen collection, as [`Indexed::Elements`]
    /// reads them from the static row; its entries name partitions.
    StaticElements {
        column: ColumnId,
        kind: IndexKind,
        set: bool,
    },
    /// Component `n` of the clustering key.
    Clustering(usize),
    /// Component `n` of a composite partition key; its entries name partitions.
    PartitionKey(usize),
}

impl Indexed {
    /// What `index` on `column` reads.
    fn of(column: &ColumnDef, kind: IndexKind) -> Indexed {
        match (column.kind, kind) {
            (ColumnKind::PartitionKey { position }, _) => Indexed::PartitionKey(position as usize),
            (ColumnKind::Clustering { position, .. }, _) => Indexed::Clustering(position as usize),
            (ColumnKind::Static, IndexKind::Keys | IndexKind::Values | IndexKind::Entries) => {
                Indexed::StaticElements {
                    column: column.id,
                    kind,
                    set: matches!(column.ty, CqlType::Set { .. }),
                }
            }
            (ColumnKind::Static, _) => Indexed::Static(column.id),
            (ColumnKind::Regular, IndexKind::Keys | IndexKind::Values | IndexKind::Entries) => {
                Indexed::Elements {
                    column: column.id,
                    kind,
                    set: matches!(column.ty, CqlType::Set { .. }),
                }
            }
            (ColumnKind::Regular, IndexKind::Simple | IndexKind::Full) => Indexed::Cell(column.id),
        }
    }

    /// Whether entries name whole partitions (their base clustering is empty).
    fn names_partitions(self) -> bool {
        matches!(
            self,
            Indexed::Static(_) | Indexed::StaticElements { .. } | Indexed::PartitionKey(_)
        )
    }

    /// For the elements of a static collection, what reads them from the static row.
    fn in_static_row(self) -> Option<Indexed> {
        match self {
            Indexed::StaticElements { column, kind, set } => {
                Some(Indexed::Elements { column, kind, set })
            }
            _ => None,
        }
    }
}

/// A value an index files an entry under, with the entry's timestamp and expiry.
type Filed = (Bytes, i64, Option<Expiry>);

/// The timestamp and expiry of an entry that stands for `rows`' live content: the newest
/// timestamp, and no expiry unless everything live expires (then the latest expiry). `None`
/// when nothing in them is live (deletions only).
fn content_liveness<'r>(rows: impl Iterator<Item = &'r Row>) -> Option<(i64, Option<Expiry>)> {
    let mut newest: Option<i64> = None;
    let mut expiry: Option<Option<Expiry>> = None;
    let mut note = |timestamp: i64, e: Option<Expiry>| {
        newest = Some(newest.map_or(timestamp, |n| n.max(timestamp)));
        expiry = Some(match (expiry, e) {
            (None, e) => e,
            (Some(None), _) | (Some(_), None) => None,
            (Some(Some(a)), Some(b)) => Some(if b.local_expiry > a.local_expiry {
                b
            } else {
                a
            }),
        });
    };
    for row in rows {
        if let Some(l) = row.liveness {
            note(l.timestamp, l.expiry);
        }
        for cell in row.cells.values() {
            match &cell.kind {
                CellKind::Live { .. } => note(cell.timestamp, None),
                CellKind::Expiring { expiry, .. } => note(cell.timestamp, Some(*expiry)),
                CellKind::Tombstone { .. } => {}
            }
        }
    }
    Some((newest?, expiry.flatten()))
}

/// The values a row-level index files `row` (at `clustering`) under, from a write.
fn row_values(
    indexed: Indexed,
    clustering_types: &[(CqlType, ClusteringOrder)],
    clustering: &[u8],
    row: &Row,
    out: &mut Vec<Filed>,
) {
    match indexed {
        Indexed::Cell(column) => {
            if let Some(cell) = row.cells.get(&CellKey::simple(column)) {
                match &cell.kind {
                    CellKind::Live { value } => out.push((value.clone(), cell.timestamp, None)),
                    CellKind::Expiring { value, expiry } => {
                        out.push((value.clone(), cell.timestamp, Some(*expiry)));
                    }
                    CellKind::Tombstone { .. } => {}
                }
            }
        }
        Indexed::Elements { column, kind, set } => {
            for (key, cell) in row.cells.iter() {
                let (true, Some(path)) = (key.column == column, &key.path) else {
                    continue;
                };
                let (value, expiry) = match &cell.kind {
                    CellKind::Live { value } => (value, None),
                    CellKind::Expiring { value, expiry } => (value, Some(*expiry)),
                    CellKind::Tombstone { .. } => continue,
                };
                let filed = match kind {
                    IndexKind::Keys => path.clone(),
                    IndexKind::Values if set => path.clone(),
                    IndexKind::Entries => entry_value(path, value),
                    _ => value.clone(),
                };
                out.push((filed, cell.timestamp, expiry));
            }
        }
        Indexed::Clustering(n) => {
            if let Some((timestamp, expiry)) = content_liveness(std::iter::once(row))
                && let Ok(values) = decode_key(clustering_types, clustering)
                && let Some(value) = values.get(n)
            {
                out.push((value.clone(), timestamp, expiry));
            }
        }
        Indexed::Static(_) | Indexed::StaticElements { .. } | Indexed::PartitionKey(_) => {}
    }
}

/// The values a partition-level index files a write of `update` to partition `key` under.
fn partition_values(
    indexed: Indexed,
    key_columns: usize,
    key: &DecoratedKey,
    update: &Partition,
    out: &mut Vec<Filed>,
) {
    if let Some(elements) = indexed.in_static_row() {
        row_values(elements, &[], &[], &update.static_row, out);
        return;
    }
    out.extend(partition_value(indexed, key_columns, key, update));
}

/// The value a partition-level index of one value per partition files a write under.
fn partition_value(
    indexed: Indexed,
    key_columns: usize,
    key: &DecoratedKey,
    update: &Partition,
) -> Option<Filed> {
    match indexed {
        Indexed::Static(column) => {
            let cell = update.static_row.cells.get(&CellKey::simple(column))?;
            match &cell.kind {
                CellKind::Live { value } => Some((value.clone(), cell.timestamp, None)),
                CellKind::Expiring { value, expiry } => {
                    Some((value.clone(), cell.timestamp, Some(*expiry)))
                }
                CellKind::Tombstone { .. } => None,
            }
        }
        Indexed::PartitionKey(n) => {
            let rows = std::iter::once(&update.static_row).chain(update.rows.values());
            let (timestamp, expiry) = content_liveness(rows)?;
            let components = split_partition_key(&key.key, key_columns)?;
            Some((components.get(n)?.clone(), timestamp, expiry))
        }
        _ => None,
    }
}

/// What to do with a value too large to index ([`MAX_INDEXED_VALUE_BYTES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Oversized {
    /// Refuse the write, as Cassandra's `CassandraIndex.validate` does.
    Refuse,
    /// Leave it out of the index (a build over data written before the index was made).
    Skip,
}

/// The index entries a write of `update` to `table` makes, for the indexes `only` names (all
/// when `None`), appended to `out`: one mutation per index and value. A value too large to
/// index refuses the write (`Invalid`, with Cassandra's message).
pub(crate) fn entries(
    table: &TableSchema,
    key: &DecoratedKey,
    update: &Partition,
    only: Option<&str>,
    out: &mut Vec<Mutation>,
) -> Result<()> {
    file_entries(table, key, update, only, Oversized::Refuse, out)
}

/// [`entries`], with `oversized` saying what a value too large to index does.
fn file_entries(
    table: &TableSchema,
    key: &DecoratedKey,
    update: &Partition,
    only: Option<&str>,
    oversized: Oversized,
    out: &mut Vec<Mutation>,
) -> Result<()> {
    let mut prefix: Option<Vec<u8>> = None;
    let mut filed = Vec::new();
    for index in &table.indexes {
        if only.is_some_and(|n| n != index.name) {
            continue;
        }
        if !index.has_storage(&table.def) {
            if oversized == Oversized::Refuse {
                check_vectors(table, index, update)?;
            }
            continue;
        }
        // Checked when the index was created; a write only looks the column up.
        let (name, kind) = index.column();
        let Some(column) = table.def.column(&name) else {
            continue;
        };
        let indexed = Indexed::of(column, kind);
        let id = index_table_id(table.def.id, &index.name);
        let first = out.len();
        // (value, base clustering, timestamp, expiry)
        let mut add = |value: Bytes, clustering: &[u8], timestamp, expiry| -> Result<()> {
            let size = cassandra_size(kind, &value);
            if size >= MAX_INDEXED_VALUE_BYTES {
                return match oversized {
                    Oversized::Skip => Ok(()),
                    Oversized::Refuse => Err(ReplicaError::Invalid(format!(
                        "Cannot index value of size {size} for index {} on {}.{}({}) (maximum allowed size={MAX_INDEXED_VALUE_BYTES})",
                        index.name,
                        khata_types::type_text::quote_identifier(&table.def.keyspace),
                        khata_types::type_text::quote_identifier(&table.def.name),
                        column.name,
                    ))),
                };
            }
            let prefix = match &prefix {
                Some(p) => p,
                None => prefix.insert(entry_prefix(key)?),
            };
            let mut entry = Vec::with_capacity(prefix.len() + clustering.len());
            entry.extend_from_slice(prefix);
            entry.extend_from_slice(clustering);
            let marker = Row {
                liveness: Some(LivenessInfo::new(timestamp, expiry)),
                ..Row::default()
            };
            // Rows of one update with the same value share a mutation.
            match out[first..].iter_mut().find(|m| m.key.key == value) {
                Some(m) => m.update.add_row(Bytes::from(entry), marker),
                None => {
                    let mut p = Partition::new();
                    p.add_row(Bytes::from(entry), marker);
                    out.push(Mutation::new(id, DecoratedKey::new(value), p));
                }
            }
            Ok(())
        };
        if indexed.names_partitions() {
            let n = table.def.partition_key().len();
            filed.clear();
            partition_values(indexed, n, key, update, &mut filed);
            for (value, timestamp, expiry) in filed.drain(..) {
                add(value, &[], timestamp, expiry)?;
            }
            continue;
        }
        let clustering_types = match indexed {
            Indexed::Clustering(_) => clustering_types(&table.def),
            _ => Vec::new(),
        };
        for (clustering, row) in &update.rows {
            filed.clear();
            row_values(indexed, &clustering_types, clustering, row, &mut filed);
            for (value, timestamp, expiry) in filed.drain(..) {
                add(value, clustering, timestamp, expiry)?;
            }
        }
    }
    Ok(())
}

/// Refuse a write of a vector an SAI on a float vector column cannot index, as Cassandra
/// 5.0's `OnHeapGraph.validateIndexable` refuses it: a component that is not finite or whose
/// magnitude is over 1e17, and under cosine similarity (the default) the zero vector.
fn check_vectors(table: &TableSchema, index: &IndexDef, update: &Partition) -> Result<()> {
    let (name, _) = index.column();
    let Some(column) = table.def.column(&name) else {
        return Ok(());
    };
    let CqlType::Vector { element, .. } = &column.ty else {
        return Ok(());
    };
    if **element != CqlType::Float {
        return Ok(());
    }
    let cosine = index
        .custom
        .as_ref()
        .and_then(|c| c.options.get("similarity_function"))
        .is_none_or(|f| f.eq_ignore_ascii_case("cosine"));
    let key = CellKey::simple(column.id);
    let rows = std::iter::once(&update.static_row).chain(update.rows.values());
    for row in rows {
        let Some(cell) = row.cells.get(&key) else {
            continue;
        };
        let value = match &cell.kind {
            CellKind::Live { value } | CellKind::Expiring { value, .. } => value,
            CellKind::Tombstone { .. } => continue,
        };
        let floats: Vec<f32> = value
            .chunks_exact(4)
            .map(|c| f32::from_be_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        check_indexable_vector(&floats, cosine).map_err(ReplicaError::Invalid)?;
    }
    Ok(())
}

/// Whether an SAI can index or be queried with `vector` (`cosine`: under cosine
/// similarity), as Cassandra 5.0's `OnHeapGraph.validateIndexable` checks it; its refusal.
pub fn check_indexable_vector(vector: &[f32], cosine: bool) -> std::result::Result<(), String> {
    for (i, x) in vector.iter().enumerate() {
        if !x.is_finite() {
            return Err(format!(
                "non-finite value at vector[{i}]={}",
                java_float(*x)
            ));
        }
        if x.abs() > 1e17 {
            return Err(format!(
                "Out-of-bounds value at vector[{i}]={}",
                java_float(*x)
            ));
        }
    }
    if cosine && !vector.is_empty() && vector.iter().all(|x| *x == 0.0) {
        return Err("Zero vectors cannot be indexed or queried with cosine similarity".into());
    }
    Ok(())
}

/// The base table's clustering column types.
fn clustering_types(table: &TableDef) -> Vec<(CqlType, ClusteringOrder)> {
    table
        .clustering()
        .iter()
        .map(|(c, o)| (c.ty.clone(), *o))
        .collect()
}

/// Whether the live `row` at `clustering` is filed under `value` by a row-level index.
fn row_matches(
    indexed: Indexed,
    clustering_types: &[(CqlType, ClusteringOrder)],
    clustering: &[u8],
    row: &Row,
    value: &Bytes,
    now: LocalTime,
) -> bool {
    match indexed {
        Indexed::Cell(column) => row
            .cells
            .get(&CellKey::simple(column))
            .and_then(|c| c.live_value(now))
            .is_some_and(|v| v == value),
        Indexed::Elements { column, kind, set } => match kind {
            IndexKind::Keys => row
                .cells
                .get(&CellKey::element(column, value.clone()))
                .is_some_and(|c| c.live_value(now).is_some()),
            IndexKind::Entries => split_entry_value(value).is_some_and(|(key, wanted)| {
                row.cells
                    .get(&CellKey::element(column, key))
                    .and_then(|c| c.live_value(now))
                    .is_some_and(|v| *v == wanted)
            }),
            _ if set => row
                .cells
                .get(&CellKey::element(column, value.clone()))
                .is_some_and(|c| c.live_value(now).is_some()),
            _ => row.cells.iter().any(|(k, c)| {
                k.column == column && k.path.is_some() && c.live_value(now) == Some(value)
            }),
        },
        Indexed::Clustering(n) => decode_key(clustering_types, clustering)
            .ok()
            .and_then(|values| values.get(n).cloned())
            .is_some_and(|v| v == *value),
        Indexed::Static(_) | Indexed::StaticElements { .. } | Indexed::PartitionKey(_) => false,
    }
}

/// Whether the live content of `partition` (key `key`) is filed under `value` by a
/// partition-level index.
fn partition_matches(
    indexed: Indexed,
    key_columns: usize,
    key: &DecoratedKey,
    partition: &Partition,
    value: &Bytes,
    now: LocalTime,
) -> bool {
    if let Some(elements) = indexed.in_static_row() {
        return row_matches(elements, &[], &[], &partition.static_row, value, now);
    }
    match indexed {
        Indexed::Static(column) => partition
            .static_row
            .cells
            .get(&CellKey::simple(column))
            .and_then(|c| c.live_value(now))
            .is_some_and(|v| v == value),
        Indexed::PartitionKey(n) => {
            let live = partition.static_row.is_live(now)
                || partition.rows.values().any(|r| r.is_live(now));
            live && split_partition_key(&key.key, key_columns)
                .and_then(|c| c.get(n).cloned())
                .is_some_and(|v| v == *value)
        }
        _ => false,
    }
}

/// A query through an index: the live rows of `table` whose indexed column holds `value`, in
/// the base partitions of a token range.
#[derive(Clone, Debug)]
pub struct IndexQuery {
    pub table: Uuid,
    pub index: String,
    pub value: Bytes,
    pub start: Bound<Token>,
    pub end: Bound<Token>,
    /// The last entry a previous page consumed ([`IndexResult::resume`]).
    pub resume: Option<Bytes>,
    /// With an index whose entries name whole partitions, when the previous page ended inside
    /// the partition that `resume` names: the clustering of the last row it returned
    /// ([`IndexResult::resume_within`]). That partition's rows are then read from the next one.
    pub resume_within: Option<Bytes>,
    /// The reader is done with the partition `resume` names (DISTINCT took its row, or its
    /// PER PARTITION LIMIT is reached): resume after every entry of that partition.
    pub skip_partition: bool,
    /// At most this many rows.
    pub row_limit: usize,
    pub now: LocalTime,
}

/// What an index query found.
#[derive(Clone, Debug, Default)]
pub struct IndexResult {
    /// Base partitions in token order, each with its static row and the matching rows only.
    pub partitions: Vec<(DecoratedKey, Partition)>,
    /// Where the next page starts, when the row limit stopped this one.
    pub resume: Option<Bytes>,
    /// When the row limit stopped this page inside a partition named by the entry `resume`
    /// (an index whose entries name whole partitions, see [`IndexQuery::resume_within`]):
    /// the clustering of the last row returned from it.
    pub resume_within: Option<Bytes>,
    /// Tombstone warnings from the reads.
    pub warnings: Vec<String>,
    /// Tombstones met in the index and in the base table.
    pub tombstones_scanned: usize,
}

/// Entries read from an index partition per round.
const ENTRY_CHUNK: usize = 1000;

/// Run an index query (see [`IndexQuery`]).
pub(crate) fn query(engine: &Engine, table: &TableSchema, q: &IndexQuery) -> Result<IndexResult> {
    let index = table
        .indexes
        .iter()
        .find(|i| i.name == q.index)
        .ok_or_else(|| ReplicaError::NotFound(format!("Index '{}' doesn't exist", q.index)))?;
    let column = indexed_column(&table.def, index)?;
    // Cassandra's `CassandraIndex.validate(ReadCommand)`.
    if cassandra_size(index.column().1, &q.value) > MAX_INDEXED_VALUE_BYTES {
        return Err(ReplicaError::Invalid(
            "Index expression values may not be larger than 64K".into(),
        ));
    }
    let indexed = Indexed::of(column, index.column().1);
    let clustering_types = clustering_types(&table.def);
    let key_columns = table.def.partition_key().len();
    let index_id = index_table_id(table.def.id, &index.name);
    let types = entry_types(&table.def);
    // A clustering column's entries are filed under the value its key holds: a number in
    // canonical form (`khata_types::clustering`), which any form looked up must become.
    let value = match indexed {
        Indexed::Clustering(_) => {
            canonical_value(&column.ty, &q.value).unwrap_or_else(|_| q.value.clone())
        }
        _ => q.value.clone(),
    };
    let index_key = DecoratedKey::new(value.clone());
    let mut low = token_bound(q.start, false)?;
    let high = token_bound(q.end, true)?;
    // A partition the last page ended inside is named by the entry `resume`, read again.
    let within = q
        .resume
        .as_ref()
        .zip(q.resume_within.as_ref())
        .filter(|_| indexed.names_partitions());
    let within = within.filter(|_| !q.skip_partition);
    if let Some(r) = &q.resume {
        low = low.max(match within {
            Some(_) => r.clone(),
            None if q.skip_partition => match decode_key(&types, r) {
                Ok(v) if v.len() >= 2 => {
                    after_prefix(&entry_prefix(&DecoratedKey::new(v[1].clone()))?)
                }
                _ => after_prefix(r),
            },
            None => after_prefix(r),
        });
    }
    let mut result = IndexResult::default();
    let mut found = 0usize;
    let mut stale = Vec::new();
    'pages: while low < high && found < q.row_limit {
        let read = engine.read(
            index_id,
            &index_key,
            &[(low.clone(), high.clone())],
            false,
            Some(ENTRY_CHUNK),
            q.now,
        )?;
        result.warnings.extend(read.warnings.iter().cloned());
        result.tombstones_scanned += read.tombstones_scanned;
        // (entry clustering, liveness, base key, base clustering)
        let mut batch: Vec<(Bytes, LivenessInfo, DecoratedKey, Bytes)> = Vec::new();
        for (entry, row) in read.partition.live_rows(q.now) {
            let Some(liveness) = row.liveness else {
                continue;
            };
            // The built marker (the empty value's partition holds it), not an entry.
            if is_marker(entry) {
                continue;
            }
            let values = match decode_key(&types, entry) {
                Ok(v) if v.len() >= 2 => v,
                _ => {
                    tracing::warn!(index = index.name, "unreadable index entry skipped");
                    continue;
                }
            };
            let base_key = DecoratedKey::new(values[1].clone());
            let prefix = entry_prefix(&base_key)?;
            let clustering = entry.slice(prefix.len()..);
            batch.push((entry.clone(), liveness, base_key, clustering));
        }
        let Some(last) = read
            .partition
            .live_rows(q.now)
            .next_back()
            .map(|(k, _)| k.clone())
        else {
            break;
        };
        let mut i = 0;
        while i < batch.len() {
            let key = batch[i].2.clone();
            let mut j = i;
            while j < batch.len() && batch[j].2 == key {
                j += 1;
            }
            let group = &batch[i..j];
            let found_before = found;
            // With entries naming partitions, the one the last page ended inside is read from
            // the row after its last one, and any partition at most as many rows as the page
            // has room for: the rest goes to the next page (`resume_within`).
            let resumed_after = within
                .filter(|(entry, _)| group.iter().any(|(e, ..)| e == *entry))
                .map(|(_, c)| c);
            let (ranges, base_limit): (Vec<(Bytes, Bytes)>, Option<usize>) =
                if indexed.names_partitions() {
                    let start = resumed_after.map_or_else(Bytes::new, |c| after_prefix(c));
                    (
                        vec![(start, full_range().1)],
                        Some(q.row_limit.saturating_sub(found).max(1)),
                    )
                } else {
                    let ranges = group
                        .iter()
                        .map(|(_, _, _, ck)| (ck.clone(), after_prefix(ck)))
                        .collect();
                    (ranges, None)
                };
            let base = engine.read(table.def.id, &key, &ranges, false, base_limit, q.now)?;
            // The page ends inside this partition.
            let cut_inside = base.limit_reached && indexed.names_partitions();
            result.warnings.extend(base.warnings.iter().cloned());
            result.tombstones_scanned += base.tombstones_scanned;
            let mut partition = Partition {
                static_row: base.partition.static_row.clone(),
                ..Partition::new()
            };
            for (entry, liveness, _, ck) in group {
                let matches = if indexed.names_partitions() {
                    let hit = partition_matches(
                        indexed,
                        key_columns,
                        &key,
                        &base.partition,
                        &value,
                        q.now,
                    );
                    if hit {
                        for (k, row) in base.partition.live_rows(q.now) {
                            partition.rows.insert(k.clone(), row.clone());
                        }
                        // A partition with only static content is one row (counted on the
                        // page that started it).
                        found += if resumed_after.is_some() {
                            partition.rows.len()
                        } else {
                            partition.rows.len().max(1)
                        };
                    }
                    // A partition resumed inside was found live on an earlier page; what is
                    // left of it (maybe nothing) does not make its entry stale.
                    hit || resumed_after.is_some()
                } else {
                    let current = base.partition.rows.get(ck).filter(|r| r.is_live(q.now));
                    let hit = current.is_some_and(|row| {
                        row_matches(indexed, &clustering_types, ck, row, &value, q.now)
                    });
                    if hit && let Some(row) = current {
                        partition.rows.insert(ck.clone(), row.clone());
                        found += 1;
                    }
                    hit
                };
                if !matches {
                    let mut tombstone = Partition::new();
                    tombstone.add_row(
                        entry.clone(),
                        Row {
                            deletion: Some(DeletionTime::new(liveness.timestamp, q.now)),
                            ..Row::default()
                        },
                    );
                    stale.push(Mutation::new(index_id, index_key.clone(), tombstone));
                }
                if found >= q.row_limit {
                    result.resume = Some(entry.clone());
                    if cut_inside {
                        result.resume_within = partition.rows.keys().next_back().cloned();
                    }
                    let static_only =
                        matches && indexed.names_partitions() && resumed_after.is_none();
                    if !partition.rows.is_empty() || static_only {
                        result.partitions.push((key, partition));
                    }
                    break 'pages;
                }
            }
            let static_hit =
                indexed.names_partitions() && resumed_after.is_none() && found > found_before;
            if !partition.rows.is_empty() || static_hit {
                result.partitions.push((key, partition));
            }
            i = j;
        }
        if !read.limit_reached {
            break;
        }
        low = after_prefix(&last);
    }
    if !stale.is_empty() {
        // Best effort: an entry not deleted now is found stale again by a later read.
        if let Err(e) = engine.apply_batch(stale, false) {
            tracing::warn!(index = index.name, error = %e, "stale index entries were not removed");
        }
    }
    Ok(result)
}

/// The key of the partition holding the row that marks an index as built: the empty value's.
fn built_marker_key() -> DecoratedKey {
    DecoratedKey::new(Bytes::new())
}

/// The clustering of the row that marks an index as built: a byte no entry's clustering starts
/// with (an entry's starts with its token's component header, [`khata_types::clustering::VALUE`]).
const BUILT_MARKER: &[u8] = &[0x00];

/// Whether an index row's clustering is a built marker, [`BUILT_MARKER`] or the empty one that
/// marked builds before empty values were indexed, rather than an entry.
fn is_marker(clustering: &[u8]) -> bool {
    clustering.len() <= BUILT_MARKER.len()
}

/// Whether the build of an index has completed.
pub(crate) fn is_built(
    engine: &Engine,
    table: &TableDef,
    index: &IndexDef,
    now: LocalTime,
) -> Result<bool> {
    if !index.has_storage(table) {
        // Nothing to build: it reads the table itself.
        return Ok(true);
    }
    let id = index_table_id(table.id, &index.name);
    let marker = (Bytes::from_static(BUILT_MARKER), after_prefix(BUILT_MARKER));
    let read = engine.read(id, &built_marker_key(), &[marker], false, Some(1), now)?;
    Ok(read.partition.live_rows(now).next().is_some())
}

/// Index the data `table` holds already, then mark the index built. Writes that arrive
/// meanwhile index themselves; an entry written twice is the same entry.
pub(crate) fn build(
    engine: &Engine,
    table: &TableSchema,
    index: &IndexDef,
    now: LocalTime,
    timestamp: i64,
) -> Result<()> {
    if !index.has_storage(&table.def) {
        return Ok(());
    }
    let mut resume = None;
    loop {
        let page = engine.scan(
            table.def.id,
            Bound::Unbounded,
            Bound::Unbounded,
            resume.as_ref(),
            ENTRY_CHUNK,
            now,
        )?;
        let mut out = Vec::new();
        for (key, partition) in &page.partitions {
            // A value written before the index existed may be too large to index: it is left
            // out (no query can ask for it).
            file_entries(
                table,
                key,
                partition,
                Some(&index.name),
                Oversized::Skip,
                &mut out,
            )?;
        }
        if !out.is_empty() {
            engine.apply_batch(out, true)?;
        }
        match page.resume {
            Some(r) => resume = Some(r),
            None => break,
        }
    }
    let mut marker = Partition::new();
    marker.add_row(
        Bytes::from_static(BUILT_MARKER),
        Row {
            liveness: Some(LivenessInfo::new(timestamp, None)),
            ..Row::default()
        },
    );
    let id = index_table_id(table.def.id, &index.name);
    engine.apply_batch(vec![Mutation::new(id, built_marker_key(), marker)], true)?;
    tracing::info!(
        keyspace = table.def.keyspace,
        table = table.def.name,
        index = index.name,
        "index built"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_back_as_written() {
        for (column, kind, text) in [
            ("v", IndexKind::Simple, "v"),
            ("Quoted", IndexKind::Simple, "\"Quoted\""),
            ("fl", IndexKind::Full, "full(fl)"),
            ("m", IndexKind::Keys, "keys(m)"),
            ("tags", IndexKind::Values, "values(tags)"),
            ("m", IndexKind::Entries, "entries(m)"),
            // A column whose name starts like a function is still a plain column.
            ("keysx", IndexKind::Simple, "keysx"),
        ] {
            assert_eq!(target_text(column, kind), text);
            let def = IndexDef {
                name: "i".into(),
                target: text.into(),
                custom: None,
            };
            assert_eq!(def.column(), (column.to_string(), kind), "{text}");
        }
    }

    #[test]
    fn entry_values_split_into_key_and_value() {
        let v = entry_value(b"key", b"value");
        assert_eq!(
            split_entry_value(&v),
            Some((Bytes::from_static(b"key"), Bytes::from_static(b"value")))
        );
        assert_eq!(
            split_entry_value(&entry_value(b"", b"")),
            Some((Bytes::new(), Bytes::new()))
        );
        assert_eq!(
            split_entry_value(&Bytes::from_static(b"\0\0\0\x09ab")),
            None
        );
        assert_eq!(split_entry_value(&Bytes::from_static(b"\0\0")), None);
    }

    #[test]
    fn an_entry_expires_only_when_everything_live_expires() {
        let expiring = |ttl| Some(Expiry::new(ttl, 1000 + ttl));
        let marker = |ts, expiry| Row {
            liveness: Some(LivenessInfo::new(ts, expiry)),
            ..Row::default()
        };
        let both = [marker(5, expiring(10)), marker(7, expiring(20))];
        assert_eq!(content_liveness(both.iter()), Some((7, expiring(20))));
        let mixed = [marker(5, expiring(10)), marker(3, None)];
        assert_eq!(content_liveness(mixed.iter()), Some((5, None)));
        assert_eq!(content_liveness([Row::default()].iter()), None);
    }
}
