//! Writing an SSTable: partitions stream in, in key order; the SSTable appears whole or not at
//! all.
//!
//! Memory is bounded by one serialized partition plus one chunk, one index page, the Bloom
//! filter, the chunk table and the summary (one entry per index page). Data and Index are
//! written as partitions arrive; the small components are written by [`SsTableWriter::finish`].
//!
//! A partition too large to hold (compaction of a wide partition) is written row by row
//! instead ([`SsTableWriter::start_partition`]): its header, which gives the length of its rows,
//! comes first in Data, so its rows are encoded into blocks as they arrive and, past
//! [`WriterOptions::row_buffer_bytes`], kept in a scratch file (`khata-G-Rows.db.tmp`) until
//! the partition is finished and they are copied after the header. Memory is then one block,
//! at most `row_buffer_bytes` of blocks, and the partition's row index (an entry with the
//! first and last clustering key of each block, encoded as the block finishes; it follows the
//! rows in Data).
//!
//! Atomic appearance (STYLE.md rule 6), in this order:
//! 1. every component is written under its `.tmp` name and synced;
//! 2. each is renamed to its final name and the directory is synced, so that all of them are
//!    durable under their final names before
//! 3. the TOC is written (tmp, sync, rename, directory sync): its rename is the instant the
//!    SSTable exists. A crash before it leaves files without a TOC, which
//!    [`super::SsTable::list_generations`] ignores and [`super::SsTable::remove_incomplete`]
//!    deletes.
//!
//! A writer dropped without `finish` (or whose `finish` failed before the TOC appeared)
//! removes its files.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use khata_env::FileSystem;
use khata_env::fs::{tmp_path, write_file_durably};
use khata_types::schema::Compression;
use khata_types::token::DecoratedKey;
use khata_types::{Partition, Row};

use super::bloom::BloomFilter;
use super::cache::BlockCache;
use super::chunk::{ChunkWriter, MAX_CHUNK_LENGTH_BYTES, MIN_CHUNK_LENGTH_BYTES, TrackedFile};
use super::format::{Component, ComponentDigest, FORMAT_VERSION, Toc, component_path};
use super::index::{INLINE_ROW_INDEX_MAX_BYTES, IndexEntry, IndexWriter};
use super::layout::{PartitionEncoder, PartitionRef, StreamedRows};
use super::reader::SsTable;
use super::stats::SsTableStats;
use crate::error::{Result, StorageError};

/// How an SSTable is written.
#[derive(Clone, Debug, PartialEq)]
pub struct WriterOptions {
    /// Compression of Data chunks (the table's `compression` option).
    pub compression: Compression,
    /// Uncompressed length of a Data chunk (Cassandra's `chunk_length_in_kb`); 16 KiB.
    pub chunk_length_bytes: u32,
    /// The size of a data block; 4 KiB. A partition's rows are cut into blocks of at most
    /// this many bytes (a longer row gets a block of its own), listed by the partition's row
    /// index when there are two or more, and Data chunks are cut early so that a block lies in
    /// one chunk: a point read decompresses about this many bytes. (Named after Cassandra's
    /// `column_index_size`, which it plays the part of.)
    pub row_index_interval_bytes: u32,
    /// Wanted false-positive chance of the Bloom filter; 0.01.
    pub bloom_fp_chance: f64,
    /// Partitions the Bloom filter is sized for (the filter keeps `bloom_fp_chance` up to
    /// this many; more raise it).
    pub expected_partitions: u64,
    /// Compaction level recorded in the statistics.
    pub level: u32,
    /// Encoded rows of a partition written row by row ([`SsTableWriter::start_partition`])
    /// held in memory before they go to the scratch file; 1 MiB.
    pub row_buffer_bytes: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            compression: Compression::Lz4,
            chunk_length_bytes: 16 * 1024,
            row_index_interval_bytes: 4 * 1024,
            bloom_fp_chance: 0.01,
            expected_partitions: 1024,
            level: 0,
            row_buffer_bytes: 1 << 20,
        }
    }
}

/// Writes one SSTable, partition by partition, in [`DecoratedKey`] order.
#[derive(Debug)]
pub struct SsTableWriter {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    generation: u64,
    options: WriterOptions,
    data: ChunkWriter,
    index: IndexWriter,
    bloom: BloomFilter,
    stats: SsTableStats,
    last_key: Option<DecoratedKey>,
    /// The buffers partitions are encoded in, reused from one to the next.
    encoder: PartitionEncoder,
    /// The partition being written row by row, if one is.
    open: Option<OpenPartition>,
    /// Set once the TOC exists; until then `Drop` removes the files.
    complete: bool,
}

