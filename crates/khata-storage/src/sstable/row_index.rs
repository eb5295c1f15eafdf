//! Reading a partition's row index in place, from its index entry or lazily from Data.
//!
//! The row index (see [`super::layout`]) is `entry{count} entry_offset:u32{count} count:u32`
//! with `entry := first:bytes last:bytes offset:varint length:varint`. A reader only ever
//! binary-searches it, so it never decodes it whole: it reads the count, then for each probe
//! one `u32` of the offset table and the entry it points at.
//!
//! Where the bytes come from:
//! - a copy in the partition's index entry (format version 2, small row indexes): no Data read;
//! - Data, when the row index lies in one chunk: one slice of that chunk;
//! - Data, chunk by chunk, when it spans several (a partition of thousands of blocks has a row
//!   index of hundreds of KiB): each probe reads only the bytes it decodes, so "the newest
//!   rows" of a huge partition read the row index's last chunk, not the whole index.
//!
//! Every block a probe decodes is checked against the bounds a well-formed index gives it
//! (inside the rows; the first starts them, the last ends them), so a damaged index is an
//! error, never a panic or a read outside the partition.

use bytes::Bytes;
use khata_types::codec::CodecError;

use super::chunk::{ChunkMemo, DataFile};
use super::slice::{SliceReader, u32_at};
use crate::error::{Result, StorageError};

/// One block of a row index: its first and last clustering keys (in `buf`), and where it is
/// relative to the start of the rows.
#[derive(Debug)]
pub struct IndexedBlock {
    buf: Bytes,
    first: std::ops::Range<usize>,
    last: std::ops::Range<usize>,
    pub offset: u64,
    pub length: u64,
}

impl IndexedBlock {
    pub fn first(&self) -> &[u8] {
        &self.buf[self.first.clone()]
    }

    pub fn last(&self) -> &[u8] {
        &self.buf[self.last.clone()]
    }
}

/// A row index, read in place.
#[derive(Debug)]
pub struct RowIndexReader {
    /// The whole row index, when it is in memory (an index entry's copy, or one chunk's slice).
    whole: Option<Bytes>,
    /// Logical offset of the row index in Data, for lazy reads and errors.
    position: u64,
    count: usize,
    /// Where the table of entry offsets begins, relative to the row index.
    table: u64,
    rows_length: u64,
    /// The last chunk a lazy read used: the row index's own, so that searching it and reading
    /// the blocks it finds do not evict each other's chunk.
    memo: ChunkMemo,
}

impl RowIndexReader {
    /// The row index of `length` bytes at logical offset `position` of rows `rows_length`
    /// bytes long; `copy` is its copy from the index entry, if any.
    pub fn open(
        data: &DataFile,
        memo: &mut ChunkMemo,
        copy: Option<Bytes>,
        position: u64,
        length: u64,
        rows_length: u64,
    ) -> Result<RowIndexReader> {
        let corrupt = |detail: &str| StorageError::corrupt(&data.path, position, detail);
        if length < 4 {
            return Err(corrupt("row index too short"));
        }
        let whole = match copy {
            Some(bytes) if bytes.len() as u64 == length => Some(bytes),
            Some(_) => return Err(corrupt("row index copy of the wrong length")),
            None => data.read_in_one_chunk(position, length, memo, true)?,
        };
        let mut reader = RowIndexReader {
            whole,
            position,
            count: 0,
            table: 0,
            rows_length,
            memo: None,
        };
        let tail = reader.fetch(data, length - 4, 4)?;
        let count = u32_at(&tail, 0).map_or(0, u64::from);
        let table = count
            .checked_mul(4)
            .and_then(|t| length.checked_sub(4 + t))
            .filter(|_| count >= 2)
            .ok_or_else(|| corrupt("row index count does not fit"))?;
        reader.count = count as usize;
        reader.table = table;
        Ok(reader)
    }

    pub fn len(&self) -> usize {
        self.count
    }

