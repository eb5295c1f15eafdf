//! Reading one partition restricted to clustering ranges, forwards or reversed, lazily.
//!
//! The header (deletion, static row, range tombstones) is read at once, unless the index entry
//! says it holds only the key (format version 2). The rows are read a *block* at a time: with
//! a row index, the blocks intersecting the ranges (block `j` intersects `[s, e)` when
//! `last_j >= s` and `first_j < e`), found by binary search in the row index read in place
//! (from the index entry's copy when it has one, see [`super::row_index`]); without one, the
//! partition's rows form a single block of at most about `row_index_interval_bytes`. A block
//! that lies in one chunk (every block a version 2 writer makes, unless it holds a row longer
//! than a chunk) is taken as one slice of that chunk, and its rows are sliced from it.
//!
//! A block starts with a table of where each of its rows starts. Within a block a read
//! binary-searches the table for the first row of a range (comparing clustering keys in place)
//! and then steps row by row, forwards or backwards, each row's extent given by the table, so
//! it touches only the rows it compares or returns: in a version 2 SSTable a point read of one
//! row costs a binary search in the index page, one in the entry's copy of the row index (if
//! the partition has several blocks), and one in the block, which is one chunk of about 4 KiB;
//! "the newest 50 rows" of a huge partition cost one probe at the end of the row index, the
//! last blocks and 50 rows. Rows are sliced straight out of the cached chunks (a row that
//! straddles two chunks is copied alone) and decoded only when the consumer asks for them.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use khata_types::{DeletionTime, RangeTombstoneList, Row};

use super::chunk::{ChunkMemo, DataFile};
use super::index::IndexEntry;
use super::layout::{RowFrame, decode_header, decode_row_body, parse_row_frame};
use super::reader::SsTable;
use super::row_index::RowIndexReader;
use super::slice::{WARM_MAX_LOADS, u32_at, warm};
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

/// Check that `ranges` are sorted and disjoint; drop empty ones. Ranges that need nothing
/// dropped (a read's usual single range) are borrowed, not copied: copying a `Bytes` made
/// from a `Vec` allocates, so a point read would pay two allocations for its bounds.
pub fn check_ranges(ranges: &[(Bytes, Bytes)]) -> Result<Cow<'_, [(Bytes, Bytes)]>> {
    let kept: Cow<'_, [(Bytes, Bytes)]> = if ranges.iter().all(|(s, e)| s < e) {
        Cow::Borrowed(ranges)
    } else {
        Cow::Owned(ranges.iter().filter(|(s, e)| s < e).cloned().collect())
    };
    if kept.windows(2).any(|w| w[0].1 > w[1].0) {
        return Err(StorageError::InvalidArgument(
            "clustering ranges must be sorted and disjoint".into(),
        ));
    }
    Ok(kept)
}

/// [`check_ranges`], shared: one copy, straight into the shared slice.
pub fn validate_ranges(ranges: &[(Bytes, Bytes)]) -> Result<Arc<[(Bytes, Bytes)]>> {
    Ok(match check_ranges(ranges)? {
        Cow::Borrowed(ranges) => Arc::from(ranges),
        Cow::Owned(kept) => Arc::from(kept),
    })
}

/// One partition of an SSTable restricted to clustering ranges, borrowing the SSTable and the
/// ranges (see [`SsTable::read_borrowed`]): [`PartitionReader`] without the boxed row stream,
/// the shared copy of the ranges and the reference on the SSTable.
pub struct BorrowedPartition<'a> {
    pub deletion: Option<DeletionTime>,
    pub static_row: Row,
    /// The range tombstones intersecting the ranges, clipped to them.
    pub range_tombstones: RangeTombstoneList,
    /// Rows within the ranges, as [`PartitionReader::rows`].
    pub rows: BorrowedRows<'a>,
}

impl fmt::Debug for BorrowedPartition<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BorrowedPartition")
            .field("deletion", &self.deletion)
            .field("static_row", &self.static_row)
            .field("range_tombstones", &self.range_tombstones)
            .finish_non_exhaustive()
    }
}

/// The partition-level parts of a read and the state of its rows.
type Opened = (Option<DeletionTime>, Row, RangeTombstoneList, RowsState);

