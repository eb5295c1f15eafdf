//! An open SSTable: the shared, immutable reader.
//!
//! Opening reads the TOC (rejecting unknown versions), checks every component's length against
//! it, and loads the small components (CompressionInfo, Summary, Filter, Statistics) after
//! checking their whole-file CRC32C. Data chunks and Index pages are read on demand, verified
//! by their own checksums. Data chunks are shared through the [`BlockCache`]; an Index page a
//! point read loads is held by the SSTable itself until it is dropped (as RocksDB's default
//! keeps index blocks in the table reader, outside its block cache): a point read then costs
//! one cache lookup (the chunk) instead of two, and a page is opened once instead of on every
//! read. The pages held are counted in [`SsTable::memory_bytes`]; they are at most the Index
//! file (about 1 % of the uncompressed data for partitions of tens of KiB) and only the pages
//! point reads touch.
//! Scans (compaction) read pages without holding them.
//!
//! Lifecycle: an `SsTable` lives in an `Arc`. Readers and scanners hold clones, so an SSTable
//! that compaction has replaced stays readable until the last of them finishes;
//! [`SsTable::mark_obsolete`] asks for its files to be deleted when the last `Arc` drops. The
//! TOC is deleted first, so a crash midway leaves an incomplete SSTable that is never listed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bytes::Bytes;
use khata_env::{FileSystem, ReadableFile};
use khata_types::clustering;
use khata_types::token::DecoratedKey;

use super::bloom::BloomFilter;
use super::cache::BlockCache;
use super::chunk::DataFile;
use super::format::{Component, READABLE_VERSIONS, Toc, component_path, parse_file_name};
use super::index::{IndexEntry, IndexPage, SummaryEntry, decode_summary, verify_page};
use super::partition_reader::{BorrowedPartition, PartitionReader, validate_ranges};
use super::scan::{SsTableScanner, WideDeferringScan};
use super::stats::SsTableStats;
use crate::error::{Result, StorageError};

/// Largest TOC a reader accepts.
const MAX_TOC_BYTES: u64 = 4096;

/// Process-unique ids for cache keys.
static NEXT_CACHE_ID: AtomicU64 = AtomicU64::new(1);

/// An immutable sorted file of partitions, open for reads.
#[derive(Debug)]
pub struct SsTable {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    generation: u64,
    /// The format version the files were written in.
    version: u32,
    pub(super) data: DataFile,
    index_path: PathBuf,
    index_file: Arc<dyn ReadableFile>,
    summary: Vec<SummaryEntry>,
    /// The index pages point reads have loaded, one slot per summary entry, held until the
    /// SSTable is dropped.
    index_pages: Box<[OnceLock<IndexPage>]>,
    /// Bytes of the pages held in `index_pages`.
    index_pages_bytes: AtomicUsize,
    bloom: BloomFilter,
    stats: SsTableStats,
    obsolete: AtomicBool,
    /// The obsolescence log naming this SSTable among others replaced with it; dropped (after
    /// the files are deleted) with the SSTable.
    obsolete_log: OnceLock<Arc<super::ObsoleteLog>>,
}

fn read_whole(file: &dyn ReadableFile, path: &Path) -> Result<Bytes> {
    let len = usize::try_from(file.len())
        .map_err(|_| StorageError::corrupt(path, 0, "file too large to load"))?;
    file.read_vec(0, len)
        .map(Bytes::from)
        .map_err(|e| StorageError::io(path, e))
}

