//! The statement-carrying requests: QUERY, EXECUTE and BATCH (spec §4.1.4, §4.1.6, §4.1.7), and
//! the `<query_parameters>` QUERY and EXECUTE share.
//!
//! Flags are a [byte] in v3/v4 and an [int] in v5, which adds `keyspace` (0x80) and
//! `now_in_seconds` (0x100). Values are positional or named (0x40); a value may be "not set"
//! from v4 on. Unknown flag bits are ignored, as the spec asks of unused bits.

use bytes::{BufMut, Bytes, BytesMut};

use super::error::{EncodeError, WireError};
use super::header::ProtocolVersion;
use super::wire::{
    Consistency, Value, WireReader, put_bytes, put_consistency, put_count, put_long_string,
    put_short_bytes, put_string, put_value,
};

const VALUES: u32 = 0x01;
const SKIP_METADATA: u32 = 0x02;
const PAGE_SIZE: u32 = 0x04;
const PAGING_STATE: u32 = 0x08;
const SERIAL_CONSISTENCY: u32 = 0x10;
const DEFAULT_TIMESTAMP: u32 = 0x20;
const NAMES_FOR_VALUES: u32 = 0x40;
const KEYSPACE: u32 = 0x80;
const NOW_IN_SECONDS: u32 = 0x100;

/// Bound values: by position, or by bind-marker name (flag 0x40).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundValues {
    /// Values in bind-marker order.
    Positional(Vec<Value>),
    /// Values with the name of the marker each binds.
    Named(Vec<(String, Value)>),
}

impl Default for BoundValues {
    fn default() -> Self {
        BoundValues::Positional(Vec::new())
    }
}

