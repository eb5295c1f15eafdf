//! Values to cells: how a write lays out a column in a row.
//!
//! - A simple column is one cell; `null` is a cell tombstone.
//! - A non-frozen collection is one cell per element: a set element or map key is its own
//!   path (the value is empty for sets); a list element's path orders it in the list by
//!   write timestamp, then by a node-wide sequence ([`list_path`]), so that elements added
//!   at one timestamp never share a path; a non-frozen UDT has one cell per field, the path
//!   being the field's position as a big-endian `u16`, as in Cassandra. Writing a whole collection first
//!   deletes the old one (a collection tombstone at `timestamp - 1`).
//! - A counter is one `bigint` cell holding the total: on one node, increments are
//!   read-modify-writes serialized per partition ([`Deferred::CounterAdd`]).
//!
//! Operations that depend on what is stored (list `l[i] = v`, `DELETE l[i]`, `l = l - [v]`,
//! counters) are [`Deferred`]: they run on the partition as read under the coordinator's
//! per-partition serialization.
//!
//! A statement's mutation is the join of its operations' cells ([`put_cell`]), as Cassandra's
//! row builder reconciles them: of two writes of one cell at the statement's timestamp the
//! greater value stays, and a tombstone beats a value (`m = m - {4}, m[4] = 9` leaves no 4).

use bytes::Bytes;
use khata_types::Timestamp;
use khata_types::cell::{Cell, DeletionTime, Expiry, LivenessInfo};
use khata_types::row::{CellKey, ColumnId, Row};
use khata_types::schema::{ColumnDef, CqlType};

use super::bind::Bound;
use super::error::ExecError;

/// Time and TTL of a write.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WriteTime {
    pub timestamp: Timestamp,
    pub now: u32,
    pub ttl: Option<u32>,
}

impl WriteTime {
    pub fn cell(&self, value: Bytes) -> Cell {
        match self.ttl {
            Some(ttl) if ttl > 0 => {
                Cell::expiring(self.timestamp, value, ttl, self.now.saturating_add(ttl))
            }
            _ => Cell::live(self.timestamp, value),
        }
    }

    pub fn liveness(&self) -> LivenessInfo {
        match self.ttl {
            Some(ttl) if ttl > 0 => LivenessInfo::new(
                self.timestamp,
                Some(Expiry::new(ttl, self.now.saturating_add(ttl))),
            ),
            _ => LivenessInfo::new(self.timestamp, None),
        }
    }

    pub fn tombstone(&self) -> Cell {
        Cell::tombstone(self.timestamp, self.now)
    }
}

/// Set a column of `row` to a value (or null), as INSERT and `UPDATE ... SET c = v` do.
pub(crate) fn set_column(
    row: &mut Row,
    c: &ColumnDef,
    value: Bound,
    wt: &WriteTime,
) -> Result<(), ExecError> {
    match value {
        Bound::Unset => {}
        Bound::Null if c.ty.is_multi_cell() => {
            put_column_deletion(row, c.id, DeletionTime::new(wt.timestamp, wt.now));
        }
        Bound::Null => {
            put_cell(row, CellKey::simple(c.id), wt.tombstone());
        }
        Bound::Value(bytes) if c.ty.is_multi_cell() => {
            put_column_deletion(row, c.id, DeletionTime::new(wt.timestamp - 1, wt.now));
            add_elements(row, c, &bytes, wt, false)?;
        }
        Bound::Value(bytes) => {
            if c.ty == CqlType::Counter {
                return Err(ExecError::invalid(format!(
                    "Cannot set the value of counter column {} (counters can only be incremented/decremented, not set)",
                    c.name
                )));
            }
            put_cell(row, CellKey::simple(c.id), wt.cell(bytes));
        }
    }
    Ok(())
}

/// Add the elements of a serialized collection (or the fields of a UDT) to a row:
/// `c = c + {...}`, `c = c + [...]`, and the elements of a whole value. `prepend` puts list
/// elements before the existing ones.
pub(crate) fn add_elements(
    row: &mut Row,
    c: &ColumnDef,
    bytes: &[u8],
    wt: &WriteTime,
    prepend: bool,
) -> Result<(), ExecError> {
    for (path, value) in element_cells(c, bytes, wt, prepend)? {
        let cell = match value {
            Some(v) => wt.cell(v),
            None => wt.tombstone(),
        };
        put_cell(row, CellKey::element(c.id, path), cell);
    }
    Ok(())
}

