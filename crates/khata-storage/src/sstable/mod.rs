//! SSTables: immutable sorted files of partitions (DESIGN.md §4).
//!
//! An SSTable holds partitions in [`DecoratedKey`](khata_types::token::DecoratedKey) order
//! (token, then key bytes). It is written once by an [`SsTableWriter`], appears atomically, and
//! is then read by any number of threads through a shared [`SsTable`]. The byte format, with
//! its version number, is written down in `docs/format/sstable.md`; in short, generation `G`
//! is the files `khata-G-<Component>.db`:
//!
//! - **Data**: the partitions as one logical byte stream cut into chunks (about 4 KiB, at
//!   row-block boundaries), each LZ4-compressed (or stored) with a CRC32C (`chunk.rs`); inside
//!   the stream each partition is a header, its rows, and for large partitions a row index
//!   (`layout.rs`).
//! - **CompressionInfo**: where each chunk starts on disk and in the logical stream; a
//!   directory built at open maps a logical offset to its chunk (`chunk_directory.rs`).
//! - **Index** / **Summary**: the partition index in checksummed pages, and the first key of
//!   each page, kept in memory (`index.rs`).
//! - **Filter**: a Bloom filter on partition key bytes with our own hash (`bloom.rs`,
//!   `hash.rs`).
//! - **Statistics**: timestamps, deletion and expiry times, tombstone counts, sizes (`stats.rs`).
//! - **TOC**: format version, and each component's length and CRC32C; written last
//!   (`format.rs`).
//!
//! Invariants:
//! - Nothing read from a file is trusted: every chunk, index page and component is verified
//!   against a checksum before it is decoded, decoding checks structure, and any failure is
//!   [`StorageError::Corrupt`](crate::StorageError::Corrupt) naming the file and offset (logical
//!   offsets inside Data), never a panic and never wrong data.
//! - An SSTable exists exactly when its TOC does, and the TOC appears only after every other
//!   component is durable under its final name.
//! - All file access goes through [`khata_env::FileSystem`].
//!
//! What this module does not do: merge SSTables, apply deletions or TTLs for a read, or decide
//! what to compact; it stores and returns partitions exactly as written (in the canonical form
//! of `khata_types`).

mod bloom;
mod cache;
mod chunk;
mod chunk_directory;
mod format;
mod hash;
mod index;
mod layout;
mod obsolete;
mod partition_reader;
mod reader;
mod row_index;
mod scan;
mod slice;
mod stats;
mod writer;

pub use cache::{BlockCache, BlockCacheStats};
pub use format::FORMAT_VERSION;
pub use layout::PartitionRef;
pub use obsolete::{ObsoleteLog, finish_pending as finish_obsolete};
pub use partition_reader::{
    BorrowedPartition, BorrowedRows, PartitionReader, check_ranges, validate_ranges,
};
pub use reader::SsTable;
pub use scan::{SsTableScanner, WideDeferringScan};
pub use stats::{HISTOGRAM_BUCKETS, LARGEST_PARTITIONS, SsTableStats};
pub use writer::{SsTableWriter, WriterOptions};
