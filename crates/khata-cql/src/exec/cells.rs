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

use bytes::Bytes;
use khata_types::Timestamp;
use khata_types::cell::{Cell, DeletionTime, Expiry, LivenessInfo};
use khata_types::row::{CellKey, Row};
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
            row.column_deletions
                .insert(c.id, DeletionTime::new(wt.timestamp, wt.now));
        }
        Bound::Null => {
            row.cells.insert(CellKey::simple(c.id), wt.tombstone());
        }
        Bound::Value(bytes) if c.ty.is_multi_cell() => {
            row.column_deletions
                .insert(c.id, DeletionTime::new(wt.timestamp - 1, wt.now));
            add_elements(row, c, &bytes, wt, false)?;
        }
        Bound::Value(bytes) => {
            if c.ty == CqlType::Counter {
                return Err(ExecError::invalid(format!(
                    "Cannot set the value of counter column {} (counters can only be incremented/decremented, not set)",
                    c.name
                )));
            }
            row.cells.insert(CellKey::simple(c.id), wt.cell(bytes));
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
        match value {
            Some(v) => row.cells.insert(CellKey::element(c.id, path), wt.cell(v)),
            None => row
                .cells
                .insert(CellKey::element(c.id, path), wt.tombstone()),
        };
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
        row.cells.insert(CellKey::element(c.id, k), wt.tombstone());
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
#[derive(Clone, Debug)]
pub(crate) enum Deferred {
    /// `c = c + n` / `c = c - n` on a counter.
    CounterAdd { column: ColumnDef, delta: i64 },
    /// `l[i] = v` (`None`: `DELETE l[i]` or `l[i] = null`).
    ListSet {
        column: ColumnDef,
        index: i32,
        value: Option<Bytes>,
    },
    /// `l = l - [v, ...]`: every element equal to one of these.
    ListRemove {
        column: ColumnDef,
        values: Vec<Bytes>,
    },
}

impl Deferred {
    pub fn column(&self) -> &ColumnDef {
        match self {
            Deferred::CounterAdd { column, .. }
            | Deferred::ListSet { column, .. }
            | Deferred::ListRemove { column, .. } => column,
        }
    }

    /// Apply to `out` (the update being written), given `current` (the row as stored).
    pub fn apply(
        &self,
        current: &Row,
        out: &mut Row,
        wt: &WriteTime,
        now: u32,
    ) -> Result<(), String> {
        match self {
            Deferred::CounterAdd { column, delta } => {
                let cell = current.cells.get(&CellKey::simple(column.id));
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
                out.cells.insert(
                    CellKey::simple(column.id),
                    Cell::live(timestamp, Bytes::copy_from_slice(&total.to_be_bytes())),
                );
            }
            Deferred::ListSet {
                column,
                index,
                value,
            } => {
                let paths = live_paths(current, column, now);
                let Some(path) = usize::try_from(*index).ok().and_then(|i| paths.get(i)) else {
                    return Err(format!(
                        "List index {index} out of bound, list has size {}",
                        paths.len()
                    ));
                };
                let cell = match value {
                    Some(v) => wt.cell(v.clone()),
                    None => wt.tombstone(),
                };
                out.cells
                    .insert(CellKey::element(column.id, path.clone()), cell);
            }
            Deferred::ListRemove { column, values } => {
                for (k, cell) in current.cells.iter() {
                    if k.column == column.id
                        && let (Some(path), Some(v)) = (&k.path, cell.live_value(now))
                        && values.contains(v)
                    {
                        out.cells
                            .insert(CellKey::element(column.id, path.clone()), wt.tombstone());
                    }
                }
            }
        }
        Ok(())
    }
}

/// The paths of a list's live elements, in list order.
fn live_paths(row: &Row, column: &ColumnDef, now: u32) -> Vec<Bytes> {
    row.cells
        .iter()
        .filter(|(k, c)| k.column == column.id && k.path.is_some() && c.live_value(now).is_some())
        .filter_map(|(k, _)| k.path.clone())
        .collect()
}
