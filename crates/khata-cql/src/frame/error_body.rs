//! The ERROR response body (spec §4.2.1 and the error codes of v4 §9 / v5 §8).
//!
//! `<code><message>` then, for some codes, the fields drivers read to decide on retries:
//! Unavailable's consistency/required/alive, the timeouts' received/blockfor, the failures'
//! reason map (v5) or failure count (v3/v4), AlreadyExists' keyspace and table, Unprepared's id.
//! Version differences are handled in one place: v5 sends a reason map where v4 sends a count,
//! and a CAS write timeout carries a contention count in v5 only.

use std::net::IpAddr;

use bytes::{BufMut, Bytes, BytesMut};

use super::error::{EncodeError, FrameError, WireError};
use super::header::ProtocolVersion;
use super::wire::{
    Consistency, WireReader, put_consistency, put_inetaddr, put_int_count, put_short_bytes,
    put_string, put_string_list,
};

/// The kind of write that timed out or failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteType {
    /// `SIMPLE`
    Simple,
    /// `BATCH`
    Batch,
    /// `UNLOGGED_BATCH`
    UnloggedBatch,
    /// `COUNTER`
    Counter,
    /// `BATCH_LOG`
    BatchLog,
    /// `CAS`
    Cas,
    /// `VIEW`
    View,
    /// `CDC`
    Cdc,
    /// A name this crate does not know (decoding only).
    Other(String),
}

impl WriteType {
    /// The wire name.
    pub fn name(&self) -> &str {
        match self {
            WriteType::Simple => "SIMPLE",
            WriteType::Batch => "BATCH",
            WriteType::UnloggedBatch => "UNLOGGED_BATCH",
            WriteType::Counter => "COUNTER",
            WriteType::BatchLog => "BATCH_LOG",
            WriteType::Cas => "CAS",
            WriteType::View => "VIEW",
            WriteType::Cdc => "CDC",
            WriteType::Other(name) => name,
        }
    }

    /// The write type for a wire name.
    pub fn from_name(name: &str) -> Self {
        match name {
            "SIMPLE" => WriteType::Simple,
            "BATCH" => WriteType::Batch,
            "UNLOGGED_BATCH" => WriteType::UnloggedBatch,
            "COUNTER" => WriteType::Counter,
            "BATCH_LOG" => WriteType::BatchLog,
            "CAS" => WriteType::Cas,
            "VIEW" => WriteType::View,
            "CDC" => WriteType::Cdc,
            other => WriteType::Other(other.to_string()),
        }
    }
}

/// Why replicas failed: a count in v3/v4, a map from replica address to reason code in v5.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Failures {
    /// The number of replicas that failed (what v3/v4 send).
    pub count: i32,
    /// Replica address and failure code (what v5 sends; empty when decoded from v4).
    pub reasons: Vec<(IpAddr, u16)>,
}

/// The code-specific part of an ERROR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// 0x0000: a server-side bug.
    ServerError,
    /// 0x000A: the client violated the protocol.
    ProtocolError,
    /// 0x0100: authentication failed.
    AuthenticationError,
    /// 0x1000: not enough replicas alive.
    Unavailable {
        /// The consistency asked for.
        consistency: Consistency,
        /// Replicas required.
        required: i32,
        /// Replicas known alive.
        alive: i32,
    },
    /// 0x1001: the coordinator is overloaded.
    Overloaded,
    /// 0x1002: the coordinator is bootstrapping.
    IsBootstrapping,
    /// 0x1003: TRUNCATE failed.
    TruncateError,
    /// 0x1100: a write timed out.
    WriteTimeout {
        /// The consistency asked for.
        consistency: Consistency,
        /// Acknowledgements received.
        received: i32,
        /// Acknowledgements required.
        block_for: i32,
        /// What kind of write.
        write_type: WriteType,
        /// Contentions during a CAS write (v5, write type CAS only).
        contentions: Option<u16>,
    },
    /// 0x1200: a read timed out.
    ReadTimeout {
        /// The consistency asked for.
        consistency: Consistency,
        /// Responses received.
        received: i32,
        /// Responses required.
        block_for: i32,
        /// Whether the replica asked for data answered.
        data_present: bool,
    },
    /// 0x1300: a read failed on replicas (v4+).
    ReadFailure {
        /// The consistency asked for.
        consistency: Consistency,
        /// Responses received.
        received: i32,
        /// Responses required.
        block_for: i32,
        /// The failures.
        failures: Failures,
        /// Whether the replica asked for data answered.
        data_present: bool,
    },
    /// 0x1400: a user-defined function failed (v4+).
    FunctionFailure {
        /// The function's keyspace.
        keyspace: String,
        /// The function's name.
        function: String,
        /// Its argument types as CQL type strings.
        arg_types: Vec<String>,
    },
    /// 0x1500: a write failed on replicas (v4+).
    WriteFailure {
        /// The consistency asked for.
        consistency: Consistency,
        /// Acknowledgements received.
        received: i32,
        /// Acknowledgements required.
        block_for: i32,
        /// The failures.
        failures: Failures,
        /// What kind of write.
        write_type: WriteType,
    },
    /// 0x1600: a CDC write failed (v5).
    CdcWriteFailure,
    /// 0x1700: a contended CAS write may or may not have been applied (v5).
    CasWriteUnknown {
        /// The consistency asked for.
        consistency: Consistency,
        /// Acknowledgements received.
        received: i32,
        /// Acknowledgements required.
        block_for: i32,
    },
    /// 0x2000: the statement does not parse.
    SyntaxError,
    /// 0x2100: the user lacks a permission.
    Unauthorized,
    /// 0x2200: the statement is invalid.
    Invalid,
    /// 0x2300: a configuration problem.
    ConfigError,
    /// 0x2400: the keyspace or table exists (table empty for a keyspace).
    AlreadyExists {
        /// The keyspace.
        keyspace: String,
        /// The table, empty for a keyspace.
        table: String,
    },
    /// 0x2500: the prepared id is unknown here.
    Unprepared {
        /// The unknown id.
        id: Bytes,
    },
}

