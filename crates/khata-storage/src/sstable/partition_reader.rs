//! Reading one partition restricted to clustering ranges, forwards or reversed, lazily.
//!
//! The header (deletion, static row, range tombstones) is read at once. The rows are read a
//! *block* at a time: with a row index, the blocks intersecting the ranges (block `j`
//! intersects `[s, e)` when `last_j >= s` and `first_j < e`), found by binary search in the
//! row index read in place; without one, the partition's rows form a single block of at most
//! about `row_index_interval_bytes`.
//!
//! Inside a block, rows are walked chunk by chunk straight out of the block cache (no copy of
//! the block; a row that straddles two chunks is stitched alone). Each row's clustering key is
//! compared with the ranges and rows outside them are stepped over by their body length
//! without being decoded; only rows that are returned are decoded, when the consumer asks for
//! them. A forward read stops at the first row past the ranges, so a point read of one row
//! decodes that row and compares the keys before it. A reversed read walks the blocks
//! backwards; in each it notes where the rows in the ranges are (a forward pass over keys
//! only), then decodes them last to first, so "the newest 50 rows" of a huge partition costs
//! the header, a binary search in the row index, the last block's keys and 50 rows.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use khata_types::{DeletionTime, RangeTombstoneList, Row};

use super::chunk::{ChunkMemo, DataFile};
use super::index::IndexEntry;
use super::layout::{RowFrame, RowIndex, decode_header, decode_row_body, parse_row_frame};
use super::reader::SsTable;
use super::slice::SliceReader;
use crate::error::{Result, StorageError};

/// One partition of an SSTable, restricted to clustering ranges.
pub struct PartitionReader {
    pub deletion: Option<DeletionTime>,
    pub static_row: Row,
    /// The range tombstones intersecting the ranges, clipped to them.
    pub range_tombstones: RangeTombstoneList,
    /// Rows within the ranges, ascending (descending when reversed), read lazily. After an
    /// error the iterator ends.
    pub rows: Box<dyn Iterator<Item = Result<(Bytes, Row)>> + Send>,
}

impl fmt::Debug for PartitionReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PartitionReader")
            .field("deletion", &self.deletion)
            .field("static_row", &self.static_row)
            .field("range_tombstones", &self.range_tombstones)
            .finish_non_exhaustive()
    }
}

/// Check that `ranges` are sorted and disjoint; drop empty ones.
pub fn validate_ranges(ranges: &[(Bytes, Bytes)]) -> Result<Arc<[(Bytes, Bytes)]>> {
    let kept: Vec<(Bytes, Bytes)> = ranges.iter().filter(|(s, e)| s < e).cloned().collect();
    if kept.windows(2).any(|w| w[0].1 > w[1].0) {
        return Err(StorageError::InvalidArgument(
            "clustering ranges must be sorted and disjoint".into(),
        ));
    }
    Ok(kept.into())
}

impl PartitionReader {
    pub(super) fn open(
        table: Arc<SsTable>,
        entry: IndexEntry,
        ranges: Arc<[(Bytes, Bytes)]>,
        reversed: bool,
    ) -> Result<PartitionReader> {
        let data = &table.data;
        let mut memo: ChunkMemo = None;
        let bytes = data.read(entry.position, entry.header_length, &mut memo, true)?;
        let (header, _) =
            decode_header(bytes, entry.position, true).map_err(|e| e.in_file(&data.path))?;
        if header.key != entry.key.key
            || header.rows_length != entry.rows_length
            || header.row_index_length != entry.row_index_length
        {
            return Err(StorageError::corrupt(
                &data.path,
                entry.position,
                "partition header disagrees with its index entry",
            ));
        }
        let range_tombstones = if header.range_tombstones.is_empty() {
            header.range_tombstones
        } else {
            let mut clipped = Vec::new();
            for (start, end) in ranges.iter() {
                clipped.extend(header.range_tombstones.slice(start, end));
            }
            RangeTombstoneList::from_sorted(clipped).ok_or_else(|| {
                StorageError::corrupt(&data.path, entry.position, "range tombstones out of order")
            })?
        };

        let row_index = if entry.row_index_length == 0 || ranges.is_empty() {
            None
        } else {
            let position = entry.row_index_position();
            let bytes = data.read(position, entry.row_index_length, &mut memo, true)?;
            Some(
                RowIndex::open(bytes, position, entry.rows_length)
                    .map_err(|e| e.in_file(&data.path))?,
            )
        };
        let plan = BlockPlan {
            single_left: row_index.is_none() && !ranges.is_empty() && entry.rows_length > 0,
            row_index,
            range: 0,
            next: None,
            last_emitted: None,
        };
        let rows = BlockRows {
            rows_position: entry.rows_position(),
            rows_length: entry.rows_length,
            plan,
            ranges,
            reversed,
            walk: None,
            pending: Vec::new(),
            bufs: Vec::new(),
            last_returned: None,
            memo,
            failed: false,
            table,
        };
        Ok(PartitionReader {
            deletion: header.deletion,
            static_row: header.static_row,
            range_tombstones,
            rows: Box::new(rows),
        })
    }
}

