//! The Data component as a logical byte stream cut into compressed, checksummed chunks.
//!
//! Everything above this module addresses Data by *logical* (uncompressed) offsets. On disk a
//! chunk is `kind:u8 payload crc32c:u32`, where `kind` 0 stores the bytes as they are and 1 is
//! an LZ4 block (used only when it is smaller), and the CRC32C covers `kind` and `payload`. The
//! CompressionInfo component lists where each chunk starts on disk and, from format version 2,
//! where it starts in the logical stream:
//!
//! - **Version 1** cut the stream every `chunk_length` bytes, so chunk `i` holds logical bytes
//!   `[i * chunk_length, (i + 1) * chunk_length)` (Cassandra's CompressionInfo).
//! - **Version 2** chunks have variable lengths of at most `chunk_length`: the writer cuts a
//!   chunk early, before a unit (a row block) that would not fit in the rest of it
//!   ([`ChunkWriter::cut_before`]), so that a row block of up to `block_target` bytes lies in
//!   one chunk and a point read decompresses one small chunk, as RocksDB reads one block.
//!
//! Only verified, decompressed chunks leave this module; they are shared through the
//! [`BlockCache`].

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::{BufMut, Bytes, BytesMut};
use khata_env::{ReadableFile, WritableFile};
use khata_types::codec::{CodecError, Reader};
use khata_types::schema::Compression;

use super::cache::{BlockCache, BlockKey, BlockKind};
use super::chunk_directory::ChunkDirectory;
use super::format::{FormatError, get_u8, get_u32, get_u64};
use crate::error::{Result, StorageError};

/// Limits on the chunk length a writer accepts and a reader believes.
pub const MIN_CHUNK_LENGTH_BYTES: u32 = 256;
pub const MAX_CHUNK_LENGTH_BYTES: u32 = 4 << 20;

const KIND_STORED: u8 = 0;
const KIND_LZ4: u8 = 1;
/// Bytes a chunk adds to its payload: the kind byte and the CRC32C.
const CHUNK_OVERHEAD_BYTES: u64 = 5;

/// How much a component being written may hold that the OS has not been told to write out:
/// past it, the writer syncs (Cassandra's `trickle_fsync`, 10 MiB). A flush or compaction
/// then never leaves hundreds of MiB of dirty pages behind, which a commit-log sync would
/// otherwise wait for (ext4's ordered journal writes them out before the sync returns).
pub const TRICKLE_SYNC_BYTES: u64 = 10 << 20;

/// A file being written, with its length and running whole-file CRC32C (for the TOC).
#[derive(Debug)]
pub struct TrackedFile {
    pub path: PathBuf,
    file: Arc<dyn WritableFile>,
    length: u64,
    crc32c: u32,
    /// Bytes appended since the last sync.
    unsynced: u64,
}

impl TrackedFile {
    pub fn new(path: PathBuf, file: Arc<dyn WritableFile>) -> Self {
        TrackedFile {
            path,
            file,
            length: 0,
            crc32c: 0,
            unsynced: 0,
        }
    }

    pub fn append(&mut self, bytes: &[u8]) -> Result<()> {
        self.file
            .append(bytes)
            .map_err(|e| StorageError::io(&self.path, e))?;
        self.length += bytes.len() as u64;
        self.crc32c = crc32c::crc32c_append(self.crc32c, bytes);
        self.unsynced += bytes.len() as u64;
        if self.unsynced >= TRICKLE_SYNC_BYTES {
            self.unsynced = 0;
            self.sync()?;
        }
        Ok(())
    }

    pub fn sync(&self) -> Result<()> {
        self.file
            .sync()
            .map_err(|e| StorageError::io(&self.path, e))
    }

    pub fn length(&self) -> u64 {
        self.length
    }

    pub fn crc32c(&self) -> u32 {
        self.crc32c
    }
}

/// Writes the logical stream into chunks.
#[derive(Debug)]
pub struct ChunkWriter {
    pub file: TrackedFile,
    compression: Compression,
    /// The most logical bytes a chunk holds.
    chunk_length: usize,
    /// A chunk is cut early before a unit that would take it past this many bytes.
    block_target: usize,
    pending: Vec<u8>,
    /// Disk offset of every chunk written.
    offsets: Vec<u64>,
    /// Logical offset of every chunk written.
    starts: Vec<u64>,
    logical_length: u64,
    scratch: Vec<u8>,
}

