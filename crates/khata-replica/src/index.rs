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
//! table is a clustering slice of it. Entries are written in the same commit-log record as the
//! base write that made them (see [`entries`]); nothing is read before a write, so an entry
//! outlives the value it pointed to when that value is overwritten or deleted. Reads check
//! every entry against the base row and delete the stale ones with a tombstone at the entry's
//! own timestamp, which shadows that entry and no later one (Cassandra's read-time cleanup).
//!
//! An index created on a table that already has data is built by scanning the table; a row
//! with the empty key (never an indexed value) marks the build complete, and an index without
//! it is built again when the node starts.

use std::ops::Bound;

use bytes::Bytes;
use khata_storage::{Engine, Mutation, TableSpec};
use khata_types::LocalTime;
use khata_types::cell::{CellKind, DeletionTime, LivenessInfo};
use khata_types::clustering::{after_prefix, decode_key, encode_key, end_bound, full_range};
use khata_types::partition::Partition;
use khata_types::row::{CellKey, Row};
use khata_types::schema::{ClusteringOrder, ColumnDef, ColumnKind, CqlType, TableDef};
use khata_types::token::{DecoratedKey, Token};
use uuid::Uuid;

use crate::error::{ReplicaError, Result};
use crate::schema::{IndexDef, TableSchema};

/// What part of a column an index covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKind {
    /// The column's value.
    Simple,
    /// A frozen collection as a whole (`full(c)`).
    Full,
}

impl IndexDef {
    /// The indexed column's name and what of it is indexed, from the target as
    /// `system_schema.indexes` keeps it (`v`, `"Quoted"`, `full(v)`).
    pub fn column(&self) -> (String, IndexKind) {
        let (inner, kind) = match self
            .target
            .strip_prefix("full(")
            .and_then(|t| t.strip_suffix(')'))
        {
            Some(inner) => (inner, IndexKind::Full),
            None => (self.target.as_str(), IndexKind::Simple),
        };
        let name = match inner.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
            Some(quoted) => quoted.replace("\"\"", "\""),
            None => inner.to_string(),
        };
        (name, kind)
    }
}

