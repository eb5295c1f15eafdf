//! khata's vocabulary: the types every layer speaks, with no I/O.
//!
//! - [`schema`]: keyspaces, tables, columns and CQL types.
//! - [`cell`], [`row`], [`partition`]: the data model of DESIGN.md §3: cells with write
//!   timestamps, TTLs and tombstones; rows with primary-key liveness and deletions; partitions
//!   with partition deletions, range tombstones and a static row. Reconciliation of two versions
//!   of any of these is a *join* (commutative, associative, idempotent): replicas converge
//!   whatever order writes reach them in.
//! - [`clustering`]: the order-preserving byte encoding of clustering keys, so that the storage
//!   engine orders rows and slices with `memcmp`.
//! - [`token`]: Cassandra's Murmur3 partitioner, bit for bit.
//! - [`codec`]: the compact binary encoding of partitions used by the commit log, SSTables
//!   and (later) internode messages.
//! - [`latency`]: latency histograms of the recent past (per-table metrics); [`pools`]: the
//!   figures of one kind of work (`system_views.thread_pools`).
//!
//! Times: write timestamps are microseconds since the Unix epoch ([`Timestamp`]); expiry and
//! deletion times are seconds since the epoch ([`LocalTime`]), as in Cassandra.

pub mod calendar;
pub mod cell;
pub mod cell_map;
pub mod clustering;
pub mod codec;
pub mod java_text;
pub mod latency;
pub mod partition;
pub mod pools;
pub mod row;
pub mod schema;
pub mod table_options;
pub mod token;
pub mod type_text;

pub use cell::{Cell, CellKind, DeletionTime, LivenessInfo};
pub use cell_map::CellMap;
pub use partition::{Partition, RangeTombstone, RangeTombstoneList};
pub use row::{CellKey, ColumnId, Row};

/// A write timestamp: microseconds since the Unix epoch, chosen by the coordinator (or the
/// client with `USING TIMESTAMP`).
pub type Timestamp = i64;

/// A local time in seconds since the Unix epoch: when a cell expires or when a tombstone was
/// written (its *local deletion time*, from which `gc_grace_seconds` counts).
pub type LocalTime = u32;

/// The largest TTL Cassandra accepts: 20 years, in seconds.
pub const MAX_TTL_SECONDS: u32 = 20 * 365 * 24 * 60 * 60;
