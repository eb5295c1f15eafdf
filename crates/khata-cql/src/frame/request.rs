//! Requests: what a client sends (spec §4.1), decoded from a [`Frame`] into a [`RequestFrame`].
//!
//! The body of a request is `[<custom_payload>]<message>`: a request never carries a tracing id
//! or warnings (the tracing flag only asks for tracing: the answer carries the trace's id), and
//! the custom payload [bytes map] is present when its flag is set. STARTUP is validated here:
//! `CQL_VERSION` is mandatory and `COMPRESSION`, if present, must be `lz4` or `snappy`.
//!
//! Encoding is here too, for tests and tools that play the client.

use bytes::{BufMut, Bytes, BytesMut};

use super::compression::Compression;
use super::decoder::Frame;
use super::error::{EncodeError, FrameError, WireError};
use super::header::{FrameFlags, FrameHeader, HEADER_LEN, Opcode, ProtocolVersion};
use super::query::{Batch, Execute, Query};
use super::wire::{
    BytesMap, StringMap, WireReader, put_bytes, put_bytes_map, put_long_string, put_string,
    put_string_list, put_string_map,
};

/// The STARTUP option naming the CQL version (mandatory).
pub const CQL_VERSION: &str = "CQL_VERSION";
/// The STARTUP option naming the frame compression.
pub const COMPRESSION: &str = "COMPRESSION";

/// STARTUP: the options the connection starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Startup {
    /// `CQL_VERSION`.
    pub cql_version: String,
    /// `COMPRESSION`, parsed.
    pub compression: Option<Compression>,
    /// Every option as sent (`DRIVER_NAME`, `DRIVER_VERSION`, `THROW_ON_OVERLOAD`, ...).
    pub options: StringMap,
}

impl Startup {
    fn read(r: &mut WireReader) -> Result<Self, WireError> {
        let options = r.string_map("startup options")?;
        let cql_version = options
            .get(CQL_VERSION)
            .cloned()
            .ok_or_else(|| WireError::Invalid {
                what: "STARTUP options",
                detail: "CQL_VERSION is mandatory".into(),
            })?;
        let compression = match options.get(COMPRESSION) {
            None => None,
            Some(name) => Some(
                Compression::from_name(name).ok_or_else(|| WireError::Invalid {
                    what: "STARTUP options",
                    detail: format!("Unknown compression algorithm: {name}"),
                })?,
            ),
        };
        Ok(Startup {
            cql_version,
            compression,
            options,
        })
    }

    fn write(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        let mut options = self.options.clone();
        options.insert(CQL_VERSION.into(), self.cql_version.clone());
        match self.compression {
            Some(c) => options.insert(COMPRESSION.into(), c.name().into()),
            None => options.remove(COMPRESSION),
        };
        put_string_map(out, "startup options", &options)
    }
}

/// PREPARE: a statement to prepare, optionally in a keyspace (v5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepare {
    /// The statement text.
    pub query: String,
    /// The keyspace (v5 flag 0x01).
    pub keyspace: Option<String>,
}

/// An event type a connection can REGISTER for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// `TOPOLOGY_CHANGE`
    TopologyChange,
    /// `STATUS_CHANGE`
    StatusChange,
    /// `SCHEMA_CHANGE`
    SchemaChange,
}

impl EventType {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            EventType::TopologyChange => "TOPOLOGY_CHANGE",
            EventType::StatusChange => "STATUS_CHANGE",
            EventType::SchemaChange => "SCHEMA_CHANGE",
        }
    }

    /// The event type for a wire name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "TOPOLOGY_CHANGE" => Some(EventType::TopologyChange),
            "STATUS_CHANGE" => Some(EventType::StatusChange),
            "SCHEMA_CHANGE" => Some(EventType::SchemaChange),
            _ => None,
        }
    }
}

/// A request message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// STARTUP
    Startup(Startup),
    /// AUTH_RESPONSE: a SASL token (`None` is a null [bytes]).
    AuthResponse(Option<Bytes>),
    /// OPTIONS
    Options,
    /// QUERY
    Query(Query),
    /// PREPARE
    Prepare(Prepare),
    /// EXECUTE
    Execute(Execute),
    /// BATCH
    Batch(Batch),
    /// REGISTER
    Register(Vec<EventType>),
}

impl Request {
    /// The opcode of this request.
    pub fn opcode(&self) -> Opcode {
        match self {
            Request::Startup(_) => Opcode::Startup,
            Request::AuthResponse(_) => Opcode::AuthResponse,
            Request::Options => Opcode::Options,
            Request::Query(_) => Opcode::Query,
            Request::Prepare(_) => Opcode::Prepare,
            Request::Execute(_) => Opcode::Execute,
            Request::Batch(_) => Opcode::Batch,
            Request::Register(_) => Opcode::Register,
        }
    }