impl PartitionReader {
    /// `fill_cache`: whether the chunks read are admitted to the block cache (a point read's
    /// are; a compaction's are not, as a scan's are not). `progress`: where to add the length
    /// of each block of rows as it is read (a compaction's progress).
    pub(super) fn open(
        table: Arc<SsTable>,
        entry: IndexEntry,
        ranges: Arc<[(Bytes, Bytes)]>,
        reversed: bool,
        fill_cache: bool,
        progress: Option<Arc<AtomicU64>>,
    ) -> Result<PartitionReader> {
        let (deletion, static_row, range_tombstones, mut state) =
            open_partition(&table.data, entry, &ranges, reversed, fill_cache)?;
        state.progress = progress;
        Ok(PartitionReader {
            deletion,
            static_row,
            range_tombstones,
            rows: Box::new(BlockRows {
                table,
                ranges,
                state,
            }),
        })
    }
}

impl<'a> BorrowedPartition<'a> {
    pub(super) fn open(
        data: &'a DataFile,
        entry: IndexEntry,
        ranges: &'a [(Bytes, Bytes)],
        reversed: bool,
    ) -> Result<BorrowedPartition<'a>> {
        let (deletion, static_row, range_tombstones, state) =
            open_partition(data, entry, ranges, reversed, true)?;
        Ok(BorrowedPartition {
            deletion,
            static_row,
            range_tombstones,
            rows: BorrowedRows {
                data,
                ranges,
                state,
            },
        })
    }
}

