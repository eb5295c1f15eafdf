//! khata's replica-local LSM storage engine (DESIGN.md §4).
//!
//! Synchronous, no networking, no tokio: the replica layer calls it from its own threads.
//! Every file is reached through [`khata_env::FileSystem`]; `now` is always passed in.
//!
//! - [`commitlog`]: segment files of checksummed records; periodic, group and batch sync.
//! - [`sstable`]: immutable sorted files: compressed checksummed blocks, partition index and
//!   summary, Bloom filter, row index, statistics.
//! - [`compaction`]: size-tiered, leveled and time-window strategies (pure pickers), and
//!   [`compactor`], which runs what they pick; [`purge`] decides which tombstones may go.
//! - [`memtable`]: concurrent sorted maps of partitions.
//! - [`read`]: the merge of memtables and SSTables into one reconciled answer.
//! - [`table`]: one table's memtables and SSTables; [`engine`]: tables, the write path,
//!   flushes, background compaction, snapshots, poisoning.
//! - [`mutation`]: mutations and their commit-log record encoding; [`table_spec`]: what the
//!   engine keeps about each table.

pub mod commitlog;
pub mod compaction;
pub mod compactor;
pub mod engine;
pub mod error;
pub mod memtable;
pub mod mutation;
pub mod purge;
pub mod read;
pub mod sstable;
pub mod table;
pub mod table_spec;

pub use engine::{Engine, EngineConfig, SsTableTask, TableStats};
pub use error::{Result, StorageError};
pub use mutation::Mutation;
pub use read::{ReadLimits, ReadResult};
pub use table::{ScanPosition, ScanResult, TableHistogramsSnapshot, WidePartitions};
pub use table_spec::TableSpec;