    /// Reads the message part of a request body.
    pub fn read(
        opcode: Opcode,
        r: &mut WireReader,
        version: ProtocolVersion,
    ) -> Result<Self, WireError> {
        Ok(match opcode {
            Opcode::Startup => Request::Startup(Startup::read(r)?),
            Opcode::AuthResponse => Request::AuthResponse(r.bytes("auth token")?),
            Opcode::Options => Request::Options,
            Opcode::Query => Request::Query(Query::read(r, version)?),
            Opcode::Prepare => {
                let query = r.long_string("query string")?;
                let keyspace = if version >= ProtocolVersion::V5 {
                    let flags = r.int("prepare flags")?;
                    (flags & 0x01 != 0)
                        .then(|| r.string("keyspace"))
                        .transpose()?
                } else {
                    None
                };
                Request::Prepare(Prepare { query, keyspace })
            }
            Opcode::Execute => Request::Execute(Execute::read(r, version)?),
            Opcode::Batch => Request::Batch(Batch::read(r, version)?),
            Opcode::Register => {
                let names = r.string_list("event types")?;
                let mut events = Vec::with_capacity(names.len());
                for name in names {
                    events.push(
                        EventType::from_name(&name).ok_or_else(|| WireError::Invalid {
                            what: "event type",
                            detail: name.clone(),
                        })?,
                    );
                }
                Request::Register(events)
            }
            other => {
                return Err(WireError::Invalid {
                    what: "request opcode",
                    detail: format!("{other:?}"),
                });
            }
        })
    }

    /// Writes the message part of a request body.
    pub fn write(&self, out: &mut BytesMut, version: ProtocolVersion) -> Result<(), EncodeError> {
        match self {
            Request::Startup(s) => s.write(out),
            Request::AuthResponse(token) => put_bytes(out, "auth token", token.as_deref()),
            Request::Options => Ok(()),
            Request::Query(q) => q.write(out, version),
            Request::Prepare(p) => {
                put_long_string(out, "query string", &p.query)?;
                if version >= ProtocolVersion::V5 {
                    out.put_i32(i32::from(p.keyspace.is_some()));
                    if let Some(ks) = &p.keyspace {
                        put_string(out, "keyspace", ks)?;
                    }
                } else if p.keyspace.is_some() {
                    return Err(EncodeError::Invalid {
                        what: "PREPARE",
                        detail: "a keyspace needs protocol v5".into(),
                    });
                }
                Ok(())
            }
            Request::Execute(e) => e.write(out, version),
            Request::Batch(b) => b.write(out, version),
            Request::Register(events) => {
                let names: Vec<String> = events.iter().map(|e| e.name().to_string()).collect();
                put_string_list(out, "event types", &names)
            }
        }
    }
}

/// A decoded request with what its frame said around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFrame {
    /// The protocol version of the frame.
    pub version: ProtocolVersion,
    /// The stream to answer on.
    pub stream: i16,
    /// Whether the client asked for tracing (`khata_coordinator::trace`).
    pub tracing: bool,
    /// The custom payload, if the flag was set.
    pub custom_payload: Option<BytesMap>,
    /// The message.
    pub request: Request,
}

impl RequestFrame {
    /// Decodes a request from a whole frame. Trailing bytes after the message are ignored, as
    /// the spec asks (room for extensions).
    pub fn decode(frame: Frame) -> Result<Self, FrameError> {
        let Frame { header, body } = frame;
        let body_error = |source| FrameError::Body {
            stream: header.stream,
            opcode: header.opcode,
            source,
        };
        let mut r = WireReader::new(body);
        let custom_payload = if header.flags.contains(FrameFlags::CUSTOM_PAYLOAD) {
            Some(r.bytes_map("custom payload").map_err(body_error)?)
        } else {
            None
        };
        let request = Request::read(header.opcode, &mut r, header.version).map_err(body_error)?;
        Ok(RequestFrame {
            version: header.version,
            stream: header.stream,
            tracing: header.flags.contains(FrameFlags::TRACING),
            custom_payload,
            request,
        })
    }

    /// Encodes this request as a whole frame (header and body), compressing the body when
    /// `compression` is given (never for STARTUP, which precedes the negotiation).
    pub fn encode(
        &self,
        compression: Option<Compression>,
        out: &mut BytesMut,
    ) -> Result<(), EncodeError> {
        let mut body = BytesMut::new();
        let mut flags = FrameFlags::default().with(FrameFlags::TRACING, self.tracing);
        if let Some(payload) = &self.custom_payload {
            flags = flags.with(FrameFlags::CUSTOM_PAYLOAD, true);
            put_bytes_map(&mut body, "custom payload", payload)?;
        }
        self.request.write(&mut body, self.version)?;
        let compression = compression.filter(|_| {
            !matches!(self.request, Request::Startup(_)) && self.version < ProtocolVersion::V5
        });
        let body = match compression {
            Some(c) => {
                flags = flags.with(FrameFlags::COMPRESSION, true);
                c.compress(&body)
            }
            None => body.freeze(),
        };
        let length = u32::try_from(body.len()).map_err(|_| EncodeError::TooLong {
            what: "frame body",
            length: body.len(),
            max: u32::MAX as usize,
        })?;
        out.reserve(HEADER_LEN + body.len());
        FrameHeader {
            version: self.version,
            is_response: false,
            flags,
            stream: self.stream,
            opcode: self.request.opcode(),
            length,
        }
        .encode(out);
        out.put_slice(&body);
        Ok(())
    }
}