/// Which blocks are left to read, found lazily from the row index.
struct BlockPlan {
    row_index: Option<RowIndex>,
    /// Without a row index: whether the single block is still to be read.
    single_left: bool,
    /// Ranges considered so far (counted from the first, or from the last when reversed).
    range: usize,
    /// The next block to consider for the current range.
    next: Option<usize>,
    /// The last block handed out: blocks come out in order, each once, even when several
    /// ranges intersect it.
    last_emitted: Option<usize>,
}

impl BlockPlan {
    /// The next block as `(offset, length)` relative to the rows.
    fn next_block(
        &mut self,
        ranges: &[(Bytes, Bytes)],
        reversed: bool,
        rows_length: u64,
        data: &DataFile,
    ) -> Result<Option<(u64, u64)>> {
        let Some(index) = &self.row_index else {
            let single = std::mem::take(&mut self.single_left);
            return Ok(single.then_some((0, rows_length)));
        };
        let corrupt = |e: super::format::FormatError| e.in_file(&data.path);
        loop {
            let Some(range_number) = (self.range < ranges.len()).then_some(self.range) else {
                return Ok(None);
            };
            let (start, end) = if reversed {
                &ranges[ranges.len() - 1 - range_number]
            } else {
                &ranges[range_number]
            };
            let candidate = match self.next {
                Some(i) => Some(i),
                None if reversed => {
                    let hi = index
                        .partition_point(|b| b.first < &end[..])
                        .map_err(corrupt)?;
                    let hi = self.last_emitted.map_or(hi, |l| hi.min(l));
                    hi.checked_sub(1)
                }
                None => {
                    let lo = index
                        .partition_point(|b| b.last < &start[..])
                        .map_err(corrupt)?;
                    Some(self.last_emitted.map_or(lo, |l| lo.max(l + 1)))
                }
            };
            let intersecting = match candidate {
                Some(i) if i < index.len() => {
                    let b = index.block(i).map_err(corrupt)?;
                    let hit = if reversed {
                        b.last >= &start[..]
                    } else {
                        b.first < &end[..]
                    };
                    hit.then_some((i, b.offset, b.length))
                }
                _ => None,
            };
            match intersecting {
                Some((i, offset, length)) => {
                    self.next = if reversed {
                        i.checked_sub(1)
                    } else {
                        Some(i + 1)
                    };
                    if reversed && self.next.is_none() {
                        // Nothing before block 0: this range ends with it.
                        self.range += 1;
                    }
                    self.last_emitted = Some(i);
                    return Ok(Some((offset, length)));
                }
                None => {
                    self.range += 1;
                    self.next = None;
                }
            }
        }
    }
}

/// Where a row stands against the sorted ranges.
enum Place {
    Before,
    Inside,
    /// Past every range: no later row of the walk can match.
    Past,
}

/// Where `clustering` stands against the sorted `ranges`, given that earlier rows of the walk
/// are past the ranges before `*range` (which this advances).
fn place(ranges: &[(Bytes, Bytes)], range: &mut usize, clustering: &[u8]) -> Place {
    while ranges
        .get(*range)
        .is_some_and(|(_, end)| clustering >= &end[..])
    {
        *range += 1;
    }
    match ranges.get(*range) {
        None => Place::Past,
        Some((start, _)) if clustering < &start[..] => Place::Before,
        Some(_) => Place::Inside,
    }
}

