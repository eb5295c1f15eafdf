//! Errors a coordinated request can end in, shaped after the failures Cassandra reports
//! (so that front ends map each to its protocol's code in one place).

use khata_replica::ReplicaError;
use khata_replica::storage::StorageError;

use crate::consistency::Consistency;

#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    /// Fewer replicas are up than the consistency level needs; nothing was tried. The message
    /// is Cassandra's `UnavailableException`'s (the counts travel in the error's fields).
    #[error("Cannot achieve consistency level {}", .consistency.name())]
    Unavailable {
        consistency: Consistency,
        required: u32,
        alive: u32,
    },
    /// Replicas did not answer a read in time.
    #[error("Operation timed out - received only {received} responses.")]
    ReadTimeout {
        consistency: Consistency,
        received: u32,
        required: u32,
        data_present: bool,
    },
    /// Replicas did not acknowledge a write in time.
    #[error("Operation timed out - received only {received} responses.")]
    WriteTimeout {
        consistency: Consistency,
        received: u32,
        required: u32,
        write_type: WriteType,
    },
    /// A replica failed the read (for example, too many tombstones).
    #[error("{message}")]
    ReadFailure {
        consistency: Consistency,
        received: u32,
        required: u32,
        failures: u32,
        data_present: bool,
        message: String,
        /// Each failed replica's address and reason (Cassandra's `RequestFailureReason`
        /// code: 1 for too many tombstones, 0 unknown), which protocol v5 reports.
        reasons: Vec<(std::net::IpAddr, u16)>,
    },
    /// A replica failed the write (for example, a poisoned commit log).
    #[error("{message}")]
    WriteFailure {
        consistency: Consistency,
        received: u32,
        required: u32,
        failures: u32,
        write_type: WriteType,
        message: String,
    },
    /// The node is shedding load.
    #[error("{0}")]
    Overloaded(String),
    /// A schema error from the replica (exists, not found, invalid).
    #[error(transparent)]
    Schema(ReplicaError),
    /// A request the coordinator refuses (for example, an unknown table).
    #[error("{0}")]
    Invalid(String),
    /// Something broke that is not the client's doing.
    #[error("{0}")]
    Internal(String),
}

/// The kind of write that timed out or failed, as the CQL protocol names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteType {
    Simple,
    Batch,
    UnloggedBatch,
    Counter,
    BatchLog,
    Cas,
    View,
    Cdc,
}

impl WriteType {
    pub fn name(self) -> &'static str {
        match self {
            WriteType::Simple => "SIMPLE",
            WriteType::Batch => "BATCH",
            WriteType::UnloggedBatch => "UNLOGGED_BATCH",
            WriteType::Counter => "COUNTER",
            WriteType::BatchLog => "BATCH_LOG",
            WriteType::Cas => "CAS",
            WriteType::View => "VIEW",
            WriteType::Cdc => "CDC",
        }
    }
}

pub type Result<T, E = CoordinatorError> = std::result::Result<T, E>;

/// Cassandra's `RequestFailureReason.UNKNOWN`.
const UNKNOWN_FAILURE: u16 = 0;
/// Cassandra's `RequestFailureReason.READ_TOO_MANY_TOMBSTONES`.
const READ_TOO_MANY_TOMBSTONES: u16 = 1;

/// A storage failure during a read, as the client sees it.
pub(crate) fn read_failure(
    e: ReplicaError,
    consistency: Consistency,
    required: u32,
    replica: std::net::IpAddr,
) -> CoordinatorError {
    match e {
        ReplicaError::Storage(StorageError::UnknownTable(table)) => {
            CoordinatorError::Invalid(format!("unknown table {table}"))
        }
        ReplicaError::Storage(ref storage) => CoordinatorError::ReadFailure {
            consistency,
            received: 0,
            required,
            failures: 1,
            data_present: false,
            reasons: vec![(
                replica,
                match storage {
                    StorageError::TombstoneOverwhelm { .. } => READ_TOO_MANY_TOMBSTONES,
                    _ => UNKNOWN_FAILURE,
                },
            )],
            message: e.to_string(),
        },
        other => CoordinatorError::Schema(other),
    }
}

/// A storage failure during a write, as the client sees it.
pub(crate) fn write_failure(
    e: ReplicaError,
    consistency: Consistency,
    required: u32,
    write_type: WriteType,
) -> CoordinatorError {
    match e {
        ReplicaError::Storage(_) => CoordinatorError::WriteFailure {
            consistency,
            received: 0,
            required,
            failures: 1,
            write_type,
            message: e.to_string(),
        },
        other => CoordinatorError::Schema(other),
    }
}