impl SsTable {
    /// Open generation `generation` in `dir`.
    pub fn open(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        generation: u64,
        cache: Arc<BlockCache>,
    ) -> Result<Arc<SsTable>> {
        let toc_path = component_path(dir, generation, Component::Toc);
        let toc_file = fs
            .open_read(&toc_path)
            .map_err(|e| StorageError::io(&toc_path, e))?;
        if toc_file.len() > MAX_TOC_BYTES {
            return Err(StorageError::corrupt(&toc_path, 0, "TOC too large"));
        }
        let toc = match Toc::decode(&read_whole(&*toc_file, &toc_path)?) {
            Ok(toc) => toc,
            Err(Ok(version)) => {
                return Err(StorageError::UnsupportedVersion {
                    path: toc_path,
                    version,
                    supported: READABLE_VERSIONS
                        .iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
            Err(Err(e)) => return Err(e.in_file(&toc_path)),
        };
        if toc.generation != generation {
            return Err(StorageError::corrupt(
                &toc_path,
                12,
                "TOC names another generation",
            ));
        }

        // Open every component and check it against the TOC.
        let mut files = Vec::with_capacity(toc.components.len());
        for digest in &toc.components {
            let path = component_path(dir, generation, digest.component);
            let file = fs
                .open_read(&path)
                .map_err(|e| StorageError::io(&path, e))?;
            if file.len() != digest.length {
                return Err(StorageError::corrupt(
                    &path,
                    file.len().min(digest.length),
                    format!(
                        "file is {} bytes, the TOC says {}",
                        file.len(),
                        digest.length
                    ),
                ));
            }
            files.push((digest, path, file));
        }
        let small = |component: Component| -> Result<(PathBuf, Bytes)> {
            let Some((digest, path, file)) =
                files.iter().find(|(d, _, _)| d.component == component)
            else {
                return Err(StorageError::corrupt(
                    &toc_path,
                    0,
                    format!("no {component:?} in TOC"),
                ));
            };
            let bytes = read_whole(&**file, path)?;
            if crc32c::crc32c(&bytes) != digest.crc32c {
                return Err(StorageError::corrupt(
                    path,
                    0,
                    "checksum mismatch with the TOC",
                ));
            }
            Ok((path.clone(), bytes))
        };
        let (info_path, info) = small(Component::CompressionInfo)?;
        let (summary_path, summary) = small(Component::Summary)?;
        let (filter_path, filter) = small(Component::Filter)?;
        let (stats_path, stats) = small(Component::Statistics)?;
        let big = |component: Component| {
            files
                .iter()
                .find(|(d, _, _)| d.component == component)
                .map(|(_, path, file)| (path.clone(), file.clone()))
                .ok_or_else(|| {
                    StorageError::corrupt(&toc_path, 0, format!("no {component:?} in TOC"))
                })
        };
        let (data_path, data_file) = big(Component::Data)?;
        let (index_path, index_file) = big(Component::Index)?;

        let cache_id = NEXT_CACHE_ID.fetch_add(1, Ordering::Relaxed);
        let data = DataFile::open(&data_path, data_file, info, toc.version, cache, cache_id)
            .map_err(|e| e.in_file(&info_path))?;
        let summary =
            decode_summary(summary, index_file.len()).map_err(|e| e.in_file(&summary_path))?;
        let bloom = BloomFilter::decode(filter).map_err(|e| e.in_file(&filter_path))?;
        let stats = SsTableStats::decode(stats).map_err(|e| e.in_file(&stats_path))?;
        if stats.data_size_bytes != data.file_length()
            || stats.uncompressed_data_size_bytes != data.logical_length()
        {
            return Err(StorageError::corrupt(
                &stats_path,
                0,
                "data sizes disagree with the Data file",
            ));
        }
        let index_pages = summary.iter().map(|_| OnceLock::new()).collect();
        Ok(Arc::new(SsTable {
            fs,
            dir: dir.to_path_buf(),
            generation,
            version: toc.version,
            data,
            index_path,
            index_file,
            summary,
            index_pages,
            index_pages_bytes: AtomicUsize::new(0),
            bloom,
            stats,
            obsolete: AtomicBool::new(false),
            obsolete_log: OnceLock::new(),
        }))
    }

    /// Generations of the complete SSTables in `dir` (those with a TOC), ascending. Files of
    /// unfinished SSTables are ignored (see [`SsTable::remove_incomplete`]). A missing
    /// directory has none.
    pub fn list_generations(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<u64>> {
        let entries = match fs.list_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StorageError::io(dir, e)),
        };
        let mut generations: Vec<u64> = entries
            .iter()
            .filter_map(|p| parse_file_name(p))
            .filter(|n| n.component == Component::Toc && !n.temporary)
            .map(|n| n.generation)
            .collect();
        generations.sort_unstable();
        generations.dedup();
        Ok(generations)
    }

    /// Delete what unfinished SSTables left in `dir`: `.tmp` files and components of
    /// generations without a TOC. Returns the paths removed. Call it only when no
    /// [`super::SsTableWriter`] is writing in `dir` (at start-up).
    pub fn remove_incomplete(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<PathBuf>> {
        let complete = SsTable::list_generations(fs, dir)?;
        let entries = match fs.list_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StorageError::io(dir, e)),
        };
        let mut removed = Vec::new();
        for path in entries {
            let Some(name) = parse_file_name(&path) else {
                continue;
            };
            if name.temporary || complete.binary_search(&name.generation).is_err() {
                fs.remove_file(&path)
                    .map_err(|e| StorageError::io(&path, e))?;
                removed.push(path);
            }
        }
        if !removed.is_empty() {
            fs.sync_dir(dir).map_err(|e| StorageError::io(dir, e))?;
            tracing::info!(dir = %dir.display(), files = removed.len(), "removed unfinished SSTable files");
        }
        Ok(removed)
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The format version the SSTable was written in.
    pub fn format_version(&self) -> u32 {
        self.version
    }

    pub fn stats(&self) -> &SsTableStats {
        &self.stats
    }

    /// Data chunks this SSTable has read from disk (block cache misses) since it was opened.
    pub fn chunk_reads(&self) -> u64 {
        self.data.chunk_reads()
    }

    /// Bytes the SSTable holds in memory: its Bloom filter, summary and chunk table, and the
    /// index pages point reads have loaded (see the module documentation). Data chunks are in
    /// the shared block cache and not counted here.
    pub fn memory_bytes(&self) -> usize {
        self.bloom.size_bytes()
            + self.data.chunk_table_bytes()
            + self
                .summary
                .iter()
                .map(|s| s.first.key.len() + 48)
                .sum::<usize>()
            + self.index_pages.len() * std::mem::size_of::<OnceLock<IndexPage>>()
            + self.index_pages_bytes.load(Ordering::Relaxed)
    }

    /// Bytes of the index pages this SSTable holds (part of [`SsTable::memory_bytes`]).
    pub fn index_pages_bytes(&self) -> usize {
        self.index_pages_bytes.load(Ordering::Relaxed)
    }

    /// False if the SSTable certainly does not hold `key` (outside its key range, or the Bloom
    /// filter says so).
    pub fn may_contain(&self, key: &DecoratedKey) -> bool {
        let in_range = match (&self.stats.first_key, &self.stats.last_key) {
            (Some(first), Some(last)) => first <= key && key <= last,
            _ => false,
        };
        in_range && self.bloom.may_contain(&key.key)
    }

    /// Index page `page` of the summary, read from the Index file and verified.
    fn read_index_page(&self, page: usize) -> Result<IndexPage> {
        let Some(summary) = self.summary.get(page) else {
            return Err(StorageError::corrupt(
                &self.index_path,
                0,
                format!("no index page {page}"),
            ));
        };
        let length = usize::try_from(summary.page_length).map_err(|_| {
            StorageError::corrupt(&self.index_path, summary.page_offset, "page length")
        })?;
        let raw = self
            .index_file
            .read_vec(summary.page_offset, length)
            .map_err(|e| StorageError::io(&self.index_path, e))?;
        let body =
            verify_page(&raw, summary.page_offset).map_err(|e| e.in_file(&self.index_path))?;
        IndexPage::open(body, summary.page_offset, self.version)
            .map_err(|e| e.in_file(&self.index_path))
    }

    /// Index page `page`, loaded once and then held by the SSTable (for point reads).
    fn held_index_page(&self, page: usize) -> Result<&IndexPage> {
        let Some(slot) = self.index_pages.get(page) else {
            return Err(StorageError::corrupt(
                &self.index_path,
                0,
                format!("no index page {page}"),
            ));
        };
        if let Some(held) = slot.get() {
            return Ok(held);
        }
        // Two readers may load the same page at once; the first to finish keeps it, and only
        // its bytes are counted.
        let loaded = self.read_index_page(page)?;
        let size = loaded.size_bytes();
        if slot.set(loaded).is_ok() {
            self.index_pages_bytes.fetch_add(size, Ordering::Relaxed);
        }
        slot.get()
            .ok_or_else(|| StorageError::corrupt(&self.index_path, 0, "index page slot left empty"))
    }

    /// Every entry of index page `page`, checked. A page the SSTable does not hold is read
    /// without being kept, so a scan does not load the whole index into memory.
    pub(super) fn index_page_entries(&self, page: usize) -> Result<Vec<IndexEntry>> {
        let first = &self.summary[page].first;
        let entries = match self.index_pages.get(page).and_then(OnceLock::get) {
            Some(held) => held.entries(first),
            None => self.read_index_page(page)?.entries(first),
        };
        entries.map_err(|e| e.in_file(&self.index_path))
    }

    /// The number of index pages.
    pub(super) fn page_count(&self) -> usize {
        self.summary.len()
    }

    /// The page that would hold `key`: the last page whose first key is at most `key`.
    pub(super) fn page_for(&self, key: &DecoratedKey) -> Option<usize> {
        self.summary
            .partition_point(|s| s.first <= *key)
            .checked_sub(1)
    }

    /// The index entry of `key`, if the SSTable holds it.
    fn find(&self, key: &DecoratedKey) -> Result<Option<IndexEntry>> {
        let Some(page) = self.page_for(key) else {
            return Ok(None);
        };
        self.held_index_page(page)?
            .find(key)
            .map_err(|e| e.in_file(&self.index_path))
    }

    /// The partition `key` restricted to `ranges`: sorted, disjoint, half-open byte ranges of
    /// clustering keys (empty ranges are ignored; pass `[clustering::full_range()]` for the
    /// whole partition). Rows come lazily, ascending or (`reversed`) descending; the range
    /// tombstones returned are those intersecting the ranges, clipped to them. `None` if the
    /// SSTable does not hold the partition.
    pub fn read(
        self: &Arc<Self>,
        key: &DecoratedKey,
        ranges: &[(Bytes, Bytes)],
        reversed: bool,
    ) -> Result<Option<PartitionReader>> {
        let ranges = validate_ranges(ranges)?;
        self.read_validated(key, ranges, reversed)
    }

    /// [`SsTable::read`] with ranges already checked by [`validate_ranges`] (so that a read
    /// over several SSTables checks and copies them once).
    pub fn read_validated(
        self: &Arc<Self>,
        key: &DecoratedKey,
        ranges: Arc<[(Bytes, Bytes)]>,
        reversed: bool,
    ) -> Result<Option<PartitionReader>> {
        if !self.may_contain(key) {
            return Ok(None);
        }
        let Some(entry) = self.find(key)? else {
            return Ok(None);
        };
        PartitionReader::open(self.clone(), entry, ranges, reversed, true, None).map(Some)
    }

    /// The whole partition `key`, rows ascending, as [`SsTable::read`] gives it but through
    /// chunks not admitted to the block cache (for compaction, which reads a wide partition
    /// this way and should not evict the blocks point reads keep hot, as a scan does not).
    /// With `progress: Some((counter, wide_over))`, if the partition's rows take more than
    /// `wide_over` bytes (so a [`WideDeferringScan`] with that bound, counting into the same
    /// counter, left them out: see [`WideDeferringScan::counting`]) the length of each block
    /// of rows is added to the counter as the block is read, and a compaction's progress
    /// moves through a wide partition rather than past it at once. A narrower one (wide in
    /// another input only) was counted whole by the scan already.
    pub fn read_uncached(
        self: &Arc<Self>,
        key: &DecoratedKey,
        progress: Option<(Arc<AtomicU64>, u64)>,
    ) -> Result<Option<PartitionReader>> {
        if !self.may_contain(key) {
            return Ok(None);
        }
        let Some(entry) = self.find(key)? else {
            return Ok(None);
        };
        let progress = progress
            .filter(|(_, wide_over)| entry.rows_length > *wide_over)
            .map(|(counter, _)| counter);
        let ranges: Arc<[(Bytes, Bytes)]> = Arc::from([clustering::full_range()]);
        PartitionReader::open(self.clone(), entry, ranges, false, false, progress).map(Some)
    }

    /// [`SsTable::read_validated`] borrowing the SSTable and the ranges (checked by
    /// [`super::check_ranges`]) instead of sharing them: no boxed row stream, no shared copy
    /// of the ranges, no reference on the SSTable. For a read that consumes the rows at once
    /// (a point read that finds its partition in one SSTable).
    pub fn read_borrowed<'a>(
        &'a self,
        key: &DecoratedKey,
        ranges: &'a [(Bytes, Bytes)],
        reversed: bool,
    ) -> Result<Option<BorrowedPartition<'a>>> {
        if !self.may_contain(key) {
            return Ok(None);
        }
        let Some(entry) = self.find(key)? else {
            return Ok(None);
        };
        BorrowedPartition::open(&self.data, entry, ranges, reversed).map(Some)
    }

