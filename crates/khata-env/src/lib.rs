//! khata's one seam for nondeterminism: the clock, randomness ([`chance`]) and files (and the
//! operating system's scheduling of background threads, [`sched`]).
//!
//! Everything above this crate reaches the real clock and the real file system only through
//! these traits, so tests can substitute a manual clock ([`clock::ManualClock`]) and a file
//! system that injects crashes, torn writes, lost unsynced data and I/O errors
//! ([`fault::FaultFs`]). See DESIGN.md §2 and STYLE.md rule 3.

pub mod chance;
pub mod clock;
pub mod fault;
pub mod fs;
mod mapped;
pub mod sched;

pub use clock::{Clock, ManualClock, SystemClock};
pub use fault::{
    FaultFs, FaultId, FaultOp, FsSnapshot, InjectedFault, PathFilter, SnapshotEntry, TornWrites,
    is_injected,
};
pub use fs::{
    FileSystem, PreallocatedFile, ReadableFile, RealFs, WritableFile, create_dir_all_durably,
    durable_rename, write_file_durably,
};