impl BoundValues {
    /// How many values there are.
    pub fn len(&self) -> usize {
        match self {
            BoundValues::Positional(v) => v.len(),
            BoundValues::Named(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn read(r: &mut WireReader, named: bool, version: ProtocolVersion) -> Result<Self, WireError> {
        let n = usize::from(r.short("value count")?);
        let unset = version.allows_unset();
        if named {
            let mut out = Vec::with_capacity(n.min(r.remaining() / 6));
            for _ in 0..n {
                let name = r.string("value name")?;
                out.push((name, r.value("value", unset)?));
            }
            Ok(BoundValues::Named(out))
        } else {
            let mut out = Vec::with_capacity(n.min(r.remaining() / 4));
            for _ in 0..n {
                out.push(r.value("value", unset)?);
            }
            Ok(BoundValues::Positional(out))
        }
    }

    fn write(&self, out: &mut BytesMut, version: ProtocolVersion) -> Result<(), EncodeError> {
        put_count(out, "values", self.len())?;
        let unset = version.allows_unset();
        match self {
            BoundValues::Positional(values) => {
                for v in values {
                    put_value(out, "value", v, unset)?;
                }
            }
            BoundValues::Named(values) => {
                for (name, v) in values {
                    put_string(out, "value name", name)?;
                    put_value(out, "value", v, unset)?;
                }
            }
        }
        Ok(())
    }
}

/// `<query_parameters>` of QUERY and EXECUTE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryParameters {
    /// The consistency level.
    pub consistency: Consistency,
    /// Bound values.
    pub values: BoundValues,
    /// Skip_metadata: the Rows result should carry No_metadata.
    pub skip_metadata: bool,
    /// The page size in rows, when paging is asked for.
    pub page_size: Option<i32>,
    /// The paging state returned by the previous page.
    pub paging_state: Option<Bytes>,
    /// The serial consistency for conditional updates (SERIAL when absent).
    pub serial_consistency: Option<Consistency>,
    /// A client-supplied default timestamp in microseconds.
    pub default_timestamp: Option<i64>,
    /// The keyspace to run in (v5).
    pub keyspace: Option<String>,
    /// The current time in seconds for TTLs (v5, testing).
    pub now_in_seconds: Option<i32>,
}

impl QueryParameters {
    /// Parameters with the given consistency and nothing else.
    pub fn new(consistency: Consistency) -> Self {
        QueryParameters {
            consistency,
            values: BoundValues::default(),
            skip_metadata: false,
            page_size: None,
            paging_state: None,
            serial_consistency: None,
            default_timestamp: None,
            keyspace: None,
            now_in_seconds: None,
        }
    }

    /// Reads `<query_parameters>`.
    pub fn read(r: &mut WireReader, version: ProtocolVersion) -> Result<Self, WireError> {
        let consistency = r.consistency("consistency")?;
        let flags = read_flags(r, version)?;
        let values = if flags & VALUES != 0 {
            BoundValues::read(r, flags & NAMES_FOR_VALUES != 0, version)?
        } else {
            BoundValues::default()
        };
        let page_size = (flags & PAGE_SIZE != 0)
            .then(|| r.int("page size"))
            .transpose()?;
        let paging_state = if flags & PAGING_STATE != 0 {
            r.bytes("paging state")?
        } else {
            None
        };
        let serial_consistency = (flags & SERIAL_CONSISTENCY != 0)
            .then(|| r.consistency("serial consistency"))
            .transpose()?;
        let default_timestamp = (flags & DEFAULT_TIMESTAMP != 0)
            .then(|| r.long("default timestamp"))
            .transpose()?;
        let v5 = version >= ProtocolVersion::V5;
        let keyspace = (v5 && flags & KEYSPACE != 0)
            .then(|| r.string("keyspace"))
            .transpose()?;
        let now_in_seconds = (v5 && flags & NOW_IN_SECONDS != 0)
            .then(|| r.int("now in seconds"))
            .transpose()?;
        Ok(QueryParameters {
            consistency,
            values,
            skip_metadata: flags & SKIP_METADATA != 0,
            page_size,
            paging_state,
            serial_consistency,
            default_timestamp,
            keyspace,
            now_in_seconds,
        })
    }

    /// Writes `<query_parameters>`.
    pub fn write(&self, out: &mut BytesMut, version: ProtocolVersion) -> Result<(), EncodeError> {
        put_consistency(out, self.consistency);
        let mut flags = 0u32;
        if !self.values.is_empty() {
            flags |= VALUES;
            if matches!(self.values, BoundValues::Named(_)) {
                flags |= NAMES_FOR_VALUES;
            }
        }
        flags |= if self.skip_metadata { SKIP_METADATA } else { 0 };
        flags |= if self.page_size.is_some() {
            PAGE_SIZE
        } else {
            0
        };
        flags |= if self.paging_state.is_some() {
            PAGING_STATE
        } else {
            0
        };
        flags |= if self.serial_consistency.is_some() {
            SERIAL_CONSISTENCY
        } else {
            0
        };
        flags |= if self.default_timestamp.is_some() {
            DEFAULT_TIMESTAMP
        } else {
            0
        };
        flags |= v5_flags(version, &self.keyspace, self.now_in_seconds)?;
        write_flags(out, version, flags);
        if !self.values.is_empty() {
            self.values.write(out, version)?;
        }
        if let Some(n) = self.page_size {
            out.put_i32(n);
        }
        if let Some(state) = &self.paging_state {
            put_bytes(out, "paging state", Some(state))?;
        }
        if let Some(c) = self.serial_consistency {
            put_consistency(out, c);
        }
        if let Some(ts) = self.default_timestamp {
            out.put_i64(ts);
        }
        if let Some(ks) = &self.keyspace {
            put_string(out, "keyspace", ks)?;
        }
        if let Some(now) = self.now_in_seconds {
            out.put_i32(now);
        }
        Ok(())
    }
}

fn read_flags(r: &mut WireReader, version: ProtocolVersion) -> Result<u32, WireError> {
    if version.int_flags() {
        // The bits are what matter; reinterpret the [int] as unsigned.
        Ok(u32::from_be_bytes(r.int("flags")?.to_be_bytes()))
    } else {
        Ok(u32::from(r.byte("flags")?))
    }
}

fn write_flags(out: &mut BytesMut, version: ProtocolVersion, flags: u32) {
    if version.int_flags() {
        out.put_u32(flags);
    } else {
        // Only v5 flags exceed a byte, and v5_flags refuses them before v5.
        out.put_u8((flags & 0xFF) as u8);
    }
}

fn v5_flags(
    version: ProtocolVersion,
    keyspace: &Option<String>,
    now_in_seconds: Option<i32>,
) -> Result<u32, EncodeError> {
    let wanted = keyspace.is_some() || now_in_seconds.is_some();
    if wanted && version < ProtocolVersion::V5 {
        return Err(EncodeError::Invalid {
            what: "query parameters",
            detail: "keyspace and now_in_seconds need protocol v5".into(),
        });
    }
    let mut flags = 0;
    flags |= if keyspace.is_some() { KEYSPACE } else { 0 };
    flags |= if now_in_seconds.is_some() {
        NOW_IN_SECONDS
    } else {
        0
    };
    Ok(flags)
}

/// QUERY: a CQL string and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The statement text.
    pub query: String,
    /// The parameters.
    pub parameters: QueryParameters,
}

impl Query {
    /// Reads a QUERY body.
    pub fn read(r: &mut WireReader, version: ProtocolVersion) -> Result<Self, WireError> {
        let query = r.long_string("query string")?;
        let parameters = QueryParameters::read(r, version)?;
        Ok(Query { query, parameters })
    }