    /// Bytes `[from, from + length)` of the row index (inside it: callers check).
    fn fetch(&mut self, data: &DataFile, from: u64, length: u64) -> Result<Bytes> {
        match &self.whole {
            Some(bytes) => {
                let end = from.saturating_add(length);
                if end > bytes.len() as u64 {
                    return Err(StorageError::corrupt(
                        &data.path,
                        self.position,
                        "row index read out of bounds",
                    ));
                }
                Ok(bytes.slice(from as usize..end as usize))
            }
            None => data.read(
                self.position.saturating_add(from),
                length,
                &mut self.memo,
                true,
            ),
        }
    }

    /// Where entry `i` starts, relative to the row index, checked to lie before the table.
    fn entry_start(&mut self, data: &DataFile, i: usize) -> Result<u64> {
        let at = self.table + 4 * i as u64;
        let start = match &self.whole {
            // Read in place: a probe takes no reference on the bytes.
            Some(bytes) => usize::try_from(at).ok().and_then(|at| u32_at(bytes, at)),
            None => u32_at(&self.fetch(data, at, 4)?, 0),
        };
        start
            .map(u64::from)
            .filter(|&s| s < self.table)
            .ok_or_else(|| {
                StorageError::corrupt(&data.path, self.position, "row index entry out of range")
            })
    }

    /// Block `i` (< `len()`), checked against the bounds a well-formed index gives it.
    pub fn block(&mut self, data: &DataFile, i: usize) -> Result<IndexedBlock> {
        let start = self.entry_start(data, i)?;
        let end = if i + 1 < self.count {
            self.entry_start(data, i + 1)?
        } else {
            self.table
        };
        let at = self.position + start;
        let corrupt = |detail: String| StorageError::corrupt(&data.path, at, detail);
        if end <= start {
            return Err(corrupt("row index entries out of order".into()));
        }
        let buf = self.fetch(data, start, end - start)?;
        let mut r = SliceReader::at(&buf, 0);
        let parsed = (|| -> std::result::Result<_, CodecError> {
            let first_length = usize::try_from(r.varint()?).map_err(|_| CodecError::Truncated)?;
            let first_at = r.position();
            r.take(first_length)?;
            let last_length = usize::try_from(r.varint()?).map_err(|_| CodecError::Truncated)?;
            let last_at = r.position();
            r.take(last_length)?;
            Ok((
                first_at..first_at + first_length,
                last_at..last_at + last_length,
                r.varint()?,
                r.varint()?,
            ))
        })();
        let (first, last, offset, length) = parsed.map_err(|e| corrupt(e.to_string()))?;
        let block = IndexedBlock {
            buf,
            first,
            last,
            offset,
            length,
        };
        let block_end = offset.checked_add(length);
        let tiled =
            (i > 0 || offset == 0) && (i + 1 < self.count || block_end == Some(self.rows_length));
        if block.first() > block.last()
            || length == 0
            || block_end.is_none_or(|e| e > self.rows_length)
            || !tiled
        {
            return Err(corrupt("row index block out of bounds".into()));
        }
        Ok(block)
    }

    /// The number of leading blocks for which `before` holds (which must hold for a prefix).
    /// With `from_end` the last block is tried first, so a bound past every block (a reversed
    /// read from the end of the partition) costs one probe, not a search; otherwise the first
    /// block is tried first, for a bound before every block.
    pub fn partition_point(
        &mut self,
        data: &DataFile,
        from_end: bool,
        mut before: impl FnMut(&IndexedBlock) -> bool,
    ) -> Result<usize> {
        let (mut lo, mut hi) = (0, self.count);
        if from_end {
            if before(&self.block(data, self.count - 1)?) {
                return Ok(self.count);
            }
            hi = self.count - 1;
        } else {
            if !before(&self.block(data, 0)?) {
                return Ok(0);
            }
            lo = 1;
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(&self.block(data, mid)?) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }
}