impl ChunkWriter {
    /// A writer of chunks of at most `chunk_length` bytes, cut early at unit boundaries to
    /// keep units of up to `block_target` bytes whole.
    pub fn new(
        file: TrackedFile,
        compression: Compression,
        chunk_length: u32,
        block_target: u32,
    ) -> Self {
        ChunkWriter {
            file,
            compression,
            chunk_length: chunk_length as usize,
            block_target: block_target.min(chunk_length) as usize,
            pending: Vec::with_capacity(chunk_length as usize),
            offsets: Vec::new(),
            starts: Vec::new(),
            logical_length: 0,
            scratch: Vec::new(),
        }
    }

    /// Called before appending a unit of `length` bytes that should stay in one chunk: cuts
    /// the pending chunk if the unit would take it past the block target (a unit longer than
    /// the target starts a chunk of its own and spills into the next ones).
    pub fn cut_before(&mut self, length: u64) -> Result<()> {
        let fits = (self.pending.len() as u64).saturating_add(length) <= self.block_target as u64;
        if !self.pending.is_empty() && !fits {
            self.flush_chunk()?;
        }
        Ok(())
    }

    /// The logical offset the next appended byte will have.
    pub fn position(&self) -> u64 {
        self.logical_length
    }

    /// Bytes on disk so far plus bytes waiting for their chunk to fill.
    pub fn approximate_size_bytes(&self) -> u64 {
        self.file.length() + self.pending.len() as u64
    }

    pub fn append(&mut self, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            let room = self.chunk_length - self.pending.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.pending.extend_from_slice(now);
            self.logical_length += now.len() as u64;
            bytes = later;
            if self.pending.len() == self.chunk_length {
                self.flush_chunk()?;
            }
        }
        Ok(())
    }

    fn flush_chunk(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.scratch.clear();
        self.scratch.put_u8(KIND_STORED);
        if self.compression == Compression::Lz4 {
            let max = lz4_flex::block::get_maximum_output_size(self.pending.len());
            self.scratch.resize(1 + max, 0);
            match lz4_flex::block::compress_into(&self.pending, &mut self.scratch[1..]) {
                Ok(n) if n < self.pending.len() => {
                    self.scratch.truncate(1 + n);
                    self.scratch[0] = KIND_LZ4;
                }
                _ => self.scratch.truncate(1),
            }
        }
        if self.scratch[0] == KIND_STORED {
            self.scratch.extend_from_slice(&self.pending);
        }
        let crc = crc32c::crc32c(&self.scratch);
        self.scratch.put_u32_le(crc);
        self.offsets.push(self.file.length());
        self.starts
            .push(self.logical_length - self.pending.len() as u64);
        self.file.append(&self.scratch)?;
        self.pending.clear();
        Ok(())
    }

    /// Flush the last chunk and return the CompressionInfo component (version 2).
    pub fn finish(&mut self) -> Result<Vec<u8>> {
        self.flush_chunk()?;
        let mut out = Vec::with_capacity(21 + 16 * self.offsets.len());
        out.put_u8(match self.compression {
            Compression::None => 0,
            Compression::Lz4 => 1,
        });
        out.put_u32_le(self.chunk_length as u32);
        out.put_u64_le(self.logical_length);
        out.put_u64_le(self.offsets.len() as u64);
        for (offset, start) in self.offsets.iter().zip(&self.starts) {
            out.put_u64_le(*offset);
            out.put_u64_le(*start);
        }
        Ok(out)
    }
}

/// The reading side: a Data file and its chunk table.
#[derive(Debug)]
pub struct DataFile {
    pub path: PathBuf,
    file: Arc<dyn ReadableFile>,
    logical_length: u64,
    /// Disk offset of every chunk, then the file length.
    bounds: Vec<u64>,
    /// Logical offset of every chunk, then the logical length.
    starts: Vec<u64>,
    /// Finds the chunk of a logical offset without a binary search over `starts`.
    directory: ChunkDirectory,
    cache: Arc<BlockCache>,
    cache_id: u64,
    chunk_reads: AtomicU64,
}

/// The most compressed bytes of one chunk read into a thread's [`READ_BUFFER`]; a longer
/// chunk (only with a chunk length configured far above the default) gets a buffer of its own.
const MAX_READ_BUFFER_BYTES: usize = 64 << 10;