/// Tombstones for the set elements or map keys of a serialized collection (`c = c - {...}`).
pub(crate) fn remove_elements(
    row: &mut Row,
    c: &ColumnDef,
    bytes: &[u8],
    wt: &WriteTime,
) -> Result<(), ExecError> {
    let items = items(c, bytes)?;
    let keys: Vec<Bytes> = match &c.ty {
        CqlType::Set { .. } | CqlType::Map { .. } => items.into_iter().flatten().collect(),
        _ => {
            return Err(ExecError::invalid(format!(
                "Invalid operation for column {}",
                c.name
            )));
        }
    };
    for k in keys {
        put_cell(row, CellKey::element(c.id, k), wt.tombstone());
    }
    Ok(())
}

/// The items of a serialized collection or UDT (`None` for a null field).
fn items(c: &ColumnDef, bytes: &[u8]) -> Result<Vec<Option<Bytes>>, ExecError> {
    let bad = || ExecError::invalid(format!("Invalid collection value for {}", c.name));
    let mut r = bytes;
    let read_i32 = |r: &mut &[u8]| -> Result<i32, ExecError> {
        if r.len() < 4 {
            return Err(bad());
        }
        let v = i32::from_be_bytes([r[0], r[1], r[2], r[3]]);
        *r = &r[4..];
        Ok(v)
    };
    let mut out = Vec::new();
    if matches!(c.ty, CqlType::Udt { .. }) {
        while !r.is_empty() {
            let len = read_i32(&mut r)?;
            if len < 0 {
                out.push(None);
                continue;
            }
            let len = len as usize;
            if r.len() < len {
                return Err(bad());
            }
            out.push(Some(Bytes::copy_from_slice(&r[..len])));
            r = &r[len..];
        }
        return Ok(out);
    }
    let count = read_i32(&mut r)?;
    let per = if matches!(c.ty, CqlType::Map { .. }) {
        2
    } else {
        1
    };
    for _ in 0..count.max(0).saturating_mul(per) {
        let len = read_i32(&mut r)?;
        let len = usize::try_from(len).map_err(|_| bad())?;
        if r.len() < len {
            return Err(bad());
        }
        out.push(Some(Bytes::copy_from_slice(&r[..len])));
        r = &r[len..];
    }
    Ok(out)
}

/// The element cells of a serialized non-frozen collection or UDT: `(path, value)`, a `None`
/// value being a null UDT field.
fn element_cells(
    c: &ColumnDef,
    bytes: &[u8],
    wt: &WriteTime,
    prepend: bool,
) -> Result<Vec<(Bytes, Option<Bytes>)>, ExecError> {
    let items = items(c, bytes)?;
    Ok(match &c.ty {
        CqlType::Set { .. } => items
            .into_iter()
            .flatten()
            .map(|k| (k, Some(Bytes::new())))
            .collect(),
        CqlType::Map { .. } => items
            .chunks(2)
            .filter_map(|kv| Some((kv[0].clone()?, kv[1].clone())))
            .collect(),
        CqlType::Udt { .. } => items
            .into_iter()
            .enumerate()
            .map(|(i, v)| (field_path(i), v))
            .collect(),
        _ => {
            let n = items.len() as u64;
            let block = list_sequence(wt.now, n);
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| {
                    let i = i as u64;
                    let path = if prepend {
                        // Later prepends before earlier ones, each in its own order.
                        prepend_path(wt.timestamp, u64::MAX / 2 - block - n + i)
                    } else {
                        list_path(wt.timestamp, block + i)
                    };
                    (path, v)
                })
                .collect()
        }
    })
}

/// The first of `n` numbers for new list elements' paths, increasing with each call, so that
/// elements added at one timestamp (the statements of a batch, `l = l + [1], l = l + [2]`, two
/// writes `USING TIMESTAMP` the same) each get their own path, in the order they were added,
/// as Cassandra's timeuuid paths do. The sequence starts from the first writer's time (2^20 a
/// second), so it keeps rising across restarts.
fn list_sequence(now_seconds: u32, n: u64) -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let _ = SEQUENCE.compare_exchange(
        0,
        u64::from(now_seconds) << 20,
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    SEQUENCE.fetch_add(n, Ordering::Relaxed)
}