    /// Whole partitions in key order, starting at `from` (inclusive) or at the first. To start
    /// at a token, pass a key with that token and empty key bytes (the smallest key of the
    /// token); the caller stops at the end of its range.
    /// Reads bypass the block cache's admission, so a scan does not evict hot blocks.
    pub fn scan(self: &Arc<Self>, from: Option<&DecoratedKey>) -> Result<SsTableScanner> {
        Ok(SsTableScanner::new(self.clone(), from.cloned()))
    }

    /// Partitions from `from` on in key order, as [`Self::scan`], except that one whose rows
    /// take more than `wide_over` bytes is only named, not read (see [`WideDeferringScan`]).
    pub fn scan_deferring_wide(
        self: &Arc<Self>,
        from: Option<&DecoratedKey>,
        wide_over: u64,
    ) -> WideDeferringScan {
        WideDeferringScan::new(SsTableScanner::new(self.clone(), from.cloned()), wide_over)
    }

    /// Every file of the SSTable, the TOC last (link it last when snapshotting, so the copy
    /// too appears whole).
    pub fn component_paths(&self) -> Vec<PathBuf> {
        Component::CONTENTS
            .into_iter()
            .chain([Component::Toc])
            .map(|c| component_path(&self.dir, self.generation, c))
            .collect()
    }

