//! Reading one partition restricted to clustering ranges, forwards or reversed, lazily.
//!
//! The header (deletion, static row, range tombstones) is read at once. The rows are read a
//! *block* at a time: with a row index, the blocks intersecting the ranges (block `j`
//! intersects `[s, e)` when `last_j >= s` and `first_j < e`); without one, the partition's rows
//! form a single block of at most about `row_index_interval_bytes`. Reversed reads walk the
//! blocks backwards and each block's rows backwards, so "the newest 50 rows" of a huge
//! partition costs the header, the row index and the last block, not the partition.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use khata_types::{DeletionTime, RangeTombstoneList, Row};

use super::chunk::ChunkMemo;
use super::index::IndexEntry;
use super::layout::{decode_header, decode_row_index, decode_rows};
use super::reader::SsTable;
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
pub(super) fn validate_ranges(ranges: &[(Bytes, Bytes)]) -> Result<Arc<[(Bytes, Bytes)]>> {
    let kept: Vec<(Bytes, Bytes)> = ranges.iter().filter(|(s, e)| s < e).cloned().collect();
    if kept.windows(2).any(|w| w[0].1 > w[1].0) {
        return Err(StorageError::InvalidArgument(
            "clustering ranges must be sorted and disjoint".into(),
        ));
    }
    Ok(kept.into())
}

fn in_ranges(ranges: &[(Bytes, Bytes)], clustering: &Bytes) -> bool {
    let i = ranges.partition_point(|(_, end)| end <= clustering);
    ranges.get(i).is_some_and(|(start, _)| start <= clustering)
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
        let mut range_tombstones = Vec::new();
        for (start, end) in ranges.iter() {
            range_tombstones.extend(header.range_tombstones.slice(start, end));
        }
        let range_tombstones =
            RangeTombstoneList::from_sorted(range_tombstones).ok_or_else(|| {
                StorageError::corrupt(&data.path, entry.position, "range tombstones out of order")
            })?;

        let blocks = if ranges.is_empty() || entry.rows_length == 0 {
            VecDeque::new()
        } else if entry.row_index_length == 0 {
            VecDeque::from([(0, entry.rows_length)])
        } else {
            let position = entry.row_index_position();
            let bytes = data.read(position, entry.row_index_length, &mut memo, true)?;
            let index = decode_row_index(bytes, position, entry.rows_length)
                .map_err(|e| e.in_file(&data.path))?;
            let mut picked: VecDeque<(u64, u64)> = VecDeque::new();
            for (start, end) in ranges.iter() {
                let first = index.partition_point(|b| b.last < *start);
                for block in index.iter().skip(first).take_while(|b| b.first < *end) {
                    if picked.back() != Some(&(block.offset, block.length)) {
                        picked.push_back((block.offset, block.length));
                    }
                }
            }
            picked
        };
        let rows = BlockRows {
            table: table.clone(),
            rows_position: entry.rows_position(),
            blocks,
            ranges,
            reversed,
            current: VecDeque::new(),
            memo,
            failed: false,
        };
        Ok(PartitionReader {
            deletion: header.deletion,
            static_row: header.static_row,
            range_tombstones,
            rows: Box::new(rows),
        })
    }
}

/// The lazy row iterator: one decoded block at a time.
struct BlockRows {
    table: Arc<SsTable>,
    rows_position: u64,
    /// Blocks still to read: (offset relative to the rows, length), ascending.
    blocks: VecDeque<(u64, u64)>,
    ranges: Arc<[(Bytes, Bytes)]>,
    reversed: bool,
    /// Rows of the current block that fall in the ranges.
    current: VecDeque<(Bytes, Row)>,
    memo: ChunkMemo,
    failed: bool,
}

impl BlockRows {
    fn load(&mut self, offset: u64, length: u64) -> Result<()> {
        let data = &self.table.data;
        let position = self.rows_position.saturating_add(offset);
        let bytes = data.read(position, length, &mut self.memo, true)?;
        let rows = decode_rows(bytes, position).map_err(|e| e.in_file(&data.path))?;
        let ranges = &self.ranges;
        self.current = rows
            .into_iter()
            .filter(|(c, _)| in_ranges(ranges, c))
            .collect();
        Ok(())
    }
}

impl Iterator for BlockRows {
    type Item = Result<(Bytes, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.failed {
            let row = if self.reversed {
                self.current.pop_back()
            } else {
                self.current.pop_front()
            };
            if let Some(row) = row {
                return Some(Ok(row));
            }
            let block = if self.reversed {
                self.blocks.pop_back()
            } else {
                self.blocks.pop_front()
            };
            let (offset, length) = block?;
            if let Err(e) = self.load(offset, length) {
                self.failed = true;
                return Some(Err(e));
            }
        }
        None
    }
}
