//! The compact binary encoding of rows and partitions.
//!
//! Used inside commit-log records and SSTable blocks (each of which carries its own checksum and
//! format version; this encoding has no header of its own). Integers are LEB128 varints, signed
//! ones zigzag-encoded; byte strings are a varint length then the bytes. The layout is written
//! down in `docs/format/rows.md`. Decoding never panics: any malformed input is a
//! [`CodecError`].
//!
//! ```text
//! partition   := flags:u8 [deletion] [row:static] [rt_count:varint rt*] row_count:varint (clustering:bytes row)*
//!                flags: 1 = deletion, 2 = static row, 4 = range tombstones
//! deletion    := marked_for_delete_at:zigzag local_deletion_time:varint
//! rt          := start:bytes end:bytes deletion
//! row         := flags:u8 [liveness] [deletion] [cd_count:varint (column:varint deletion)*]
//!                cell_count:varint cell*
//!                flags: 1 = liveness, 2 = liveness expires, 4 = deletion, 8 = column deletions
//! liveness    := timestamp:zigzag [ttl:varint local_expiry:varint]
//! cell        := column:varint kind:u8 [path:bytes] timestamp:zigzag payload
//!                kind low 2 bits: 0 = live (value:bytes), 1 = expiring (ttl local_expiry value),
//!                2 = tombstone (local_deletion_time); bit 4 (0x04) = has path
//! ```

use std::collections::BTreeMap;

use bytes::{BufMut, Bytes};
use thiserror::Error;

use crate::cell::{Cell, CellKind, DeletionTime, Expiry, LivenessInfo};
use crate::partition::{Partition, RangeTombstone, RangeTombstoneList};
use crate::row::{CellKey, Row};

/// Malformed encoded data.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CodecError {
    #[error("truncated input")]
    Truncated,
    #[error("invalid encoding: {0}")]
    Invalid(&'static str),
}