    /// Writes a QUERY body.
    pub fn write(&self, out: &mut BytesMut, version: ProtocolVersion) -> Result<(), EncodeError> {
        put_long_string(out, "query string", &self.query)?;
        self.parameters.write(out, version)
    }
}

/// EXECUTE: a prepared statement id and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execute {
    /// The prepared statement id.
    pub id: Bytes,
    /// The result metadata id the client holds (v5).
    pub result_metadata_id: Option<Bytes>,
    /// The parameters.
    pub parameters: QueryParameters,
}

impl Execute {
    /// Reads an EXECUTE body.
    pub fn read(r: &mut WireReader, version: ProtocolVersion) -> Result<Self, WireError> {
        let id = r.short_bytes("prepared id")?;
        let result_metadata_id = if version >= ProtocolVersion::V5 {
            Some(r.short_bytes("result metadata id")?)
        } else {
            None
        };
        let parameters = QueryParameters::read(r, version)?;
        Ok(Execute {
            id,
            result_metadata_id,
            parameters,
        })
    }

    /// Writes an EXECUTE body. v5 requires a result metadata id (empty when unknown).
    pub fn write(&self, out: &mut BytesMut, version: ProtocolVersion) -> Result<(), EncodeError> {
        put_short_bytes(out, "prepared id", &self.id)?;
        if version >= ProtocolVersion::V5 {
            let id = self.result_metadata_id.as_deref().unwrap_or_default();
            put_short_bytes(out, "result metadata id", id)?;
        }
        self.parameters.write(out, version)
    }
}

/// The kind of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchType {
    /// 0: logged (atomic through the batch log).
    Logged,
    /// 1: unlogged.
    Unlogged,
    /// 2: counter updates only.
    Counter,
}

/// One statement of a batch: a query string or a prepared id, with its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchStatement {
    /// kind 0: a CQL string.
    Query {
        /// The statement text.
        query: String,
        /// Its values.
        values: BoundValues,
    },
    /// kind 1: a prepared statement id.
    Prepared {
        /// The prepared id.
        id: Bytes,
        /// Its values.
        values: BoundValues,
    },
}

/// BATCH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Logged, unlogged or counter.
    pub batch_type: BatchType,
    /// The statements, in order.
    pub statements: Vec<BatchStatement>,
    /// The consistency level.
    pub consistency: Consistency,
    /// The serial consistency for conditional updates.
    pub serial_consistency: Option<Consistency>,
    /// A client-supplied default timestamp in microseconds.
    pub default_timestamp: Option<i64>,
    /// The keyspace to run in (v5).
    pub keyspace: Option<String>,
    /// The current time in seconds (v5).
    pub now_in_seconds: Option<i32>,
}