/// A partition being written row by row.
#[derive(Debug)]
struct OpenPartition {
    key: DecoratedKey,
    /// The partition-level parts: deletion, static row, range tombstones.
    level: Partition,
    rows: StreamedRows,
    last: Option<Bytes>,
    /// The scratch file, once rows have been drained to it.
    spill: Option<TrackedFile>,
}

fn create_tmp(
    fs: &dyn FileSystem,
    dir: &Path,
    generation: u64,
    component: Component,
) -> Result<TrackedFile> {
    let path = tmp_path(&component_path(dir, generation, component));
    let file = fs.create(&path).map_err(|e| StorageError::io(&path, e))?;
    Ok(TrackedFile::new(path, file))
}

impl SsTableWriter {
    /// Start writing generation `generation` in `dir` (created if missing).
    pub fn create(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        generation: u64,
        options: WriterOptions,
    ) -> Result<Self> {
        if !(MIN_CHUNK_LENGTH_BYTES..=MAX_CHUNK_LENGTH_BYTES).contains(&options.chunk_length_bytes)
        {
            return Err(StorageError::InvalidArgument(format!(
                "chunk_length_bytes {} outside {MIN_CHUNK_LENGTH_BYTES}..={MAX_CHUNK_LENGTH_BYTES}",
                options.chunk_length_bytes
            )));
        }
        if options.row_index_interval_bytes == 0 {
            return Err(StorageError::InvalidArgument(
                "row_index_interval_bytes is 0".into(),
            ));
        }
        fs.create_dir_all(dir)
            .map_err(|e| StorageError::io(dir, e))?;
        let toc = component_path(dir, generation, Component::Toc);
        if fs.exists(&toc) {
            return Err(StorageError::InvalidArgument(format!(
                "{} already exists",
                toc.display()
            )));
        }
        let data = create_tmp(&*fs, dir, generation, Component::Data)?;
        let index = create_tmp(&*fs, dir, generation, Component::Index)?;
        Ok(SsTableWriter {
            dir: dir.to_path_buf(),
            generation,
            data: ChunkWriter::new(
                data,
                options.compression,
                options.chunk_length_bytes,
                options.row_index_interval_bytes,
            ),
            index: IndexWriter::new(index),
            bloom: BloomFilter::new(options.expected_partitions, options.bloom_fp_chance),
            stats: SsTableStats {
                level: options.level,
                ..SsTableStats::default()
            },
            options,
            last_key: None,
            encoder: PartitionEncoder::default(),
            open: None,
            complete: false,
            fs,
        })
    }

    /// Append a partition. Keys must be strictly increasing; an empty partition is skipped.
    pub fn append(&mut self, key: &DecoratedKey, partition: &Partition) -> Result<()> {
        self.append_ref(key, PartitionRef::Whole(partition))
    }

    /// [`SsTableWriter::append`] of a partition that may be lent as its one row (a flush).
    pub fn append_ref(&mut self, key: &DecoratedKey, partition: PartitionRef<'_>) -> Result<()> {
        self.next_key(key)?;
        if partition.is_empty() {
            return Ok(());
        }
        let interval = u64::from(self.options.row_index_interval_bytes);
        let encoded = self.encoder.encode(&key.key, partition, interval);
        let header_length = encoded.header_length as usize;
        let rows_end = header_length + encoded.rows_length as usize;
        let row_index = (encoded.row_index_length > 0
            && encoded.row_index_length <= INLINE_ROW_INDEX_MAX_BYTES)
            .then(|| Bytes::copy_from_slice(&encoded.bytes[rows_end..]));
        let entry = IndexEntry {
            key: key.clone(),
            position: self.data.position(),
            header_length: encoded.header_length,
            rows_length: encoded.rows_length,
            row_index_length: encoded.row_index_length,
            plain_header: encoded.plain_header,
            row_index,
        };
        // Each block goes whole into one chunk when it fits; the header travels with the
        // first block.
        let (mut at, mut end) = (0, header_length);
        for length in &encoded.block_lengths {
            end += *length as usize;
            self.data.cut_before((end - at) as u64)?;
            self.data.append(&encoded.bytes[at..end])?;
            at = end;
        }
        self.data.append(&encoded.bytes[at..])?;
        self.index.add(&entry)?;
        self.bloom.insert(&key.key);
        self.stats
            .add_partition(key, partition, encoded.bytes.len() as u64);
        Ok(())
    }

