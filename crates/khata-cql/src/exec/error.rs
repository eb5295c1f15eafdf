//! Errors of statement execution and their CQL error codes, in one place.

use khata_coordinator::catalog::ReplicaError;
use khata_coordinator::{Consistency as CoordConsistency, CoordinatorError, WriteType};

use crate::frame::{self, Consistency, ErrorBody, ErrorKind, Failures};
use crate::language::ParseError;

/// Why a statement failed.
#[derive(Debug)]
pub(crate) enum ExecError {
    /// An `Invalid` (0x2200) request.
    Invalid(String),
    /// A fully formed error.
    Body(ErrorBody),
    /// From the coordinator.
    Coordinator(CoordinatorError),
}

impl ExecError {
    pub fn invalid(message: impl Into<String>) -> Self {
        ExecError::Invalid(message.into())
    }

    pub fn into_body(self) -> ErrorBody {
        match self {
            ExecError::Invalid(m) => ErrorBody::new(ErrorKind::Invalid, m),
            ExecError::Body(b) => b,
            ExecError::Coordinator(e) => coordinator_error(e),
        }
    }
}

impl From<CoordinatorError> for ExecError {
    fn from(e: CoordinatorError) -> Self {
        ExecError::Coordinator(e)
    }
}

/// A parse error: `SyntaxError` or `Invalid`, with Cassandra's message.
pub(crate) fn parse_error(e: &ParseError) -> ErrorBody {
    let kind = if e.is_syntax_error() {
        ErrorKind::SyntaxError
    } else {
        ErrorKind::Invalid
    };
    ErrorBody::new(kind, e.to_string())
}

pub(crate) fn wire_consistency(cl: CoordConsistency) -> Consistency {
    match cl {
        CoordConsistency::Any => Consistency::Any,
        CoordConsistency::One => Consistency::One,
        CoordConsistency::Two => Consistency::Two,
        CoordConsistency::Three => Consistency::Three,
        CoordConsistency::Quorum => Consistency::Quorum,
        CoordConsistency::All => Consistency::All,
        CoordConsistency::LocalQuorum => Consistency::LocalQuorum,
        CoordConsistency::EachQuorum => Consistency::EachQuorum,
        CoordConsistency::Serial => Consistency::Serial,
        CoordConsistency::LocalSerial => Consistency::LocalSerial,
        CoordConsistency::LocalOne => Consistency::LocalOne,
    }
}

pub(crate) fn coordinator_consistency(cl: Consistency) -> CoordConsistency {
    match cl {
        Consistency::Any => CoordConsistency::Any,
        Consistency::One => CoordConsistency::One,
        Consistency::Two => CoordConsistency::Two,
        Consistency::Three => CoordConsistency::Three,
        Consistency::Quorum => CoordConsistency::Quorum,
        Consistency::All => CoordConsistency::All,
        Consistency::LocalQuorum => CoordConsistency::LocalQuorum,
        Consistency::EachQuorum => CoordConsistency::EachQuorum,
        Consistency::Serial => CoordConsistency::Serial,
        Consistency::LocalSerial => CoordConsistency::LocalSerial,
        Consistency::LocalOne => CoordConsistency::LocalOne,
    }
}

fn write_type(w: WriteType) -> frame::WriteType {
    frame::WriteType::from_name(w.name())
}

fn n(v: u32) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// The CQL error for a coordinator error.
pub(crate) fn coordinator_error(e: CoordinatorError) -> ErrorBody {
    let message = e.to_string();
    let kind = match e {
        CoordinatorError::Unavailable {
            consistency,
            required,
            alive,
        } => ErrorKind::Unavailable {
            consistency: wire_consistency(consistency),
            required: n(required),
            alive: n(alive),
        },
        CoordinatorError::ReadTimeout {
            consistency,
            received,
            required,
            data_present,
        } => ErrorKind::ReadTimeout {
            consistency: wire_consistency(consistency),
            received: n(received),
            block_for: n(required),
            data_present,
        },
        CoordinatorError::WriteTimeout {
            consistency,
            received,
            required,
            write_type: w,
        } => ErrorKind::WriteTimeout {
            consistency: wire_consistency(consistency),
            received: n(received),
            block_for: n(required),
            write_type: write_type(w),
            contentions: None,
        },
        CoordinatorError::ReadFailure {
            consistency,
            received,
            required,
            failures,
            data_present,
            reasons,
            ..
        } => ErrorKind::ReadFailure {
            consistency: wire_consistency(consistency),
            received: n(received),
            block_for: n(required),
            failures: Failures {
                count: n(failures),
                reasons,
            },
            data_present,
        },
        CoordinatorError::WriteFailure {
            consistency,
            received,
            required,
            failures,
            write_type: w,
            ..
        } => ErrorKind::WriteFailure {
            consistency: wire_consistency(consistency),
            received: n(received),
            block_for: n(required),
            failures: Failures {
                count: n(failures),
                reasons: Vec::new(),
            },
            write_type: write_type(w),
        },
        CoordinatorError::Overloaded(_) => ErrorKind::Overloaded,
        CoordinatorError::Schema(ReplicaError::AlreadyExists {
            keyspace, table, ..
        }) => ErrorKind::AlreadyExists { keyspace, table },
        CoordinatorError::Schema(ReplicaError::NotFound(_) | ReplicaError::Invalid(_))
        | CoordinatorError::Invalid(_) => ErrorKind::Invalid,
        CoordinatorError::Schema(_) | CoordinatorError::Internal(_) => ErrorKind::ServerError,
    };
    ErrorBody::new(kind, message)
}
