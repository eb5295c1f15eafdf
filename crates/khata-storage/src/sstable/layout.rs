//! How one partition is laid out in the Data stream: header, rows, row index.
//!
//! ```text
//! partition := header rows [row_index]
//! header    := key:bytes flags:u8 [deletion] [static_row:row] [range_tombstones]
//!              rows_length:varint row_index_length:varint
//!              flags: 1 = partition deletion, 2 = static row, 4 = range tombstones
//! rows      := (clustering:bytes row)*            -- rows_length bytes, clustering ascending
//! row_index := count:varint (first:bytes last:bytes offset:varint length:varint)*
//! ```
//!
//! `row`, `deletion` and `range_tombstones` are the encodings of `khata_types::codec`. The row
//! index cuts the rows into blocks of about `row_index_interval_bytes` at row boundaries;
//! block offsets are relative to the start of `rows` and the blocks tile it exactly. It is
//! written only when there are at least two blocks, so small partitions carry none.
//!
//! Decoding checks every structural invariant (ascending keys, blocks that tile the rows,
//! lengths inside the buffer) and reports a [`FormatError`] at the logical offset it failed.

use bytes::{BufMut, Bytes};
use khata_types::codec::{
    CodecError, Reader, decode_range_tombstones, decode_row, encode_range_tombstones, encode_row,
    put_bytes, put_varint, put_zigzag,
};
use khata_types::{DeletionTime, Partition, RangeTombstoneList, Row};

use super::format::FormatError;

/// One block of rows in the row index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowIndexBlock {
    /// Clustering of the block's first and last rows.
    pub first: Bytes,
    pub last: Bytes,
    /// Offset of the block relative to the start of the rows, and its length.
    pub offset: u64,
    pub length: u64,
}

/// A partition serialized for the Data stream.
#[derive(Debug)]
pub struct EncodedPartition {
    pub bytes: Vec<u8>,
    pub header_length: u64,
    pub rows_length: u64,
    pub row_index_length: u64,
}

/// The decoded header of a partition.
#[derive(Debug)]
pub struct Header {
    pub key: Bytes,
    pub deletion: Option<DeletionTime>,
    pub static_row: Row,
    pub range_tombstones: RangeTombstoneList,
    pub rows_length: u64,
    pub row_index_length: u64,
}

fn put_deletion(out: &mut Vec<u8>, d: &DeletionTime) {
    put_zigzag(out, d.marked_for_delete_at);
    put_varint(out, u64::from(d.local_deletion_time));
}

fn get_deletion(r: &mut Reader) -> Result<DeletionTime, CodecError> {
    Ok(DeletionTime::new(r.zigzag()?, r.varint_u32()?))
}

/// Serialize `partition` under `key`, cutting row-index blocks every `interval_bytes`.
pub fn encode_partition(
    key: &[u8],
    partition: &Partition,
    interval_bytes: u64,
) -> EncodedPartition {
    let mut rows = Vec::new();
    let mut blocks: Vec<RowIndexBlock> = Vec::new();
    let mut block_start = 0u64;
    let mut block_first: Option<&Bytes> = None;
    let mut previous: Option<&Bytes> = None;
    for (clustering, row) in &partition.rows {
        block_first.get_or_insert(clustering);
        put_bytes(&mut rows, clustering);
        encode_row(&mut rows, row);
        previous = Some(clustering);
        let position = rows.len() as u64;
        if position - block_start >= interval_bytes
            && let Some(first) = block_first.take()
        {
            let last = clustering.clone();
            blocks.push(RowIndexBlock {
                first: first.clone(),
                last,
                offset: block_start,
                length: position - block_start,
            });
            block_start = position;
        }
    }
    if let (Some(first), Some(last)) = (block_first, previous) {
        let length = rows.len() as u64 - block_start;
        blocks.push(RowIndexBlock {
            first: first.clone(),
            last: last.clone(),
            offset: block_start,
            length,
        });
    }
    let mut row_index = Vec::new();
    if blocks.len() >= 2 {
        put_varint(&mut row_index, blocks.len() as u64);
        for b in &blocks {
            put_bytes(&mut row_index, &b.first);
            put_bytes(&mut row_index, &b.last);
            put_varint(&mut row_index, b.offset);
            put_varint(&mut row_index, b.length);
        }
    }

    let mut out = Vec::with_capacity(rows.len() + row_index.len() + key.len() + 64);
    put_bytes(&mut out, key);
    let mut flags = 0u8;
    if partition.deletion.is_some() {
        flags |= 1;
    }
    if !partition.static_row.is_empty() {
        flags |= 2;
    }
    if !partition.range_tombstones.is_empty() {
        flags |= 4;
    }
    out.put_u8(flags);
    if let Some(d) = &partition.deletion {
        put_deletion(&mut out, d);
    }
    if !partition.static_row.is_empty() {
        encode_row(&mut out, &partition.static_row);
    }
    if !partition.range_tombstones.is_empty() {
        encode_range_tombstones(&mut out, &partition.range_tombstones);
    }
    put_varint(&mut out, rows.len() as u64);
    put_varint(&mut out, row_index.len() as u64);
    let header_length = out.len() as u64;
    out.extend_from_slice(&rows);
    out.extend_from_slice(&row_index);
    EncodedPartition {
        bytes: out,
        header_length,
        rows_length: rows.len() as u64,
        row_index_length: row_index.len() as u64,
    }
}