thread_local! {
    /// Each thread's buffer for the bytes of a chunk read from disk, which are verified and
    /// decompressed but never kept: a block-cache miss then neither allocates nor zeroes a
    /// buffer for them. At most [`MAX_READ_BUFFER_BYTES`] a thread.
    static READ_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The last chunk a reader used, kept so that a run of small reads does not go back to the
/// cache (or the disk, when not caching) for every one.
pub type ChunkMemo = Option<(u64, Bytes)>;

/// The chunk table of a CompressionInfo component: disk offsets, logical offsets, length.
type ChunkTable = (Vec<u64>, Vec<u64>, u64);

/// Parse CompressionInfo (`version` 1: fixed-length chunks; 2: variable, with logical starts)
/// against a Data file of `data_length` bytes.
fn parse_info(r: &mut Reader, version: u32, data_length: u64) -> Result<ChunkTable, CodecError> {
    let compression = get_u8(r)?;
    if compression > 1 {
        return Err(CodecError::Invalid("unknown compression"));
    }
    let chunk_length = get_u32(r)?;
    if !(MIN_CHUNK_LENGTH_BYTES..=MAX_CHUNK_LENGTH_BYTES).contains(&chunk_length) {
        return Err(CodecError::Invalid("chunk length out of range"));
    }
    let chunk_length = u64::from(chunk_length);
    let logical_length = get_u64(r)?;
    let count = get_u64(r)?;
    let entry_bytes: u64 = if version == 1 { 8 } else { 16 };
    let count_ok = if version == 1 {
        count == logical_length.div_ceil(chunk_length)
    } else {
        (count == 0) == (logical_length == 0)
            && count <= logical_length
            && count >= logical_length.div_ceil(chunk_length)
    };
    if !count_ok || count.saturating_mul(entry_bytes) != r.remaining() as u64 {
        return Err(CodecError::Invalid(
            "chunk count does not match the lengths",
        ));
    }
    let mut bounds: Vec<u64> = Vec::with_capacity(count as usize + 1);
    let mut starts: Vec<u64> = Vec::with_capacity(count as usize + 1);
    for i in 0..count {
        let offset = get_u64(r)?;
        let ok = match bounds.last() {
            None => offset == 0,
            Some(&prev) => offset > prev.saturating_add(CHUNK_OVERHEAD_BYTES),
        };
        if !ok {
            return Err(CodecError::Invalid("chunk offsets out of order"));
        }
        bounds.push(offset);
        let start = if version == 1 {
            i * chunk_length
        } else {
            get_u64(r)?
        };
        // Every chunk holds 1..=chunk_length logical bytes.
        let ok = match starts.last() {
            None => start == 0,
            Some(&prev) => start > prev && start - prev <= chunk_length,
        };
        if !ok || start >= logical_length {
            return Err(CodecError::Invalid("chunk logical offsets out of order"));
        }
        starts.push(start);
    }
    let last_ok = bounds
        .last()
        .is_none_or(|&l| data_length > l.saturating_add(CHUNK_OVERHEAD_BYTES));
    let tail_ok = starts
        .last()
        .is_none_or(|&s| logical_length - s <= chunk_length);
    if !last_ok || !tail_ok || (bounds.is_empty() && data_length != 0) {
        return Err(CodecError::Invalid(
            "chunk table does not match the Data length",
        ));
    }
    bounds.push(data_length);
    starts.push(logical_length);
    Ok((bounds, starts, logical_length))
}

impl DataFile {
    /// Open with the CompressionInfo component `info` (already checked against the TOC) of an
    /// SSTable of format `version`.
    pub fn open(
        path: &Path,
        file: Arc<dyn ReadableFile>,
        info: Bytes,
        version: u32,
        cache: Arc<BlockCache>,
        cache_id: u64,
    ) -> std::result::Result<Self, FormatError> {
        let data_length = file.len();
        let mut r = Reader::new(info);
        let (bounds, starts, logical_length) =
            parse_info(&mut r, version, data_length).map_err(|e| FormatError::codec(0, &r, e))?;
        let directory = ChunkDirectory::new(&starts);
        Ok(DataFile {
            path: path.to_path_buf(),
            file,
            logical_length,
            bounds,
            starts,
            directory,
            cache,
            cache_id,
            chunk_reads: AtomicU64::new(0),
        })
    }

    /// Length of the logical stream.
    pub fn logical_length(&self) -> u64 {
        self.logical_length
    }

    /// Length of the Data file on disk.
    pub fn file_length(&self) -> u64 {
        self.bounds.last().copied().unwrap_or(0)
    }

    /// Bytes the chunk table and its directory hold in memory (at most 20 per chunk).
    pub fn chunk_table_bytes(&self) -> usize {
        (self.bounds.len() + self.starts.len()) * std::mem::size_of::<u64>()
            + self.directory.size_bytes()
    }

    /// Chunks read from disk (cache misses) so far.
    pub fn chunk_reads(&self) -> u64 {
        self.chunk_reads.load(Ordering::Relaxed)
    }

    /// The chunk holding logical offset `offset` (< the logical length). `near` is a chunk
    /// the caller used last (the memo's): reads mostly stay in it or move to a neighbour (a
    /// reversed read walks blocks backwards), which is checked before the [`ChunkDirectory`]
    /// (a binary search over every chunk would be tens of thousands in a large SSTable, a
    /// cache miss a step).
    fn chunk_of(&self, offset: u64, near: Option<u64>) -> u64 {
        if let Some(near) = near {
            for candidate in [near, near.wrapping_sub(1), near + 1] {
                let (start, end) = self.extent(candidate);
                if start <= offset && offset < end {
                    return candidate;
                }
            }
        }
        self.directory.chunk_of(&self.starts, offset)
    }

    /// Logical extent `[start, end)` of chunk `index`.
    fn extent(&self, index: u64) -> (u64, u64) {
        let Ok(i) = usize::try_from(index) else {
            return (self.logical_length, self.logical_length);
        };
        match (
            self.starts.get(i),
            i.checked_add(1).and_then(|j| self.starts.get(j)),
        ) {
            (Some(&s), Some(&e)) => (s, e),
            _ => (self.logical_length, self.logical_length),
        }
    }

    /// Logical bytes `[offset, offset + length)` as a slice of one chunk if they lie in one
    /// (`None` if they span chunks or fall outside the stream; use [`DataFile::read`]). A
    /// chunk read from disk is admitted to the cache if `fill_cache`.
    pub fn read_in_one_chunk(
        &self,
        offset: u64,
        length: u64,
        memo: &mut ChunkMemo,
        fill_cache: bool,
    ) -> Result<Option<Bytes>> {
        if length == 0 || offset >= self.logical_length {
            return Ok(None);
        }
        let index = self.chunk_of(offset, memo.as_ref().map(|(i, _)| *i));
        let (start, end) = self.extent(index);
        if offset.saturating_add(length) > end {
            return Ok(None);
        }
        let chunk = self.memo_chunk(index, memo, fill_cache)?;
        let from = (offset - start) as usize;
        Ok(Some(chunk.slice(from..from + length as usize)))
    }

    /// Chunk `index`, decompressed and verified, through the cache.
    fn chunk(&self, index: u64, fill_cache: bool) -> Result<Bytes> {
        let key = BlockKey {
            sstable: self.cache_id,
            kind: BlockKind::DataChunk,
            position: index,
        };
        if let Some(bytes) = self.cache.get(&key) {
            return Ok(bytes);
        }
        let chunk = self.read_chunk(index)?;
        if fill_cache {
            self.cache.insert(key, chunk.clone());
        }
        Ok(chunk)
    }

    fn read_chunk(&self, index: u64) -> Result<Bytes> {
        let (Some(&start), Some(&end)) = (
            self.bounds.get(index as usize),
            self.bounds.get(index as usize + 1),
        ) else {
            return Err(StorageError::corrupt(
                &self.path,
                0,
                format!("no chunk {index}"),
            ));
        };
        let corrupt = |detail: &str| StorageError::corrupt(&self.path, start, detail);
        let disk_length = end - start;
        let (logical_start, logical_end) = self.extent(index);
        let expected = logical_end - logical_start;
        if disk_length > expected + CHUNK_OVERHEAD_BYTES {
            return Err(corrupt("chunk longer than it can be"));
        }
        self.chunk_reads.fetch_add(1, Ordering::Relaxed);
        let length = disk_length as usize;
        let decode = |raw: &[u8]| self.decode_chunk(raw, start, expected);
        if length > MAX_READ_BUFFER_BYTES {
            let raw = self
                .file
                .read_vec(start, length)
                .map_err(|e| StorageError::io(&self.path, e))?;
            return decode(&raw);
        }
        READ_BUFFER.with_borrow_mut(|buffer| {
            if buffer.len() < length {
                buffer.resize(length, 0);
            }
            let raw = &mut buffer[..length];
            self.file
                .read_exact_at(start, raw)
                .map_err(|e| StorageError::io(&self.path, e))?;
            decode(raw)
        })
    }

    /// Verify and decompress chunk bytes `raw` read from disk offset `start`, which decompress
    /// to `expected` bytes.
    fn decode_chunk(&self, raw: &[u8], start: u64, expected: u64) -> Result<Bytes> {
        let corrupt = |detail: &str| StorageError::corrupt(&self.path, start, detail);
        if raw.len() < CHUNK_OVERHEAD_BYTES as usize {
            return Err(corrupt("chunk shorter than its framing"));
        }
        let (body, trailer) = raw.split_at(raw.len() - 4);
        let mut stored = [0u8; 4];
        stored.copy_from_slice(trailer);
        if crc32c::crc32c(body) != u32::from_le_bytes(stored) {
            return Err(corrupt("chunk checksum mismatch"));
        }
        let Some((&kind, payload)) = body.split_first() else {
            return Err(corrupt("empty chunk"));
        };
        match kind {
            KIND_STORED if payload.len() as u64 == expected => Ok(Bytes::copy_from_slice(payload)),
            KIND_LZ4 => {
                let mut out = vec![0u8; expected as usize];
                match lz4_flex::block::decompress_into(payload, &mut out) {
                    Ok(n) if n as u64 == expected => Ok(Bytes::from(out)),
                    _ => Err(corrupt("chunk does not decompress to its length")),
                }
            }
            _ => Err(corrupt("bad chunk kind or length")),
        }
    }

    /// Logical bytes `[offset, offset + length)`. Reads that stay inside one chunk share it.
    pub fn read(
        &self,
        offset: u64,
        length: u64,
        memo: &mut ChunkMemo,
        fill_cache: bool,
    ) -> Result<Bytes> {
        let end = offset
            .checked_add(length)
            .filter(|&e| e <= self.logical_length);
        let Some(end) = end else {
            return Err(StorageError::corrupt(
                &self.path,
                offset,
                format!("logical range of {length} bytes runs past the end of Data"),
            ));
        };
        if length == 0 {
            return Ok(Bytes::new());
        }
        // The memoised chunk first: runs of small reads mostly stay in it.
        if let Some((index, chunk)) = memo.as_ref() {
            let (start, chunk_end) = self.extent(*index);
            if start <= offset && end <= chunk_end {
                let from = (offset - start) as usize;
                return Ok(chunk.slice(from..from + length as usize));
            }
        }
        let near = memo.as_ref().map(|(i, _)| *i);
        let first = self.chunk_of(offset, near);
        let (_, first_end) = self.extent(first);
        let last = if end <= first_end {
            first
        } else {
            self.chunk_of(end - 1, Some(first))
        };
        if first == last {
            let (start, _) = self.extent(first);
            let chunk = self.memo_chunk(first, memo, fill_cache)?;
            let from = (offset - start) as usize;
            return Ok(chunk.slice(from..from + length as usize));
        }
        let mut out = BytesMut::with_capacity(length as usize);
        for index in first..=last {
            let (chunk_start, _) = self.extent(index);
            let chunk = self.memo_chunk(index, memo, fill_cache)?;
            let from = offset.saturating_sub(chunk_start) as usize;
            let to = ((end - chunk_start) as usize).min(chunk.len());
            out.extend_from_slice(&chunk[from..to]);
        }
        Ok(out.freeze())
    }

    /// Chunk `index`, kept in `memo` and lent from it (no reference count taken for a read
    /// that only slices it).
    fn memo_chunk<'m>(
        &self,
        index: u64,
        memo: &'m mut ChunkMemo,
        fill_cache: bool,
    ) -> Result<&'m Bytes> {
        if !matches!(memo, Some((i, _)) if *i == index) {
            let bytes = self.chunk(index, fill_cache)?;
            *memo = Some((index, bytes));
        }
        Ok(&memo.as_ref().expect("set above").1)
    }
}