impl Batch {
    /// Reads a BATCH body.
    pub fn read(r: &mut WireReader, version: ProtocolVersion) -> Result<Self, WireError> {
        let batch_type = match r.byte("batch type")? {
            0 => BatchType::Logged,
            1 => BatchType::Unlogged,
            2 => BatchType::Counter,
            other => {
                return Err(WireError::Invalid {
                    what: "batch type",
                    detail: other.to_string(),
                });
            }
        };
        let n = usize::from(r.short("batch statement count")?);
        // Named values (flag 0x40) would change how each statement's values are read, but the
        // flags come after the statements: the spec calls the feature unimplementable
        // (CASSANDRA-10246) and drivers never send it, so values are read positionally and a
        // batch with the flag is refused below.
        let mut raw = Vec::with_capacity(n.min(r.remaining() / 7));
        for _ in 0..n {
            let head = read_statement_head(r)?;
            raw.push((head, BoundValues::read(r, false, version)?));
        }
        let consistency = r.consistency("consistency")?;
        let flags = read_flags(r, version)?;
        if flags & NAMES_FOR_VALUES != 0 {
            return Err(WireError::Invalid {
                what: "batch flags",
                detail: "named values in BATCH are not supported (CASSANDRA-10246)".into(),
            });
        }
        let serial_consistency = (flags & SERIAL_CONSISTENCY != 0)
            .then(|| r.consistency("serial consistency"))
            .transpose()?;
        let default_timestamp = (flags & DEFAULT_TIMESTAMP != 0)
            .then(|| r.long("default timestamp"))
            .transpose()?;
        let v5 = version >= ProtocolVersion::V5;
        let keyspace = (v5 && flags & KEYSPACE != 0)
            .then(|| r.string("keyspace"))
            .transpose()?;
        let now_in_seconds = (v5 && flags & NOW_IN_SECONDS != 0)
            .then(|| r.int("now in seconds"))
            .transpose()?;
        let statements = raw
            .into_iter()
            .map(|(head, values)| match head {
                StatementHead::Query(query) => BatchStatement::Query { query, values },
                StatementHead::Prepared(id) => BatchStatement::Prepared { id, values },
            })
            .collect();
        Ok(Batch {
            batch_type,
            statements,
            consistency,
            serial_consistency,
            default_timestamp,
            keyspace,
            now_in_seconds,
        })
    }

    /// Writes a BATCH body. Named values cannot be sent (the spec calls them broken).
    pub fn write(&self, out: &mut BytesMut, version: ProtocolVersion) -> Result<(), EncodeError> {
        out.put_u8(match self.batch_type {
            BatchType::Logged => 0,
            BatchType::Unlogged => 1,
            BatchType::Counter => 2,
        });
        put_count(out, "batch statements", self.statements.len())?;
        for statement in &self.statements {
            let values = match statement {
                BatchStatement::Query { query, values } => {
                    out.put_u8(0);
                    put_long_string(out, "query string", query)?;
                    values
                }
                BatchStatement::Prepared { id, values } => {
                    out.put_u8(1);
                    put_short_bytes(out, "prepared id", id)?;
                    values
                }
            };
            if matches!(values, BoundValues::Named(_)) {
                return Err(EncodeError::Invalid {
                    what: "batch values",
                    detail: "named values in BATCH are not supported (CASSANDRA-10246)".into(),
                });
            }
            values.write(out, version)?;
        }
        put_consistency(out, self.consistency);
        let mut flags = 0u32;
        flags |= if self.serial_consistency.is_some() {
            SERIAL_CONSISTENCY
        } else {
            0
        };
        flags |= if self.default_timestamp.is_some() {
            DEFAULT_TIMESTAMP
        } else {
            0
        };
        flags |= v5_flags(version, &self.keyspace, self.now_in_seconds)?;
        write_flags(out, version, flags);
        if let Some(c) = self.serial_consistency {
            put_consistency(out, c);
        }
        if let Some(ts) = self.default_timestamp {
            out.put_i64(ts);
        }
        if let Some(ks) = &self.keyspace {
            put_string(out, "keyspace", ks)?;
        }
        if let Some(now) = self.now_in_seconds {
            out.put_i32(now);
        }
        Ok(())
    }
}

enum StatementHead {
    Query(String),
    Prepared(Bytes),
}

fn read_statement_head(r: &mut WireReader) -> Result<StatementHead, WireError> {
    match r.byte("batch statement kind")? {
        0 => Ok(StatementHead::Query(r.long_string("query string")?)),
        1 => Ok(StatementHead::Prepared(r.short_bytes("prepared id")?)),
        other => Err(WireError::Invalid {
            what: "batch statement kind",
            detail: other.to_string(),
        }),
    }
}