/// A forward walk over the rows of one block, chunk by chunk.
struct Walk {
    /// Logical end of the block.
    end: u64,
    /// The bytes being walked: a slice of a cached chunk, or one stitched row.
    seg: Bytes,
    /// Logical offset of `seg[0]`.
    seg_position: u64,
    /// Bumped whenever `seg` is replaced.
    seg_number: u64,
    off: usize,
    /// Logical offset of the bytes after `seg`.
    next_position: u64,
    /// The first range the walk has not passed.
    range: usize,
}

impl Walk {
    fn new(start: u64, length: u64) -> Walk {
        Walk {
            end: start.saturating_add(length),
            seg: Bytes::new(),
            seg_position: start,
            seg_number: 0,
            off: 0,
            next_position: start,
            range: 0,
        }
    }

    /// The next row of the block within the ranges, as a frame in `self.seg`.
    fn next_in_ranges(
        &mut self,
        ranges: &[(Bytes, Bytes)],
        data: &DataFile,
        memo: &mut ChunkMemo,
    ) -> Result<Option<RowFrame>> {
        while let Some(frame) = self.next_frame(data, memo)? {
            match place(ranges, &mut self.range, &self.seg[frame.clustering.clone()]) {
                Place::Before => continue,
                Place::Inside => return Ok(Some(frame)),
                Place::Past => {
                    self.off = self.seg.len();
                    self.next_position = self.end;
                    return Ok(None);
                }
            }
        }
        Ok(None)
    }

    /// The next row of the block, whatever its key.
    fn next_frame(&mut self, data: &DataFile, memo: &mut ChunkMemo) -> Result<Option<RowFrame>> {
        if self.off >= self.seg.len() {
            if self.next_position >= self.end {
                return Ok(None);
            }
            self.seg = data.read_in_chunk(self.next_position, self.end, memo, true)?;
            self.seg_position = self.next_position;
            self.seg_number += 1;
            self.next_position += self.seg.len() as u64;
            self.off = 0;
        }
        match parse_row_frame(&self.seg, self.off) {
            Ok(Some(frame)) => {
                self.off = frame.end();
                Ok(Some(frame))
            }
            Ok(None) => self.stitch(data, memo).map(Some),
            Err(e) => Err(StorageError::corrupt(
                &data.path,
                self.seg_position + self.off as u64,
                e.to_string(),
            )),
        }
    }

    /// Copy the row that starts at `off` and runs into the next chunks into a buffer of its
    /// own, which becomes `seg`.
    fn stitch(&mut self, data: &DataFile, memo: &mut ChunkMemo) -> Result<RowFrame> {
        let row_position = self.seg_position + self.off as u64;
        let mut row = self.seg[self.off..].to_vec();
        let mut piece = Bytes::new();
        let mut piece_position = self.next_position;
        let mut piece_off = 0;
        let frame = loop {
            match parse_row_frame(&row, 0) {
                Ok(Some(frame)) => break frame,
                Ok(None) => {}
                Err(e) => {
                    return Err(StorageError::corrupt(
                        &data.path,
                        row_position,
                        e.to_string(),
                    ));
                }
            }
            if piece_off == piece.len() {
                let at = piece_position + piece.len() as u64;
                if at >= self.end {
                    return Err(StorageError::corrupt(
                        &data.path,
                        row_position,
                        "row runs past the end of its block",
                    ));
                }
                piece = data.read_in_chunk(at, self.end, memo, true)?;
                piece_position = at;
                piece_off = 0;
            }
            let want = frame_length_hint(&row).unwrap_or(row.len() + 16);
            let take = want
                .saturating_sub(row.len())
                .max(1)
                .min(piece.len() - piece_off);
            row.extend_from_slice(&piece[piece_off..piece_off + take]);
            piece_off += take;
        };
        // The last piece may have gone past the row (when its length was not yet known).
        let excess = row.len() - frame.end();
        row.truncate(frame.end());
        self.seg = Bytes::from(row);
        self.seg_position = row_position;
        self.seg_number += 1;
        self.off = self.seg.len();
        self.next_position = piece_position + (piece_off - excess) as u64;
        Ok(frame)
    }
}