/// Decode a header that starts at logical offset `base`. The header must fill `bytes` exactly
/// when `exact`; otherwise trailing bytes (the rows) are allowed and the consumed length is
/// returned alongside.
pub fn decode_header(bytes: Bytes, base: u64, exact: bool) -> Result<(Header, u64), FormatError> {
    let mut r = Reader::new(bytes);
    let parsed = (|| -> Result<Header, CodecError> {
        let key = r.bytes()?;
        let flags = r.u8()?;
        if flags & !0x07 != 0 {
            return Err(CodecError::Invalid("unknown partition flags"));
        }
        let deletion = if flags & 1 != 0 {
            Some(get_deletion(&mut r)?)
        } else {
            None
        };
        let static_row = if flags & 2 != 0 {
            decode_row(&mut r)?
        } else {
            Row::default()
        };
        let range_tombstones = if flags & 4 != 0 {
            decode_range_tombstones(&mut r)?
        } else {
            RangeTombstoneList::new()
        };
        let rows_length = r.varint()?;
        let row_index_length = r.varint()?;
        if exact && !r.is_empty() {
            return Err(CodecError::Invalid(
                "partition header longer than its index entry says",
            ));
        }
        Ok(Header {
            key,
            deletion,
            static_row,
            range_tombstones,
            rows_length,
            row_index_length,
        })
    })();
    match parsed {
        Ok(header) => Ok((header, r.position() as u64)),
        Err(e) => Err(FormatError::codec(base, &r, e)),
    }
}

/// Decode the row index of a partition whose rows are `rows_length` bytes long.
pub fn decode_row_index(
    bytes: Bytes,
    base: u64,
    rows_length: u64,
) -> Result<Vec<RowIndexBlock>, FormatError> {
    let mut r = Reader::new(bytes);
    let parsed = (|| -> Result<Vec<RowIndexBlock>, CodecError> {
        let count = r.count()?;
        let mut blocks: Vec<RowIndexBlock> = Vec::with_capacity(count);
        let mut expected_offset = 0u64;
        for _ in 0..count {
            let first = r.bytes()?;
            let last = r.bytes()?;
            let offset = r.varint()?;
            let length = r.varint()?;
            let ordered = first <= last && blocks.last().is_none_or(|prev| prev.last < first);
            if !ordered || offset != expected_offset || length == 0 {
                return Err(CodecError::Invalid("row index blocks out of order"));
            }
            expected_offset = offset
                .checked_add(length)
                .ok_or(CodecError::Invalid("row index length"))?;
            blocks.push(RowIndexBlock {
                first,
                last,
                offset,
                length,
            });
        }
        if expected_offset != rows_length || !r.is_empty() {
            return Err(CodecError::Invalid("row index does not cover the rows"));
        }
        Ok(blocks)
    })();
    parsed.map_err(|e| FormatError::codec(base, &r, e))
}

/// Decode a run of rows starting at logical offset `base`; clustering keys must ascend.
pub fn decode_rows(bytes: Bytes, base: u64) -> Result<Vec<(Bytes, Row)>, FormatError> {
    let mut r = Reader::new(bytes);
    let mut rows: Vec<(Bytes, Row)> = Vec::new();
    while !r.is_empty() {
        let start = r.position() as u64;
        let clustering = r.bytes().map_err(|e| FormatError::codec(base, &r, e))?;
        if rows.last().is_some_and(|(prev, _)| *prev >= clustering) {
            return Err(FormatError::new(
                base + start,
                "rows out of clustering order",
            ));
        }
        let row = decode_row(&mut r).map_err(|e| FormatError::codec(base, &r, e))?;
        rows.push((clustering, row));
    }
    Ok(rows)
}
