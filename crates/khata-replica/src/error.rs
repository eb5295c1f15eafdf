//! Errors of the replica layer.

use khata_storage::StorageError;

/// What can go wrong in a replica-local operation.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    /// The storage engine failed (I/O, corruption, poisoning, thresholds).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A schema object to create exists already.
    #[error("{what} already exists")]
    AlreadyExists {
        what: String,
        keyspace: String,
        /// Empty for a keyspace.
        table: String,
    },
    /// A keyspace, table or type named in a request does not exist.
    #[error("{0}")]
    NotFound(String),
    /// A request the schema does not allow (bad definition, dependent objects).
    #[error("{0}")]
    Invalid(String),
    /// The stored schema could not be read back.
    #[error("stored schema is unreadable: {0}")]
    CorruptSchema(String),
}

pub type Result<T, E = ReplicaError> = std::result::Result<T, E>;
