//! khata's replica-local LSM storage engine (DESIGN.md §4).
//!
//! Synchronous, no networking, no tokio: the replica layer calls it from its own threads.
//! Every file is reached through [`khata_env::FileSystem`]; `now` is always passed in.
//!
//! - [`commitlog`]: segment files of checksummed records; periodic, group and batch sync.
//! - [`sstable`]: immutable sorted files: compressed checksummed blocks, partition index and
//!   summary, Bloom filter, row index, statistics.
//! - [`compaction`]: size-tiered, leveled and time-window strategies (pure pickers).

pub mod commitlog;
pub mod compaction;
pub mod error;
pub mod sstable;

pub use error::{Result, StorageError};
