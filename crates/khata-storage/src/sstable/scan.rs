//! Scanning whole partitions in key order, for range scans and compaction.
//!
//! The scanner walks the index pages from the one that would hold the start key and reads each
//! partition's header and rows in one logical read (skipping its row index). It holds one index
//! page and one partition at a time. Chunks it reads are not admitted to the block cache, so a
//! compaction does not evict the blocks point reads keep hot; consecutive small partitions
//! share the last chunk through a memo.
//!
//! A range scan's scanner ([`WideDeferringScan`]) does not read a partition whose rows take more
//! than a given number of bytes: it names it by key ([`Scanned::Wide`]), and the scan reads it
//! through the point-read path, a page at a time, instead of decoding it whole. Compaction's
//! reads every partition whole.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use khata_types::Partition;
use khata_types::token::DecoratedKey;

use super::chunk::ChunkMemo;
use super::index::IndexEntry;
use super::layout::{decode_header, decode_rows};
use super::reader::SsTable;
use crate::error::{Result, StorageError};
use crate::read::Scanned;

/// Iterator over `(key, partition)` of an SSTable in key order. Ends after the first error.
pub struct SsTableScanner {
    table: Arc<SsTable>,
    from: Option<DecoratedKey>,
    next_page: usize,
    entries: VecDeque<IndexEntry>,
    memo: ChunkMemo,
    done: bool,
}

impl fmt::Debug for SsTableScanner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SsTableScanner")
            .field("generation", &self.table.generation())
            .field("next_page", &self.next_page)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl SsTableScanner {
    pub(super) fn new(table: Arc<SsTable>, from: Option<DecoratedKey>) -> Self {
        let next_page = from.as_ref().and_then(|k| table.page_for(k)).unwrap_or(0);
        SsTableScanner {
            table,
            from,
            next_page,
            entries: VecDeque::new(),
            memo: None,
            done: false,
        }
    }

    fn read_partition(&mut self, entry: &IndexEntry) -> Result<Partition> {
        let data = &self.table.data;
        let body_length = entry.header_length.saturating_add(entry.rows_length);
        let bytes = data.read(entry.position, body_length, &mut self.memo, false)?;
        let (header, consumed) = decode_header(bytes.clone(), entry.position, false)
            .map_err(|e| e.in_file(&data.path))?;
        if !entry.describes(&header, consumed) {
            return Err(StorageError::corrupt(
                &data.path,
                entry.position,
                "partition header disagrees with its index entry",
            ));
        }
        let rows_position = entry.rows_position();
        let rows = decode_rows(bytes.slice(consumed as usize..), rows_position)
            .map_err(|e| e.in_file(&data.path))?;
        Ok(Partition {
            deletion: header.deletion,
            static_row: header.static_row,
            range_tombstones: header.range_tombstones,
            rows: rows.into_iter().collect::<BTreeMap<_, _>>(),
        })
    }

    fn next_entry(&mut self) -> Result<Option<IndexEntry>> {
        loop {
            if let Some(entry) = self.entries.pop_front() {
                return Ok(Some(entry));
            }
            if self.next_page >= self.table.page_count() {
                return Ok(None);
            }
            let page = self.table.index_page_entries(self.next_page)?;
            self.next_page += 1;
            let from = self.from.take();
            self.entries = page
                .into_iter()
                .filter(|e| from.as_ref().is_none_or(|f| e.key >= *f))
                .collect();
        }
    }
}

impl SsTableScanner {
    /// The next partition's index entry, made into an item by `read`; `None` at the end and
    /// after the first error.
    fn next_with<T>(
        &mut self,
        read: impl FnOnce(&mut Self, IndexEntry) -> Result<T>,
    ) -> Option<Result<T>> {
        if self.done {
            return None;
        }
        let result = match self.next_entry() {
            Ok(None) => {
                self.done = true;
                return None;
            }
            Ok(Some(entry)) => read(self, entry),
            Err(e) => Err(e),
        };
        if result.is_err() {
            self.done = true;
        }
        Some(result)
    }
}

impl Iterator for SsTableScanner {
    type Item = Result<(DecoratedKey, Partition)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_with(|s, entry| s.read_partition(&entry).map(|p| (entry.key, p)))
    }
}

/// A range scan's iterator over an SSTable: partitions whose rows take more than `wide_over`
/// bytes are only named ([`Scanned::Wide`]), the others read whole.
#[derive(Debug)]
pub struct WideDeferringScan {
    scanner: SsTableScanner,
    wide_over: u64,
    /// Where to add the bytes of each partition passed (see [`WideDeferringScan::counting`]).
    progress: Option<Arc<AtomicU64>>,
}

impl WideDeferringScan {
    pub(super) fn new(scanner: SsTableScanner, wide_over: u64) -> Self {
        WideDeferringScan {
            scanner,
            wide_over,
            progress: None,
        }
    }

    /// Add the bytes each partition takes in the Data file (uncompressed, as
    /// `SsTableStats::uncompressed_data_size_bytes` counts them) to `progress` as the scan
    /// passes it: a compaction's progress (`Engine::sstable_tasks`). Of a wide partition, only
    /// the header and row index: its rows count as the caller reads them, through
    /// `SsTable::read_uncached` given the same counter.
    pub fn counting(mut self, progress: Arc<AtomicU64>) -> Self {
        self.progress = Some(progress);
        self
    }
}

impl Iterator for WideDeferringScan {
    type Item = Result<(DecoratedKey, Scanned)>;

    fn next(&mut self) -> Option<Self::Item> {
        let wide_over = self.wide_over;
        let progress = self.progress.as_deref();
        self.scanner.next_with(|s, entry| {
            let wide = entry.rows_length > wide_over;
            if let Some(progress) = progress {
                // A wide partition's rows are counted as they are read (`SsTable::read_uncached`).
                let passed = if wide {
                    entry.total_length().saturating_sub(entry.rows_length)
                } else {
                    entry.total_length()
                };
                progress.fetch_add(passed, Ordering::Relaxed);
            }
            if wide {
                Ok((entry.key, Scanned::Wide))
            } else {
                s.read_partition(&entry)
                    .map(|p| (entry.key, Scanned::Whole(p)))
            }
        })
    }
}
