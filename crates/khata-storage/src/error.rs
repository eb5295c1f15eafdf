//! Errors of the storage engine.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong in the storage engine.
#[derive(Debug, Error)]
pub enum StorageError {
    /// An I/O operation on `path` failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A checksum or structural check failed: the file is damaged. Never retryable.
    #[error("corrupt file {path} at offset {offset}: {detail}")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        detail: String,
    },
    /// A file declares a format version this build cannot read.
    #[error("{path}: unsupported format version {version} (this build reads {supported})")]
    UnsupportedVersion {
        path: PathBuf,
        version: u32,
        supported: String,
    },
    /// An earlier fsync (or other durability step) failed, so the state on disk is unknown;
    /// the engine refuses writes until it is reopened.
    #[error("storage engine refuses writes after a failed write to disk ({0}); restart the node")]
    Poisoned(String),
    /// A read scanned more tombstones than `tombstone_failure_threshold`.
    #[error(
        "Scanned over {scanned} tombstones during query (tombstone_failure_threshold is {threshold}); query aborted"
    )]
    TombstoneOverwhelm { scanned: usize, threshold: usize },
    /// The table does not exist in this engine.
    #[error("unknown table {0}")]
    UnknownTable(String),
    /// The engine is closed.
    #[error("storage engine is closed")]
    Closed,
    /// An argument was out of range (a caller bug or a bad request that got this far).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl StorageError {
    /// Whether this is the system running out of something (disk space, file descriptors,
    /// quota) rather than a failed device: work that failed so did not change what is on
    /// disk and can be tried again later.
    pub fn is_out_of_resources(&self) -> bool {
        const ENFILE: i32 = 23;
        const EMFILE: i32 = 24;
        const ENOSPC: i32 = 28;
        const EDQUOT: i32 = 122;
        matches!(self, StorageError::Io { source, .. }
            if matches!(source.raw_os_error(), Some(ENFILE | EMFILE | ENOSPC | EDQUOT))
                || source.kind() == io::ErrorKind::StorageFull)
    }

    /// Wrap an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        StorageError::Io {
            path: path.into(),
            source,
        }
    }

    pub fn corrupt(path: impl Into<PathBuf>, offset: u64, detail: impl Into<String>) -> Self {
        StorageError::Corrupt {
            path: path.into(),
            offset,
            detail: detail.into(),
        }
    }

    /// Whether retrying the same operation later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, StorageError::Io { .. })
    }
}

pub type Result<T, E = StorageError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_out_of_space_or_descriptors_is_not_a_device_failure() {
        let io = |code| StorageError::io("x", io::Error::from_raw_os_error(code));
        assert!(io(28).is_out_of_resources(), "ENOSPC");
        assert!(io(24).is_out_of_resources(), "EMFILE");
        assert!(io(23).is_out_of_resources(), "ENFILE");
        assert!(!io(5).is_out_of_resources(), "EIO");
        assert!(!StorageError::Poisoned("x".into()).is_out_of_resources());
    }
}