/// Read the partition-level parts of `entry`'s partition and set up the read of its rows.
fn open_partition(
    data: &DataFile,
    entry: IndexEntry,
    ranges: &[(Bytes, Bytes)],
    reversed: bool,
    fill_cache: bool,
) -> Result<Opened> {
    let mut memo: ChunkMemo = None;
    let (deletion, static_row, range_tombstones) = if entry.plain_header {
        (None, Row::default(), RangeTombstoneList::new())
    } else {
        let bytes = data.read(entry.position, entry.header_length, &mut memo, fill_cache)?;
        let (header, consumed) =
            decode_header(bytes, entry.position, true).map_err(|e| e.in_file(&data.path))?;
        if !entry.describes(&header, consumed) {
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
        (header.deletion, header.static_row, range_tombstones)
    };

    let row_index = if entry.row_index_length == 0 || ranges.is_empty() {
        None
    } else {
        Some(RowIndexReader::open(
            data,
            &mut memo,
            entry.row_index.clone(),
            entry.row_index_position(),
            entry.row_index_length,
            entry.rows_length,
        )?)
    };
    let plan = BlockPlan {
        single_left: row_index.is_none() && !ranges.is_empty() && entry.rows_length > 0,
        row_index,
        range: 0,
        next: None,
        last_emitted: None,
    };
    let rows = RowsState {
        rows_position: entry.rows_position(),
        rows_length: entry.rows_length,
        plan,
        reversed,
        cursor: None,
        last: LastKey::None,
        memo,
        fill_cache,
        progress: None,
        failed: false,
    };
    Ok((deletion, static_row, range_tombstones, rows))
}

/// Which blocks are left to read, found lazily from the row index.
struct BlockPlan {
    row_index: Option<RowIndexReader>,
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
        let Some(index) = &mut self.row_index else {
            let single = std::mem::take(&mut self.single_left);
            return Ok(single.then_some((0, rows_length)));
        };
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
                    let hi = index.partition_point(data, true, |b| b.first() < &end[..])?;
                    let hi = self.last_emitted.map_or(hi, |l| hi.min(l));
                    hi.checked_sub(1)
                }
                None => {
                    let lo = index.partition_point(data, false, |b| b.last() < &start[..])?;
                    Some(self.last_emitted.map_or(lo, |l| lo.max(l + 1)))
                }
            };
            let intersecting = match candidate {
                Some(i) if i < index.len() => {
                    let b = index.block(data, i)?;
                    let hit = if reversed {
                        b.last() >= &start[..]
                    } else {
                        b.first() < &end[..]
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

/// One block of rows, opened: its row table read, its rows read on demand.
struct RowBlock {
    /// Logical offsets of the block and of its end.
    start: u64,
    end: u64,
    count: usize,
    /// `count` little-endian `u32` row offsets, relative to `start`.
    table: Bytes,
    /// The whole block, when it lies in one chunk (rows are then sliced from it).
    whole: Option<Bytes>,
    /// Whether chunks read for it are admitted to the block cache.
    fill_cache: bool,
}

impl RowBlock {
    fn open(
        data: &DataFile,
        memo: &mut ChunkMemo,
        start: u64,
        length: u64,
        fill_cache: bool,
    ) -> Result<RowBlock> {
        let end = start.saturating_add(length);
        let whole = data.read_in_one_chunk(start, length, memo, fill_cache)?;
        let count = match &whole {
            Some(bytes) => u32_at(bytes, 0),
            None => u32_at(&data.read(start, 4.min(length), memo, fill_cache)?, 0),
        }
        .map_or(0, u64::from);
        if count == 0 || 4 + 4 * count > length {
            return Err(StorageError::corrupt(
                &data.path,
                start,
                "bad row block count",
            ));
        }
        let table = match &whole {
            Some(bytes) => bytes.slice(4..4 + 4 * count as usize),
            None => data.read(start + 4, 4 * count, memo, fill_cache)?,
        };
        Ok(RowBlock {
            start,
            end,
            count: count as usize,
            table,
            whole,
            fill_cache,
        })
    }

    /// The logical extent of row `i`, checked to lie after the table and inside the block.
    fn span(&self, data: &DataFile, i: usize) -> Result<(u64, u64)> {
        let offset = |i: usize| u32_at(&self.table, 4 * i).map(|o| self.start + u64::from(o));
        let from = offset(i);
        let to = if i + 1 < self.count {
            offset(i + 1)
        } else {
            Some(self.end)
        };
        let table_end = self.start + 4 + 4 * self.count as u64;
        match (from, to) {
            (Some(from), Some(to))
                if from < to
                    && to <= self.end
                    && from >= table_end
                    && (i > 0 || from == table_end) =>
            {
                Ok((from, to))
            }
            _ => Err(StorageError::corrupt(
                &data.path,
                self.start,
                format!("row {i} of the block is out of bounds"),
            )),
        }
    }

    /// Row `i`: the buffer holding it, the buffer's logical offset, and the row's frame in the
    /// buffer. For a block in one chunk the buffer is `None`, meaning the block's own bytes
    /// (`whole`, at the block's offset), so that stepping through rows takes no reference on
    /// the chunk; otherwise it is the row alone, read from Data (see [`RowBlock::bytes`]).
    fn row(
        &self,
        data: &DataFile,
        memo: &mut ChunkMemo,
        i: usize,
    ) -> Result<(Option<Bytes>, u64, RowFrame)> {
        let (from, to) = self.span(data, i)?;
        let (buf, at, end) = match &self.whole {
            // `span` keeps the row inside the block.
            Some(_) => (
                None,
                (from - self.start) as usize,
                (to - self.start) as usize,
            ),
            None => (
                Some(data.read(from, to - from, memo, self.fill_cache)?),
                0,
                (to - from) as usize,
            ),
        };
        let bytes = buf
            .as_ref()
            .or(self.whole.as_ref())
            .and_then(|b| b.get(..end))
            .unwrap_or(&[]);
        match parse_row_frame(bytes, at) {
            Ok(Some(frame)) if frame.end() == end => {
                let base = if buf.is_some() { from } else { self.start };
                Ok((buf, base, frame))
            }
            Ok(_) => Err(StorageError::corrupt(
                &data.path,
                from,
                "row does not fill its extent",
            )),
            Err(e) => Err(StorageError::corrupt(&data.path, from, e.to_string())),
        }
    }

    /// The bytes a frame of [`RowBlock::row`] refers to.
    fn bytes<'a>(&'a self, buf: &'a Option<Bytes>) -> &'a Bytes {
        static EMPTY: Bytes = Bytes::from_static(&[]);
        buf.as_ref().or(self.whole.as_ref()).unwrap_or(&EMPTY)
    }

    /// The number of leading rows whose clustering key is below `key`. With `from_end` (a
    /// reversed read's upper bound, usually past the whole block) the last row is compared
    /// first, so reading a block from its end costs one comparison, not a search. (A forward
    /// read gets no such check: its usual lower bound is a point read's key, mid-block.)
    fn lower_bound(
        &self,
        data: &DataFile,
        memo: &mut ChunkMemo,
        key: &[u8],
        from_end: bool,
    ) -> Result<usize> {
        let below = |memo: &mut ChunkMemo, i: usize| -> Result<bool> {
            let (buf, _, frame) = self.row(data, memo, i)?;
            Ok(self.bytes(&buf)[frame.clustering] < *key)
        };
        if let Some(whole) = &self.whole {
            // The rows the search may probe (all of them in a block of up to 32 rows), fetched
            // at once rather than one memory wait per probe.
            let stride = self.count.div_ceil(WARM_MAX_LOADS).max(1);
            warm(
                whole,
                (0..self.count)
                    .step_by(stride)
                    .filter_map(|i| u32_at(&self.table, 4 * i))
                    .map(|offset| offset as usize),
            );
        }
        if from_end && below(memo, self.count - 1)? {
            return Ok(self.count);
        }
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if below(memo, mid)? {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }
}

/// Where a read stands inside its current block.
struct BlockCursor {
    block: RowBlock,
    /// Ranges passed so far, counted in the read's direction.
    range: usize,
    /// Whether `next` has been positioned for the current range.
    positioned: bool,
    /// Forward: the next row to consider. Reversed: one past it.
    next: usize,
}

/// The clustering key a read returned last, kept to check that rows come in order.
enum LastKey {
    None,
    /// A key of a block no longer current.
    Owned(Bytes),
    /// A range of the current block's bytes (see [`RowBlock::row`]): no reference taken.
    InBlock(std::ops::Range<usize>),
}

/// Where a lazy read of rows stands. The Data file and the ranges are lent on every call:
/// [`BlockRows`] owns them (shared), [`BorrowedRows`] borrows them.
struct RowsState {
    rows_position: u64,
    rows_length: u64,
    plan: BlockPlan,
    reversed: bool,
    cursor: Option<BlockCursor>,
    last: LastKey,
    memo: ChunkMemo,
    /// Whether chunks read are admitted to the block cache.
    fill_cache: bool,
    /// Where to add each block's length as it is opened (see [`PartitionReader::open`]).
    progress: Option<Arc<AtomicU64>>,
    failed: bool,
}

/// Decode the row framed by `frame` in `bytes` (which start at logical offset `base`), check
/// that it comes after `last` in the read's order, and remember it as the last (`in_block`:
/// `bytes` are the current block's).
fn decode_row(
    data: &DataFile,
    reversed: bool,
    last: &mut LastKey,
    bytes: &Bytes,
    in_block: bool,
    base: u64,
    frame: &RowFrame,
) -> Result<(Bytes, Row)> {
    let key = &bytes[frame.clustering.clone()];
    let previous = match last {
        LastKey::None => None,
        LastKey::Owned(b) => Some(&b[..]),
        LastKey::InBlock(r) => bytes.get(r.clone()),
    };
    let in_order = previous.is_none_or(|p| if reversed { p > key } else { p < key });
    if !in_order {
        return Err(StorageError::corrupt(
            &data.path,
            base + frame.clustering.start as u64,
            "rows out of clustering order",
        ));
    }
    let body_position = base + frame.body.start as u64;
    let row = decode_row_body(bytes.slice(frame.body.clone()), body_position)
        .map_err(|e| e.in_file(&data.path))?;
    let clustering = bytes.slice(frame.clustering.clone());
    *last = if in_block {
        LastKey::InBlock(frame.clustering.clone())
    } else {
        LastKey::Owned(clustering.clone())
    };
    Ok((clustering, row))
}

impl RowsState {
    /// The next row of the current block within the ranges, if any.
    fn next_in_block(
        &mut self,
        data: &DataFile,
        ranges: &[(Bytes, Bytes)],
    ) -> Result<Option<(Bytes, Row)>> {
        let Some(cursor) = &mut self.cursor else {
            return Ok(None);
        };
        while cursor.range < ranges.len() {
            let (start, end) = if self.reversed {
                &ranges[ranges.len() - 1 - cursor.range]
            } else {
                &ranges[cursor.range]
            };
            let block = &cursor.block;
            if self.reversed {
                if !cursor.positioned {
                    let hi = block.lower_bound(data, &mut self.memo, end, true)?;
                    cursor.next = cursor.next.min(hi);
                    cursor.positioned = true;
                }
                if cursor.next == 0 {
                    return Ok(None);
                }
                let (buf, base, frame) = block.row(data, &mut self.memo, cursor.next - 1)?;
                let bytes = block.bytes(&buf);
                if start.is_empty() || bytes[frame.clustering.clone()] >= start[..] {
                    cursor.next -= 1;
                    let in_block = buf.is_none();
                    return decode_row(data, true, &mut self.last, bytes, in_block, base, &frame)
                        .map(Some);
                }
            } else {
                if !cursor.positioned {
                    let lo = block.lower_bound(data, &mut self.memo, start, false)?;
                    cursor.next = cursor.next.max(lo);
                    cursor.positioned = true;
                }
                if cursor.next >= block.count {
                    return Ok(None);
                }
                let (buf, base, frame) = block.row(data, &mut self.memo, cursor.next)?;
                let bytes = block.bytes(&buf);
                if bytes[frame.clustering.clone()] < end[..] {
                    cursor.next += 1;
                    let in_block = buf.is_none();
                    return decode_row(data, false, &mut self.last, bytes, in_block, base, &frame)
                        .map(Some);
                }
            }
            // The row is outside the current range: it may be in the next one.
            cursor.range += 1;
            cursor.positioned = false;
        }
        Ok(None)
    }

    fn next_row(
        &mut self,
        data: &DataFile,
        ranges: &[(Bytes, Bytes)],
    ) -> Result<Option<(Bytes, Row)>> {
        loop {
            if let Some(row) = self.next_in_block(data, ranges)? {
                return Ok(Some(row));
            }
            if let Some(cursor) = self.cursor.take()
                && let LastKey::InBlock(range) = &self.last
            {
                // The block goes: keep the last key it gave out.
                let owned = cursor.block.whole.as_ref().map(|w| w.slice(range.clone()));
                self.last = owned.map_or(LastKey::None, LastKey::Owned);
            }
            let block = self
                .plan
                .next_block(ranges, self.reversed, self.rows_length, data)?;
            let Some((offset, length)) = block else {
                return Ok(None);
            };
            let start = self.rows_position.saturating_add(offset);
            let block = RowBlock::open(data, &mut self.memo, start, length, self.fill_cache)?;
            if let Some(progress) = &self.progress {
                progress.fetch_add(length, Ordering::Relaxed);
            }
            self.cursor = Some(BlockCursor {
                next: if self.reversed { block.count } else { 0 },
                block,
                range: 0,
                positioned: false,
            });
        }
    }

    /// The next row, as an iterator gives it: after an error or the last row, nothing.
    fn next_item(
        &mut self,
        data: &DataFile,
        ranges: &[(Bytes, Bytes)],
    ) -> Option<Result<(Bytes, Row)>> {
        if self.failed {
            return None;
        }
        let result = self.next_row(data, ranges).transpose();
        if matches!(result, Some(Err(_)) | None) {
            self.failed = true;
        }
        result
    }
}

/// The lazy row iterator of a [`PartitionReader`], holding its SSTable and ranges.
struct BlockRows {
    table: Arc<SsTable>,
    ranges: Arc<[(Bytes, Bytes)]>,
    state: RowsState,
}

impl Iterator for BlockRows {
    type Item = Result<(Bytes, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.state.next_item(&self.table.data, &self.ranges)
    }
}

/// The lazy row iterator of a [`BorrowedPartition`].
pub struct BorrowedRows<'a> {
    data: &'a DataFile,
    ranges: &'a [(Bytes, Bytes)],
    state: RowsState,
}

impl fmt::Debug for BorrowedRows<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BorrowedRows")
            .field("ranges", &self.ranges.len())
            .field("reversed", &self.state.reversed)
            .finish_non_exhaustive()
    }
}

impl Iterator for BorrowedRows<'_> {
    type Item = Result<(Bytes, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.state.next_item(self.data, self.ranges)
    }
}