    /// Check that `key` may come next (after every key so far, with no partition open) and
    /// note it as the last.
    fn next_key(&mut self, key: &DecoratedKey) -> Result<()> {
        if let Some(open) = &self.open {
            return Err(StorageError::InvalidArgument(format!(
                "partition {:?} of SSTable {} is still open",
                open.key, self.generation
            )));
        }
        if let Some(last) = &self.last_key
            && key <= last
        {
            return Err(StorageError::InvalidArgument(format!(
                "partition keys out of order in SSTable {}: {key:?} after {last:?}",
                self.generation
            )));
        }
        self.last_key = Some(key.clone());
        Ok(())
    }

    /// Start a partition whose rows come one at a time ([`Self::append_row`]) until
    /// [`Self::finish_partition`]: for one too large to hold in memory. `level` gives its
    /// deletion, static row and range tombstones; its rows must be empty. Keys must be strictly
    /// increasing, as for [`Self::append`].
    pub fn start_partition(&mut self, key: &DecoratedKey, level: Partition) -> Result<()> {
        if !level.rows.is_empty() {
            return Err(StorageError::InvalidArgument(
                "a partition started row by row comes with no rows".into(),
            ));
        }
        self.next_key(key)?;
        self.open = Some(OpenPartition {
            key: key.clone(),
            level,
            rows: StreamedRows::default(),
            last: None,
            spill: None,
        });
        Ok(())
    }

    /// Append the next row (clustering keys strictly increasing) of the partition started by
    /// [`Self::start_partition`]. The row should not be empty.
    pub fn append_row(&mut self, clustering: &Bytes, row: &Row) -> Result<()> {
        let interval = u64::from(self.options.row_index_interval_bytes);
        let Some(open) = self.open.as_mut() else {
            return Err(StorageError::InvalidArgument(format!(
                "a row for SSTable {} with no partition started",
                self.generation
            )));
        };
        if open.last.as_ref().is_some_and(|last| clustering <= last) {
            return Err(StorageError::InvalidArgument(format!(
                "rows out of order in partition {:?} of SSTable {}",
                open.key, self.generation
            )));
        }
        open.last = Some(clustering.clone());
        open.rows.push(clustering, row, interval);
        self.stats.add_row(clustering, row);
        if open.rows.finished.len() >= self.options.row_buffer_bytes {
            let spill = match &mut open.spill {
                Some(f) => f,
                None => open.spill.insert(create_tmp(
                    &*self.fs,
                    &self.dir,
                    self.generation,
                    Component::Rows,
                )?),
            };
            spill.append(&open.rows.finished)?;
            open.rows.drained();
        }
        Ok(())
    }

    /// Write out the partition started by [`Self::start_partition`]: header, rows, row
    /// index. A partition with no rows and nothing else is skipped, as by [`Self::append`].
    pub fn finish_partition(&mut self) -> Result<()> {
        let Some(mut open) = self.open.take() else {
            return Err(StorageError::InvalidArgument(format!(
                "no partition of SSTable {} to finish",
                self.generation
            )));
        };
        let result = self.write_open(&mut open);
        if let Some(spill) = open.spill {
            self.fs
                .remove_file(&spill.path)
                .map_err(|e| StorageError::io(&spill.path, e))?;
        }
        result
    }

    fn write_open(&mut self, open: &mut OpenPartition) -> Result<()> {
        open.rows.finish();
        if open.rows.row_count() == 0 && open.level.is_empty() {
            return Ok(());
        }
        let row_index = open.rows.row_index();
        let (header, plain_header) =
            open.rows
                .header(&open.key.key, &open.level, row_index.len() as u64);
        let rows_length = open.rows.rows_length();
        let drained = rows_length - open.rows.finished.len() as u64;
        let entry = IndexEntry {
            key: open.key.clone(),
            position: self.data.position(),
            header_length: header.len() as u64,
            rows_length,
            row_index_length: row_index.len() as u64,
            plain_header,
            row_index: (!row_index.is_empty()
                && row_index.len() as u64 <= INLINE_ROW_INDEX_MAX_BYTES)
                .then(|| Bytes::copy_from_slice(&row_index)),
        };
        let spilled = match &open.spill {
            Some(spill) => Some(
                self.fs
                    .open_read(&spill.path)
                    .map_err(|e| StorageError::io(&spill.path, e))?,
            ),
            None => None,
        };
        // As for a whole partition: each block whole in one chunk when it fits, the header
        // with the first.
        let mut header_left = Some(header.as_slice());
        let mut block_bytes = Vec::new();
        for &(offset, length) in open.rows.extents() {
            let bytes: &[u8] = if offset < drained {
                let (Some(file), Some(spill)) = (&spilled, &open.spill) else {
                    return Err(StorageError::InvalidArgument(
                        "drained rows with no scratch file".into(),
                    ));
                };
                block_bytes.resize(length as usize, 0);
                file.read_exact_at(offset, &mut block_bytes)
                    .map_err(|e| StorageError::io(&spill.path, e))?;
                &block_bytes
            } else {
                let at = (offset - drained) as usize;
                &open.rows.finished[at..at + length as usize]
            };
            let with_header = header_left.map_or(0, <[u8]>::len) as u64;
            self.data.cut_before(length + with_header)?;
            if let Some(h) = header_left.take() {
                self.data.append(h)?;
            }
            self.data.append(bytes)?;
        }
        if let Some(h) = header_left.take() {
            self.data.append(h)?;
        }
        self.data.append(&row_index)?;
        self.index.add(&entry)?;
        self.bloom.insert(&open.key.key);
        let size = entry.header_length + rows_length + entry.row_index_length;
        self.stats
            .add_partition(&open.key, PartitionRef::Whole(&open.level), size);
        Ok(())
    }