/// The most bytes of an error message: the length prefix of a [string] is a [short].
const MAX_MESSAGE_BYTES: usize = u16::MAX as usize;

/// What marks a message cut by [`fit_message`].
const CUT_MARK: &str = "...";

/// `message`, cut at a character boundary and marked when it is longer than
/// [`MAX_MESSAGE_BYTES`].
fn fit_message(message: &str) -> std::borrow::Cow<'_, str> {
    if message.len() <= MAX_MESSAGE_BYTES {
        return std::borrow::Cow::Borrowed(message);
    }
    let mut end = MAX_MESSAGE_BYTES - CUT_MARK.len();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!("{}{CUT_MARK}", &message[..end]))
}

/// An ERROR body: a code (from the kind), a message, and the kind's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorBody {
    /// The kind and its fields.
    pub kind: ErrorKind,
    /// The human-readable message.
    pub message: String,
}

impl ErrorBody {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ErrorBody {
            kind,
            message: message.into(),
        }
    }

    /// The protocol error (0x000A) that answers a [`FrameError`].
    pub fn from_frame_error(err: &FrameError) -> Self {
        ErrorBody::new(ErrorKind::ProtocolError, err.to_string())
    }

    /// The error code.
    pub fn code(&self) -> i32 {
        match self.kind {
            ErrorKind::ServerError => 0x0000,
            ErrorKind::ProtocolError => 0x000A,
            ErrorKind::AuthenticationError => 0x0100,
            ErrorKind::Unavailable { .. } => 0x1000,
            ErrorKind::Overloaded => 0x1001,
            ErrorKind::IsBootstrapping => 0x1002,
            ErrorKind::TruncateError => 0x1003,
            ErrorKind::WriteTimeout { .. } => 0x1100,
            ErrorKind::ReadTimeout { .. } => 0x1200,
            ErrorKind::ReadFailure { .. } => 0x1300,
            ErrorKind::FunctionFailure { .. } => 0x1400,
            ErrorKind::WriteFailure { .. } => 0x1500,
            ErrorKind::CdcWriteFailure => 0x1600,
            ErrorKind::CasWriteUnknown { .. } => 0x1700,
            ErrorKind::SyntaxError => 0x2000,
            ErrorKind::Unauthorized => 0x2100,
            ErrorKind::Invalid => 0x2200,
            ErrorKind::ConfigError => 0x2300,
            ErrorKind::AlreadyExists { .. } => 0x2400,
            ErrorKind::Unprepared { .. } => 0x2500,
        }
    }

    /// Writes the body. A message longer than a [string] can carry (one that quotes a huge
    /// statement back) is cut to fit, so that the client still gets the error's own code
    /// rather than a server error about encoding it.
    pub fn write(&self, out: &mut BytesMut, version: ProtocolVersion) -> Result<(), EncodeError> {
        match self.for_version(version) {
            Some(older) => older.write_as_is(out, version),
            None => self.write_as_is(out, version),
        }
    }

    /// The error an older protocol version gets instead of this one, as Cassandra's
    /// `ErrorMessage.getBackwardsCompatibleException` chooses it: below v4 a read or write
    /// failure is a timeout and a function or CDC failure is Invalid (`ERROR <code>: ...`);
    /// below v5 a CAS outcome not known is a CAS write timeout. `None` when the version
    /// has this error's code.
    fn for_version(&self, version: ProtocolVersion) -> Option<ErrorBody> {
        let v4 = version >= ProtocolVersion::V4;
        let timed_out =
            |received: i32| format!("Operation timed out - received only {received} responses.");
        let write_timeout =
            |consistency: &Consistency, received: &i32, block_for: &i32, write_type: WriteType| {
                ErrorKind::WriteTimeout {
                    consistency: *consistency,
                    received: *received,
                    block_for: *block_for,
                    write_type,
                    contentions: None,
                }
            };
        let invalid = |code: &str| format!("ERROR {code}: {}", self.message);
        let (kind, message) = match &self.kind {
            ErrorKind::ReadFailure {
                consistency,
                received,
                block_for,
                data_present,
                ..
            } if !v4 => (
                ErrorKind::ReadTimeout {
                    consistency: *consistency,
                    received: *received,
                    block_for: *block_for,
                    data_present: *data_present,
                },
                timed_out(*received),
            ),
            ErrorKind::WriteFailure {
                consistency,
                received,
                block_for,
                write_type,
                ..
            } if !v4 => (
                write_timeout(consistency, received, block_for, write_type.clone()),
                timed_out(*received),
            ),
            ErrorKind::CasWriteUnknown {
                consistency,
                received,
                block_for,
            } if version < ProtocolVersion::V5 => (
                write_timeout(consistency, received, block_for, WriteType::Cas),
                timed_out(*received),
            ),
            ErrorKind::FunctionFailure { .. } if !v4 => {
                (ErrorKind::Invalid, invalid("FUNCTION_FAILURE"))
            }
            ErrorKind::CdcWriteFailure if !v4 => (ErrorKind::Invalid, invalid("CDC_WRITE_FAILURE")),
            _ => return None,
        };
        Some(ErrorBody::new(kind, message))
    }

    fn write_as_is(&self, out: &mut BytesMut, version: ProtocolVersion) -> Result<(), EncodeError> {
        out.put_i32(self.code());
        put_string(out, "error message", &fit_message(&self.message))?;
        let v5 = version >= ProtocolVersion::V5;
        match &self.kind {
            ErrorKind::Unavailable {
                consistency,
                required,
                alive,
            } => {
                put_consistency(out, *consistency);
                out.put_i32(*required);
                out.put_i32(*alive);
            }
            ErrorKind::WriteTimeout {
                consistency,
                received,
                block_for,
                write_type,
                contentions,
            } => {
                put_consistency(out, *consistency);
                out.put_i32(*received);
                out.put_i32(*block_for);
                put_string(out, "write type", write_type.name())?;
                if v5 && *write_type == WriteType::Cas {
                    out.put_u16(contentions.unwrap_or(0));
                }
            }
            ErrorKind::ReadTimeout {
                consistency,
                received,
                block_for,
                data_present,
            } => {
                put_consistency(out, *consistency);
                out.put_i32(*received);
                out.put_i32(*block_for);
                out.put_u8(u8::from(*data_present));
            }
            ErrorKind::ReadFailure {
                consistency,
                received,
                block_for,
                failures,
                data_present,
            } => {
                put_consistency(out, *consistency);
                out.put_i32(*received);
                out.put_i32(*block_for);
                write_failures(out, failures, v5)?;
                out.put_u8(u8::from(*data_present));
            }
            ErrorKind::FunctionFailure {
                keyspace,
                function,
                arg_types,
            } => {
                put_string(out, "keyspace", keyspace)?;
                put_string(out, "function", function)?;
                put_string_list(out, "argument types", arg_types)?;
            }
            ErrorKind::WriteFailure {
                consistency,
                received,
                block_for,
                failures,
                write_type,
            } => {
                put_consistency(out, *consistency);
                out.put_i32(*received);
                out.put_i32(*block_for);
                write_failures(out, failures, v5)?;
                put_string(out, "write type", write_type.name())?;
            }
            ErrorKind::CasWriteUnknown {
                consistency,
                received,
                block_for,
            } => {
                put_consistency(out, *consistency);
                out.put_i32(*received);
                out.put_i32(*block_for);
            }
            ErrorKind::AlreadyExists { keyspace, table } => {
                put_string(out, "keyspace", keyspace)?;
                put_string(out, "table", table)?;
            }
            ErrorKind::Unprepared { id } => put_short_bytes(out, "prepared id", id)?,
            _ => {}
        }
        Ok(())
    }

    /// Reads a body.
    pub fn read(r: &mut WireReader, version: ProtocolVersion) -> Result<Self, WireError> {
        let code = r.int("error code")?;
        let message = r.string("error message")?;
        let v5 = version >= ProtocolVersion::V5;
        let kind = match code {
            0x0000 => ErrorKind::ServerError,
            0x000A => ErrorKind::ProtocolError,
            0x0100 => ErrorKind::AuthenticationError,
            0x1000 => ErrorKind::Unavailable {
                consistency: r.consistency("consistency")?,
                required: r.int("required")?,
                alive: r.int("alive")?,
            },
            0x1001 => ErrorKind::Overloaded,
            0x1002 => ErrorKind::IsBootstrapping,
            0x1003 => ErrorKind::TruncateError,
            0x1100 => {
                let consistency = r.consistency("consistency")?;
                let received = r.int("received")?;
                let block_for = r.int("blockfor")?;
                let write_type = WriteType::from_name(&r.string("write type")?);
                let contentions = (v5 && write_type == WriteType::Cas)
                    .then(|| r.short("contentions"))
                    .transpose()?;
                ErrorKind::WriteTimeout {
                    consistency,
                    received,
                    block_for,
                    write_type,
                    contentions,
                }
            }
            0x1200 => ErrorKind::ReadTimeout {
                consistency: r.consistency("consistency")?,
                received: r.int("received")?,
                block_for: r.int("blockfor")?,
                data_present: r.byte("data present")? != 0,
            },
            0x1300 => ErrorKind::ReadFailure {
                consistency: r.consistency("consistency")?,
                received: r.int("received")?,
                block_for: r.int("blockfor")?,
                failures: read_failures(r, v5)?,
                data_present: r.byte("data present")? != 0,
            },
            0x1400 => ErrorKind::FunctionFailure {
                keyspace: r.string("keyspace")?,
                function: r.string("function")?,
                arg_types: r.string_list("argument types")?,
            },
            0x1500 => ErrorKind::WriteFailure {
                consistency: r.consistency("consistency")?,
                received: r.int("received")?,
                block_for: r.int("blockfor")?,
                failures: read_failures(r, v5)?,
                write_type: WriteType::from_name(&r.string("write type")?),
            },
            0x1600 => ErrorKind::CdcWriteFailure,
            0x1700 => ErrorKind::CasWriteUnknown {
                consistency: r.consistency("consistency")?,
                received: r.int("received")?,
                block_for: r.int("blockfor")?,
            },
            0x2000 => ErrorKind::SyntaxError,
            0x2100 => ErrorKind::Unauthorized,
            0x2200 => ErrorKind::Invalid,
            0x2300 => ErrorKind::ConfigError,
            0x2400 => ErrorKind::AlreadyExists {
                keyspace: r.string("keyspace")?,
                table: r.string("table")?,
            },
            0x2500 => ErrorKind::Unprepared {
                id: r.short_bytes("prepared id")?,
            },
            other => {
                return Err(WireError::Invalid {
                    what: "error code",
                    detail: format!("0x{other:04X}"),
                });
            }
        };
        Ok(ErrorBody { kind, message })
    }
}

fn write_failures(out: &mut BytesMut, failures: &Failures, v5: bool) -> Result<(), EncodeError> {
    if v5 {
        put_int_count(out, "failure reasons", failures.reasons.len())?;
        for (ip, code) in &failures.reasons {
            put_inetaddr(out, ip);
            out.put_u16(*code);
        }
    } else {
        out.put_i32(failures.count);
    }
    Ok(())
}

fn read_failures(r: &mut WireReader, v5: bool) -> Result<Failures, WireError> {
    if !v5 {
        return Ok(Failures {
            count: r.int("failure count")?,
            reasons: Vec::new(),
        });
    }
    let n = r.int("failure reasons")?;
    let n = usize::try_from(n).map_err(|_| WireError::InvalidLength {
        what: "failure reasons",
        length: i64::from(n),
    })?;
    let mut reasons = Vec::with_capacity(n.min(r.remaining() / 7));
    for _ in 0..n {
        let ip = r.inetaddr("failed replica")?;
        reasons.push((ip, r.short("failure code")?));
    }
    Ok(Failures {
        count: i32::try_from(reasons.len()).unwrap_or(i32::MAX),
        reasons,
    })
}