    /// Delete the files once the last reference to this SSTable is dropped.
    pub fn mark_obsolete(&self) {
        self.obsolete.store(true, Ordering::Release);
    }

    /// Mark obsolete as one of the SSTables `log` names (written before this call): the log
    /// stays until the last of them has deleted its files.
    pub fn mark_obsolete_logged(&self, log: &Arc<super::ObsoleteLog>) {
        let _ = self.obsolete_log.set(log.clone());
        self.mark_obsolete();
    }

    pub fn is_obsolete(&self) -> bool {
        self.obsolete.load(Ordering::Acquire)
    }
}

impl Drop for SsTable {
    fn drop(&mut self) {
        if !self.is_obsolete() {
            return;
        }
        // The TOC goes first: from then on the SSTable no longer exists, whatever happens.
        let mut paths = self.component_paths();
        paths.rotate_right(1);
        for path in paths {
            if let Err(e) = self.fs.remove_file(&path)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(path = %path.display(), error = %e, "could not delete an obsolete SSTable file");
                if let Some(log) = self.obsolete_log.get() {
                    log.keep();
                }
            }
        }
        // A directory already gone (a dropped table's) took the files with it.
        if let Err(e) = self.fs.sync_dir(&self.dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(dir = %self.dir.display(), error = %e, "could not sync after deleting an SSTable");
        }
    }
}