/// The target text Cassandra keeps for an index on `column`.
pub fn target_text(column: &str, kind: IndexKind) -> String {
    let name = khata_types::type_text::quote_identifier(column);
    match kind {
        IndexKind::Simple => name,
        IndexKind::Full => format!("full({name})"),
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
        return invalid("Secondary indexes are not supported on duration columns".into());
    }
    let frozen_collection = matches!(
        column.ty,
        CqlType::List { frozen: true, .. }
            | CqlType::Set { frozen: true, .. }
            | CqlType::Map { frozen: true, .. }
    );
    if frozen_collection && kind != IndexKind::Full {
        return invalid(format!(
            "Cannot create values() index on frozen column {0}. Frozen collections are immutable and must be fully indexed by using the 'full({0})' modifier",
            column.name
        ));
    }
    if !frozen_collection && kind == IndexKind::Full {
        return invalid("full() indexes can only be created on frozen collections".into());
    }
    if matches!(column.ty, CqlType::Udt { frozen: false, .. }) {
        return invalid(format!(
            "Cannot create index on non-frozen UDT column {}",
            column.name
        ));
    }
    match column.kind {
        ColumnKind::Regular if column.ty.is_multi_cell() => invalid(format!(
            "Indexes on the elements of non-frozen collections ({}) are not supported by khata yet",
            column.name
        )),
        ColumnKind::Regular => Ok(()),
        ColumnKind::PartitionKey { .. } if table.partition_key().len() == 1 => invalid(format!(
            "Cannot create secondary index on the only partition key column {}",
            column.name
        )),
        _ => invalid(format!(
            "Secondary indexes on primary key and static columns ({}) are not supported by khata yet; index a regular column",
            column.name
        )),
    }
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

/// The index entries a write of `update` to `table` makes, for the indexes `only` names (all
/// when `None`), appended to `out`: one mutation per index and value.
pub(crate) fn entries(
    table: &TableSchema,
    key: &DecoratedKey,
    update: &Partition,
    only: Option<&str>,
    out: &mut Vec<Mutation>,
) -> Result<()> {
    let mut prefix: Option<Vec<u8>> = None;
    for index in &table.indexes {
        if only.is_some_and(|n| n != index.name) {
            continue;
        }
        // Checked when the index was created; a write only looks the column up.
        let Some(column) = table.def.column(&index.column().0) else {
            continue;
        };
        let cell_key = CellKey::simple(column.id);
        let id = index_table_id(table.def.id, &index.name);
        let first = out.len();
        for (clustering, row) in &update.rows {
            let Some(cell) = row.cells.get(&cell_key) else {
                continue;
            };
            let (value, expiry) = match &cell.kind {
                CellKind::Live { value } => (value, None),
                CellKind::Expiring { value, expiry } => (value, Some(*expiry)),
                CellKind::Tombstone { .. } => continue,
            };
            if value.is_empty() {
                continue;
            }
            let prefix = match &prefix {
                Some(p) => p,
                None => prefix.insert(entry_prefix(key)?),
            };
            let mut entry = Vec::with_capacity(prefix.len() + clustering.len());
            entry.extend_from_slice(prefix);
            entry.extend_from_slice(clustering);
            let marker = Row {
                liveness: Some(LivenessInfo::new(cell.timestamp, expiry)),
                ..Row::default()
            };
            // Rows of one update with the same value share a mutation.
            match out[first..].iter_mut().find(|m| m.key.key == *value) {
                Some(m) => m.update.add_row(Bytes::from(entry), marker),
                None => {
                    let mut p = Partition::new();
                    p.add_row(Bytes::from(entry), marker);
                    out.push(Mutation::new(id, DecoratedKey::new(value.clone()), p));
                }
            }
        }
    }
    Ok(())
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
    let cell_key = CellKey::simple(column.id);
    let index_id = index_table_id(table.def.id, &index.name);
    let types = entry_types(&table.def);
    let index_key = DecoratedKey::new(q.value.clone());
    let mut low = token_bound(q.start, false)?;
    let high = token_bound(q.end, true)?;
    if let Some(r) = &q.resume {
        low = low.max(after_prefix(r));
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
            let ranges: Vec<(Bytes, Bytes)> = group
                .iter()
                .map(|(_, _, _, ck)| (ck.clone(), after_prefix(ck)))
                .collect();
            let base = engine.read(table.def.id, &key, &ranges, false, None, q.now)?;
            result.warnings.extend(base.warnings.iter().cloned());
            result.tombstones_scanned += base.tombstones_scanned;
            let mut partition = Partition {
                static_row: base.partition.static_row.clone(),
                ..Partition::new()
            };
            for (entry, liveness, _, ck) in group {
                let current = base.partition.rows.get(ck).filter(|r| r.is_live(q.now));
                let matches = current
                    .and_then(|r| r.cells.get(&cell_key))
                    .and_then(|c| c.live_value(q.now))
                    .is_some_and(|v| *v == q.value);
                if matches {
                    if let Some(row) = current {
                        partition.rows.insert(ck.clone(), row.clone());
                    }
                    found += 1;
                } else {
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
                    if !partition.rows.is_empty() {
                        result.partitions.push((key, partition));
                    }
                    break 'pages;
                }
            }
            if !partition.rows.is_empty() {
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

/// The key of the row that marks an index as built (the empty key, never an indexed value).
fn built_marker_key() -> DecoratedKey {
    DecoratedKey::new(Bytes::new())
}

/// Whether the build of an index has completed.
pub(crate) fn is_built(
    engine: &Engine,
    table: &TableDef,
    index: &IndexDef,
    now: LocalTime,
) -> Result<bool> {
    let id = index_table_id(table.id, &index.name);
    let read = engine.read(
        id,
        &built_marker_key(),
        &[full_range()],
        false,
        Some(1),
        now,
    )?;
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
            entries(table, key, partition, Some(&index.name), &mut out)?;
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
        Bytes::new(),
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