/// The full length of the row at the start of `buf`, once its framing is there.
fn frame_length_hint(buf: &[u8]) -> Option<usize> {
    let mut r = SliceReader::new(buf);
    let clustering = usize::try_from(r.varint().ok()?).ok()?;
    r.take(clustering).ok()?;
    let body = usize::try_from(r.varint().ok()?).ok()?;
    r.position().checked_add(body)
}

/// A row noted by a reversed walk: which buffer, and where in it.
struct Pending {
    buf: usize,
    position: u64,
    frame: RowFrame,
}

/// The lazy row iterator.
struct BlockRows {
    table: Arc<SsTable>,
    rows_position: u64,
    rows_length: u64,
    plan: BlockPlan,
    ranges: Arc<[(Bytes, Bytes)]>,
    reversed: bool,
    /// Forward reads: the block being walked.
    walk: Option<Walk>,
    /// Reversed reads: the current block's rows in the ranges, ascending (taken from the back)
    /// and the buffers they are in.
    pending: Vec<Pending>,
    bufs: Vec<Bytes>,
    last_returned: Option<Bytes>,
    memo: ChunkMemo,
    failed: bool,
}

impl BlockRows {
    fn decode(&mut self, buf: &Bytes, seg_position: u64, frame: &RowFrame) -> Result<(Bytes, Row)> {
        let data = &self.table.data;
        let clustering = buf.slice(frame.clustering.clone());
        let in_order = self.last_returned.as_ref().is_none_or(|last| {
            if self.reversed {
                *last > clustering
            } else {
                *last < clustering
            }
        });
        if !in_order {
            return Err(StorageError::corrupt(
                &data.path,
                seg_position + frame.clustering.start as u64,
                "rows out of clustering order",
            ));
        }
        let body_position = seg_position + frame.body.start as u64;
        let row = decode_row_body(buf.slice(frame.body.clone()), body_position)
            .map_err(|e| e.in_file(&data.path))?;
        self.last_returned = Some(clustering.clone());
        Ok((clustering, row))
    }

    /// Note where the rows of block `(offset, length)` within the ranges are.
    fn collect_block(&mut self, offset: u64, length: u64) -> Result<()> {
        self.pending.clear();
        self.bufs.clear();
        let mut walk = Walk::new(self.rows_position.saturating_add(offset), length);
        let mut buf_number = None;
        let data = &self.table.data;
        while let Some(frame) = walk.next_in_ranges(&self.ranges, data, &mut self.memo)? {
            if buf_number != Some(walk.seg_number) {
                buf_number = Some(walk.seg_number);
                self.bufs.push(walk.seg.clone());
            }
            self.pending.push(Pending {
                buf: self.bufs.len() - 1,
                position: walk.seg_position,
                frame,
            });
        }
        Ok(())
    }

    fn next_row(&mut self) -> Result<Option<(Bytes, Row)>> {
        loop {
            if self.reversed {
                if let Some(p) = self.pending.pop() {
                    let buf = self.bufs[p.buf].clone();
                    return self.decode(&buf, p.position, &p.frame).map(Some);
                }
            } else if let Some(walk) = &mut self.walk {
                let data = &self.table.data;
                match walk.next_in_ranges(&self.ranges, data, &mut self.memo)? {
                    Some(frame) => {
                        let (buf, position) = (walk.seg.clone(), walk.seg_position);
                        return self.decode(&buf, position, &frame).map(Some);
                    }
                    None => self.walk = None,
                }
            }
            let block = self.plan.next_block(
                &self.ranges,
                self.reversed,
                self.rows_length,
                &self.table.data,
            )?;
            let Some((offset, length)) = block else {
                return Ok(None);
            };
            if self.reversed {
                self.collect_block(offset, length)?;
            } else {
                self.walk = Some(Walk::new(self.rows_position.saturating_add(offset), length));
            }
        }
    }
}

impl Iterator for BlockRows {
    type Item = Result<(Bytes, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let result = self.next_row().transpose();
        if matches!(result, Some(Err(_)) | None) {
            self.failed = true;
        }
        result
    }
}