    /// Approximate bytes the SSTable occupies so far (Data and Index), to cut compaction
    /// outputs at a size.
    pub fn bytes_written(&self) -> u64 {
        self.data.approximate_size_bytes() + self.index.file.length()
    }

    /// Partitions appended so far (empty ones not counted).
    pub fn partition_count(&self) -> u64 {
        self.stats.partition_count
    }

    /// Make the SSTable durable and visible, and open it with `cache`.
    pub fn finish(mut self, cache: Arc<BlockCache>) -> Result<Arc<SsTable>> {
        if self.open.is_some() {
            self.finish_partition()?;
        }
        self.write_components()?;
        SsTable::open(self.fs.clone(), &self.dir, self.generation, cache)
    }

    fn write_components(&mut self) -> Result<()> {
        let compression_info = self.data.finish()?;
        let summary = self.index.finish()?;
        self.stats.data_size_bytes = self.data.file.length();
        self.stats.uncompressed_data_size_bytes = self.data.position();
        let mut filter = Vec::with_capacity(self.bloom.size_bytes() + 16);
        self.bloom.encode(&mut filter);
        let statistics = self.stats.encode();

        let mut written = Vec::with_capacity(Component::CONTENTS.len());
        for (component, bytes) in [
            (Component::CompressionInfo, compression_info),
            (Component::Summary, summary),
            (Component::Filter, filter),
            (Component::Statistics, statistics),
        ] {
            let mut file = create_tmp(&*self.fs, &self.dir, self.generation, component)?;
            file.append(&bytes)?;
            written.push((component, file));
        }
        // Step 1: every component durable under its temporary name.
        let files = [
            (Component::Data, &self.data.file),
            (Component::Index, &self.index.file),
        ]
        .into_iter()
        .chain(written.iter().map(|(c, f)| (*c, f)));
        let mut digests = Vec::with_capacity(Component::CONTENTS.len());
        for (component, file) in files {
            file.sync()?;
            digests.push(ComponentDigest {
                component,
                length: file.length(),
                crc32c: file.crc32c(),
            });
        }
        digests.sort_by_key(|d| Component::CONTENTS.iter().position(|c| *c == d.component));
        // Step 2: final names, made durable before the TOC can point at them.
        for component in Component::CONTENTS {
            let path = component_path(&self.dir, self.generation, component);
            let tmp = tmp_path(&path);
            self.fs
                .rename(&tmp, &path)
                .map_err(|e| StorageError::io(&tmp, e))?;
        }
        self.fs
            .sync_dir(&self.dir)
            .map_err(|e| StorageError::io(&self.dir, e))?;
        // Step 3: the TOC; its rename makes the SSTable exist.
        let toc = Toc {
            version: FORMAT_VERSION,
            generation: self.generation,
            components: digests,
        };
        let toc_path = component_path(&self.dir, self.generation, Component::Toc);
        write_file_durably(&*self.fs, &toc_path, &toc.encode())
            .map_err(|e| StorageError::io(&toc_path, e))?;
        self.complete = true;
        Ok(())
    }
}

impl Drop for SsTableWriter {
    fn drop(&mut self) {
        if self.complete {
            return;
        }
        for component in Component::CONTENTS
            .into_iter()
            .chain([Component::Toc, Component::Rows])
        {
            let path = component_path(&self.dir, self.generation, component);
            for p in [tmp_path(&path), path] {
                if self.fs.exists(&p)
                    && let Err(e) = self.fs.remove_file(&p)
                {
                    tracing::warn!(path = %p.display(), error = %e, "could not remove an unfinished SSTable file");
                }
            }
        }
    }
}