/// A UDT field's path: its position.
pub(crate) fn field_path(index: usize) -> Bytes {
    Bytes::copy_from_slice(&(index as u16).to_be_bytes())
}

/// A list element's path: increasing with the write timestamp, then with `index` (the
/// element's number in [`list_sequence`]), so appended elements sort after the existing ones
/// in list order (Cassandra uses a timeuuid).
pub(crate) fn list_path(timestamp: Timestamp, index: u64) -> Bytes {
    let mut p = Vec::with_capacity(16);
    p.extend_from_slice(&((timestamp as u64) ^ (1 << 63)).to_be_bytes());
    p.extend_from_slice(&index.to_be_bytes());
    Bytes::from(p)
}

/// A prepended element's path: before every appended one, and later prepends before earlier
/// ones (the time is negated), keeping the prepended list's own order by index.
pub(crate) fn prepend_path(timestamp: Timestamp, index: u64) -> Bytes {
    list_path(timestamp.saturating_neg(), index)
}

/// Operations that need the stored row.
///
/// A statement's mutation is the join of its operations' cells, as Cassandra builds it: two
/// writes of one cell keep the greater (a tombstone beats a value of the same timestamp).
/// An operation by list index or value reads the list as stored joined with what the
/// statement wrote to it before that operation (`earlier`, then the outputs of the
/// statement's earlier deferred operations), as Cassandra's `getPrefetchedRow` merges the
/// pending row into the one it read; so `DELETE l[2], l[2]` deletes two elements.
#[derive(Clone, Debug)]
pub(crate) enum Deferred {
    /// `c = c + n` / `c = c - n` on a counter. Increments of one counter in a statement add up.
    CounterAdd { column: ColumnDef, delta: i64 },
    /// `l[i] = v` (`None`: `l[i] = null`).
    ListSet {
        column: ColumnDef,
        index: i32,
        value: Option<Bytes>,
        earlier: Row,
    },
    /// `DELETE l[i]`.
    ListDelete {
        column: ColumnDef,
        index: i32,
        earlier: Row,
    },
    /// `l = l - [v, ...]`: every element equal to one of these.
    ListRemove {
        column: ColumnDef,
        values: Vec<Bytes>,
        earlier: Row,
    },
}

impl Deferred {
    pub fn column(&self) -> &ColumnDef {
        match self {
            Deferred::CounterAdd { column, .. }
            | Deferred::ListSet { column, .. }
            | Deferred::ListDelete { column, .. }
            | Deferred::ListRemove { column, .. } => column,
        }
    }