pub fn put_varint(out: &mut impl BufMut, mut v: u64) {
    while v >= 0x80 {
        out.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    out.put_u8(v as u8);
}

pub fn put_zigzag(out: &mut impl BufMut, v: i64) {
    put_varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

pub fn put_bytes(out: &mut impl BufMut, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.put_slice(b);
}

/// A cursor over encoded bytes. Values it returns share the input buffer (no copies).
#[derive(Debug, Clone)]
pub struct Reader {
    buf: Bytes,
    pos: usize,
}

impl Reader {
    pub fn new(buf: Bytes) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn u8(&mut self) -> Result<u8, CodecError> {
        let b = *self.buf.get(self.pos).ok_or(CodecError::Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    pub fn varint(&mut self) -> Result<u64, CodecError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                if shift == 63 && b > 1 {
                    return Err(CodecError::Invalid("varint overflow"));
                }
                return Ok(v);
            }
        }
        Err(CodecError::Invalid("varint too long"))
    }

    pub fn varint_u32(&mut self) -> Result<u32, CodecError> {
        u32::try_from(self.varint()?).map_err(|_| CodecError::Invalid("value exceeds u32"))
    }

    pub fn zigzag(&mut self) -> Result<i64, CodecError> {
        let v = self.varint()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    pub fn bytes(&mut self) -> Result<Bytes, CodecError> {
        let len = usize::try_from(self.varint()?).map_err(|_| CodecError::Invalid("length"))?;
        self.take(len)
    }

    pub fn take(&mut self, len: usize) -> Result<Bytes, CodecError> {
        if len > self.remaining() {
            return Err(CodecError::Truncated);
        }
        let b = self.buf.slice(self.pos..self.pos + len);
        self.pos += len;
        Ok(b)
    }

    /// A count of items that each take at least one byte: bounded by the bytes left, so a
    /// corrupt count cannot make a decoder allocate without limit.
    pub fn count(&mut self) -> Result<usize, CodecError> {
        let n = self.varint()?;
        if n > self.remaining() as u64 {
            return Err(CodecError::Invalid("count larger than the input"));
        }
        Ok(n as usize)
    }
}

fn put_deletion(out: &mut impl BufMut, d: &DeletionTime) {
    put_zigzag(out, d.marked_for_delete_at);
    put_varint(out, u64::from(d.local_deletion_time));
}

fn get_deletion(r: &mut Reader) -> Result<DeletionTime, CodecError> {
    Ok(DeletionTime {
        marked_for_delete_at: r.zigzag()?,
        local_deletion_time: r.varint_u32()?,
    })
}

/// Encode a row body (without its clustering key).
pub fn encode_row(out: &mut impl BufMut, row: &Row) {
    let mut flags = 0u8;
    if let Some(l) = &row.liveness {
        flags |= 1;
        if l.expiry.is_some() {
            flags |= 2;
        }
    }
    if row.deletion.is_some() {
        flags |= 4;
    }
    if !row.column_deletions.is_empty() {
        flags |= 8;
    }
    out.put_u8(flags);
    if let Some(l) = &row.liveness {
        put_zigzag(out, l.timestamp);
        if let Some(e) = l.expiry {
            put_varint(out, u64::from(e.ttl));
            put_varint(out, u64::from(e.local_expiry));
        }
    }
    if let Some(d) = &row.deletion {
        put_deletion(out, d);
    }
    if !row.column_deletions.is_empty() {
        put_varint(out, row.column_deletions.len() as u64);
        for (col, d) in &row.column_deletions {
            put_varint(out, u64::from(*col));
            put_deletion(out, d);
        }
    }
    put_varint(out, row.cells.len() as u64);
    for (key, cell) in &row.cells {
        put_varint(out, u64::from(key.column));
        let (kind, has_path) = match &cell.kind {
            CellKind::Live { .. } => (0u8, key.path.is_some()),
            CellKind::Expiring { .. } => (1u8, key.path.is_some()),
            CellKind::Tombstone { .. } => (2u8, key.path.is_some()),
        };
        out.put_u8(kind | if has_path { 4 } else { 0 });
        if let Some(p) = &key.path {
            put_bytes(out, p);
        }
        put_zigzag(out, cell.timestamp);
        match &cell.kind {
            CellKind::Live { value } => put_bytes(out, value),
            CellKind::Expiring { value, expiry } => {
                put_varint(out, u64::from(expiry.ttl));
                put_varint(out, u64::from(expiry.local_expiry));
                put_bytes(out, value);
            }
            CellKind::Tombstone {
                local_deletion_time,
            } => put_varint(out, u64::from(*local_deletion_time)),
        }
    }
}

/// Decode a row body written by [`encode_row`].
pub fn decode_row(r: &mut Reader) -> Result<Row, CodecError> {
    let flags = r.u8()?;
    if flags & !0x0f != 0 {
        return Err(CodecError::Invalid("unknown row flags"));
    }
    let mut row = Row::default();
    if flags & 1 != 0 {
        let timestamp = r.zigzag()?;
        let expiry = if flags & 2 != 0 {
            Some(Expiry {
                ttl: r.varint_u32()?,
                local_expiry: r.varint_u32()?,
            })
        } else {
            None
        };
        row.liveness = Some(LivenessInfo { timestamp, expiry });
    }
    if flags & 4 != 0 {
        row.deletion = Some(get_deletion(r)?);
    }
    if flags & 8 != 0 {
        let n = r.count()?;
        for _ in 0..n {
            let col = r.varint_u32()?;
            let d = get_deletion(r)?;
            row.column_deletions.insert(col, d);
        }
    }
    let n = r.count()?;
    let mut cells = crate::cell_map::CellMap::with_capacity(n);
    for _ in 0..n {
        let column = r.varint_u32()?;
        let kind = r.u8()?;
        if kind & !0x07 != 0 {
            return Err(CodecError::Invalid("unknown cell kind"));
        }
        let path = if kind & 4 != 0 {
            Some(r.bytes()?)
        } else {
            None
        };
        let timestamp = r.zigzag()?;
        let kind = match kind & 3 {
            0 => CellKind::Live { value: r.bytes()? },
            1 => {
                let ttl = r.varint_u32()?;
                let local_expiry = r.varint_u32()?;
                CellKind::Expiring {
                    value: r.bytes()?,
                    expiry: Expiry { ttl, local_expiry },
                }
            }
            2 => CellKind::Tombstone {
                local_deletion_time: r.varint_u32()?,
            },
            _ => return Err(CodecError::Invalid("unknown cell kind")),
        };
        cells.insert(CellKey { column, path }, Cell { timestamp, kind });
    }
    row.cells = cells;
    Ok(row)
}

/// Encode a whole partition (without its key).
pub fn encode_partition(out: &mut impl BufMut, p: &Partition) {
    encode_partition_level(out, p);
    put_varint(out, p.rows.len() as u64);
    for (clustering, row) in &p.rows {
        put_bytes(out, clustering);
        encode_row(out, row);
    }
}

/// Encode what a partition holds besides its rows: a flags byte (1: a partition deletion, 2:
/// a static row, 4: range tombstones), then each part the flags name. SSTable partition
/// headers use the same encoding.
pub fn encode_partition_level(out: &mut impl BufMut, p: &Partition) {
    let mut flags = 0u8;
    if p.deletion.is_some() {
        flags |= 1;
    }
    if !p.static_row.is_empty() {
        flags |= 2;
    }
    if !p.range_tombstones.is_empty() {
        flags |= 4;
    }
    out.put_u8(flags);
    if let Some(d) = &p.deletion {
        put_deletion(out, d);
    }
    if !p.static_row.is_empty() {
        encode_row(out, &p.static_row);
    }
    if !p.range_tombstones.is_empty() {
        encode_range_tombstones(out, &p.range_tombstones);
    }
}

/// Encode a range tombstone list: count, then each interval.
pub fn encode_range_tombstones(out: &mut impl BufMut, list: &RangeTombstoneList) {
    put_varint(out, list.len() as u64);
    for rt in list.iter() {
        put_bytes(out, &rt.start);
        put_bytes(out, &rt.end);
        put_deletion(out, &rt.deletion);
    }
}

/// Decode a range tombstone list written by [`encode_range_tombstones`].
pub fn decode_range_tombstones(r: &mut Reader) -> Result<RangeTombstoneList, CodecError> {
    let n = r.count()?;
    let mut items = Vec::with_capacity(n);
    for _ in 0..n {
        let start = r.bytes()?;
        let end = r.bytes()?;
        let deletion = get_deletion(r)?;
        items.push(RangeTombstone {
            start,
            end,
            deletion,
        });
    }
    RangeTombstoneList::from_sorted(items)
        .ok_or(CodecError::Invalid("range tombstones out of order"))
}

/// Decode a partition written by [`encode_partition`]. The result is re-canonicalized, so even
/// hand-crafted input yields a valid partition.
pub fn decode_partition(r: &mut Reader) -> Result<Partition, CodecError> {
    let p = decode_partition_level(r)?;
    let n = r.count()?;
    let mut rows = BTreeMap::new();
    for _ in 0..n {
        let clustering = r.bytes()?;
        let row = decode_row(r)?;
        rows.insert(clustering, row);
    }
    // Re-canonicalize: join into an empty partition.
    let mut out = Partition::new();
    out.merge(Partition { rows, ..p });
    Ok(out)
}

/// Decode what [`encode_partition_level`] wrote: a partition without rows.
pub fn decode_partition_level(r: &mut Reader) -> Result<Partition, CodecError> {
    let flags = r.u8()?;
    if flags & !0x07 != 0 {
        return Err(CodecError::Invalid("unknown partition flags"));
    }
    let mut p = Partition::new();
    if flags & 1 != 0 {
        p.deletion = Some(get_deletion(r)?);
    }
    if flags & 2 != 0 {
        p.static_row = decode_row(r)?;
    }
    if flags & 4 != 0 {
        p.range_tombstones = decode_range_tombstones(r)?;
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(Reader::new(Bytes::from(b)).varint().unwrap(), v);
        }
        for v in [0i64, -1, 1, i64::MIN, i64::MAX, -1_700_000_000_000_000] {
            let mut b = Vec::new();
            put_zigzag(&mut b, v);
            assert_eq!(Reader::new(Bytes::from(b)).zigzag().unwrap(), v);
        }
    }

    #[test]
    fn truncated_input_is_an_error() {
        let mut p = Partition::new();
        let mut row = Row::default();
        row.cells.insert(
            CellKey::simple(3),
            Cell::live(7, Bytes::from_static(b"hello")),
        );
        p.add_row(Bytes::from_static(b"\x02k"), row);
        let mut buf = Vec::new();
        encode_partition(&mut buf, &p);
        for cut in 0..buf.len() {
            let r = decode_partition(&mut Reader::new(Bytes::copy_from_slice(&buf[..cut])));
            assert!(r.is_err(), "cut at {cut} decoded");
        }
        assert_eq!(
            decode_partition(&mut Reader::new(Bytes::from(buf))).unwrap(),
            p
        );
    }
}