    /// Apply to `done` (what the statement's earlier deferred operations on the row wrote),
    /// given `current` (the row as stored).
    pub fn apply(
        &self,
        current: &Row,
        done: &mut Row,
        wt: &WriteTime,
        now: u32,
    ) -> Result<(), String> {
        match self {
            Deferred::CounterAdd { column, delta } => {
                let key = CellKey::simple(column.id);
                // An earlier increment in the statement: Cassandra merges a statement's
                // increments of one counter into one update, their sum.
                if let Some(earlier) = done.cells.get_mut(&key) {
                    let sum = earlier
                        .live_value(now)
                        .and_then(|v| <[u8; 8]>::try_from(&v[..]).ok())
                        .map_or(0, i64::from_be_bytes)
                        .wrapping_add(*delta);
                    *earlier = Cell::live(
                        earlier.timestamp,
                        Bytes::copy_from_slice(&sum.to_be_bytes()),
                    );
                    return Ok(());
                }
                let cell = current.cells.get(&key);
                // A deleted counter stays deleted: Cassandra's counter tombstone wins over any
                // later increment (`Cells.resolveCounter`, CASSANDRA-7346), until it is purged.
                if cell.is_some_and(Cell::is_tombstone) {
                    return Ok(());
                }
                let stored = cell
                    .and_then(|c| c.live_value(now))
                    .and_then(|v| <[u8; 8]>::try_from(&v[..]).ok())
                    .map_or(0, i64::from_be_bytes);
                let total = stored.wrapping_add(*delta);
                // The new total must win over the one it was computed from, whatever the
                // clocks of the clients (or coordinators) that sent the two increments.
                let timestamp = cell.map_or(wt.timestamp, |c| wt.timestamp.max(c.timestamp + 1));
                put_cell(
                    done,
                    key,
                    Cell::live(timestamp, Bytes::copy_from_slice(&total.to_be_bytes())),
                );
            }
            Deferred::ListSet {
                column,
                index,
                value,
                earlier,
            } => {
                let path = list_element(
                    current,
                    earlier,
                    done,
                    column,
                    *index,
                    now,
                    "set an element on",
                )?;
                let cell = match value {
                    Some(v) => wt.cell(v.clone()),
                    None => wt.tombstone(),
                };
                put_cell(done, CellKey::element(column.id, path), cell);
            }
            Deferred::ListDelete {
                column,
                index,
                earlier,
            } => {
                let path = list_element(
                    current,
                    earlier,
                    done,
                    column,
                    *index,
                    now,
                    "delete an element from",
                )?;
                put_cell(done, CellKey::element(column.id, path), wt.tombstone());
            }
            Deferred::ListRemove {
                column,
                values,
                earlier,
            } => {
                let list = list_view(current, earlier, done, column.id);
                for (k, cell) in list.cells.iter() {
                    if let (Some(path), Some(v)) = (&k.path, cell.live_value(now))
                        && values.contains(v)
                    {
                        put_cell(
                            done,
                            CellKey::element(column.id, path.clone()),
                            wt.tombstone(),
                        );
                    }
                }
            }
        }
        Ok(())
    }
}

/// The path of element `index` of the list as the statement sees it, or Cassandra's refusal
/// (`what` names the operation: "set an element on", "delete an element from").
fn list_element(
    current: &Row,
    earlier: &Row,
    done: &Row,
    column: &ColumnDef,
    index: i32,
    now: u32,
    what: &str,
) -> Result<Bytes, String> {
    let list = list_view(current, earlier, done, column.id);
    let paths: Vec<&Bytes> = list
        .cells
        .iter()
        .filter(|(_, c)| c.live_value(now).is_some())
        .filter_map(|(k, _)| k.path.as_ref())
        .collect();
    if paths.is_empty() {
        return Err(format!("Attempted to {what} a list which is null"));
    }
    match usize::try_from(index).ok().and_then(|i| paths.get(i)) {
        Some(path) => Ok((*path).clone()),
        None => Err(format!(
            "List index {index} out of bound, list has size {}",
            paths.len()
        )),
    }
}

/// A list as a statement's operation sees it: as stored, joined with the statement's
/// earlier writes to it.
fn list_view(current: &Row, earlier: &Row, done: &Row, column: ColumnId) -> Row {
    let mut list = column_part(current, column);
    list.merge(earlier.clone());
    list.merge(column_part(done, column));
    list
}

/// The part of `row` about one column: its cells and deletion, and the row's deletion.
pub(crate) fn column_part(row: &Row, column: ColumnId) -> Row {
    let mut part = Row {
        deletion: row.deletion,
        ..Row::default()
    };
    if let Some(d) = row.column_deletions.get(&column) {
        part.column_deletions.insert(column, *d);
    }
    for (k, c) in row.cells.iter().filter(|(k, _)| k.column == column) {
        part.cells.insert(k.clone(), c.clone());
    }
    part
}

/// Join a cell into a row: of two writes of one cell, the greater stays.
pub(crate) fn put_cell(row: &mut Row, key: CellKey, cell: Cell) {
    match row.cells.get_mut(&key) {
        Some(old) if *old >= cell => {}
        Some(old) => *old = cell,
        None => {
            row.cells.insert(key, cell);
        }
    }
}

/// Join a collection deletion into a row: the later deletion stays.
pub(crate) fn put_column_deletion(row: &mut Row, column: ColumnId, deletion: DeletionTime) {
    let d = row.column_deletions.entry(column).or_insert(deletion);
    *d = (*d).max(deletion);
}
