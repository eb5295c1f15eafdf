//! Responses: what the server sends (spec §4.2), encoded from a [`ResponseFrame`].
//!
//! A response body is `[<tracing_id>][<warnings>][<custom_payload>]<message>`, each prefix
//! present when its header flag is set. Warnings and custom payloads exist from v4 on; on a v3
//! connection they are dropped rather than sent, since a v3 client could not parse them.
//! Compression applies to the whole body in v3/v4; in v5 the segments compress instead.
//!
//! [`encode_frame_error`] builds the ERROR frame that answers a [`FrameError`], in a version
//! the client can read: the step-down error for a too-new version (5 before framing, 0x41,
//! 0x42, ...) goes out as v4; for v1/v2 it goes out in their own 8-byte header layout.
//!
//! Decoding is here too, for tests and tools that play the client.

use bytes::{BufMut, Bytes, BytesMut};
use uuid::Uuid;

use super::compression::{Compression, DecompressError};
use super::error::{EncodeError, FrameError, WireError};
use super::error_body::ErrorBody;
use super::event::Event;
use super::header::{FrameFlags, FrameHeader, HEADER_LEN, Opcode, ProtocolVersion, RESPONSE_BIT};
use super::result::ResultBody;
use super::wire::{
    BytesMap, StringMultimap, WireReader, put_bytes, put_bytes_map, put_string, put_string_list,
    put_string_multimap,
};

/// A response message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// ERROR
    Error(ErrorBody),
    /// READY
    Ready,
    /// AUTHENTICATE: the authenticator's class name.
    Authenticate(String),
    /// SUPPORTED: option name to supported values.
    Supported(StringMultimap),
    /// RESULT
    Result(ResultBody),
    /// EVENT (sent on stream -1)
    Event(Event),
    /// AUTH_CHALLENGE: a SASL token.
    AuthChallenge(Option<Bytes>),
    /// AUTH_SUCCESS: a final SASL token.
    AuthSuccess(Option<Bytes>),
}

impl Response {
    /// The opcode of this response.
    pub fn opcode(&self) -> Opcode {
        match self {
            Response::Error(_) => Opcode::Error,
            Response::Ready => Opcode::Ready,
            Response::Authenticate(_) => Opcode::Authenticate,
            Response::Supported(_) => Opcode::Supported,
            Response::Result(_) => Opcode::Result,
            Response::Event(_) => Opcode::Event,
            Response::AuthChallenge(_) => Opcode::AuthChallenge,
            Response::AuthSuccess(_) => Opcode::AuthSuccess,
        }
    }

    /// Writes the message part of the body.
    pub fn write(&self, out: &mut BytesMut, version: ProtocolVersion) -> Result<(), EncodeError> {
        match self {
            Response::Error(e) => e.write(out, version),
            Response::Ready => Ok(()),
            Response::Authenticate(class) => put_string(out, "authenticator", class),
            Response::Supported(options) => put_string_multimap(out, "supported", options),
            Response::Result(result) => result.write(out, version),
            Response::Event(event) => event.write(out),
            Response::AuthChallenge(token) | Response::AuthSuccess(token) => {
                put_bytes(out, "auth token", token.as_deref())
            }
        }
    }

    /// Reads the message part of a body.
    pub fn read(
        opcode: Opcode,
        r: &mut WireReader,
        version: ProtocolVersion,
    ) -> Result<Self, WireError> {
        Ok(match opcode {
            Opcode::Error => Response::Error(ErrorBody::read(r, version)?),
            Opcode::Ready => Response::Ready,
            Opcode::Authenticate => Response::Authenticate(r.string("authenticator")?),
            Opcode::Supported => Response::Supported(r.string_multimap("supported")?),
            Opcode::Result => Response::Result(ResultBody::read(r, version)?),
            Opcode::Event => Response::Event(Event::read(r)?),
            Opcode::AuthChallenge => Response::AuthChallenge(r.bytes("auth token")?),
            Opcode::AuthSuccess => Response::AuthSuccess(r.bytes("auth token")?),
            other => {
                return Err(WireError::Invalid {
                    what: "response opcode",
                    detail: format!("{other:?}"),
                });
            }
        })
    }
}

/// A response with what its frame carries around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseFrame {
    /// The stream of the request answered (-1 for events).
    pub stream: i16,
    /// A tracing session id (khata accepts tracing requests but does not trace, so this is
    /// normally `None`).
    pub tracing_id: Option<Uuid>,
    /// Server warnings for the client (v4+).
    pub warnings: Vec<String>,
    /// A custom payload (v4+).
    pub custom_payload: Option<BytesMap>,
    /// The message.
    pub response: Response,
}

impl ResponseFrame {
    /// A plain response on `stream`.
    pub fn new(stream: i16, response: Response) -> Self {
        ResponseFrame {
            stream,
            tracing_id: None,
            warnings: Vec::new(),
            custom_payload: None,
            response,
        }
    }

    /// Encodes the whole frame (header and body) in `version`, compressing the body with
    /// `compression` when given (v3/v4 only: v5 compresses segments).
    pub fn encode(
        &self,
        version: ProtocolVersion,
        compression: Option<Compression>,
        out: &mut BytesMut,
    ) -> Result<(), EncodeError> {
        let mut body = BytesMut::new();
        let mut flags = FrameFlags::default();
        if let Some(id) = self.tracing_id {
            flags = flags.with(FrameFlags::TRACING, true);
            body.put_slice(id.as_bytes());
        }
        let v4 = version >= ProtocolVersion::V4;
        if v4 && !self.warnings.is_empty() {
            flags = flags.with(FrameFlags::WARNING, true);
            put_string_list(&mut body, "warnings", &self.warnings)?;
        }
        if let Some(payload) = self.custom_payload.as_ref().filter(|_| v4) {
            flags = flags.with(FrameFlags::CUSTOM_PAYLOAD, true);
            put_bytes_map(&mut body, "custom payload", payload)?;
        }
        self.response.write(&mut body, version)?;
        let body = match compression.filter(|_| version < ProtocolVersion::V5) {
            Some(c) => {
                flags = flags.with(FrameFlags::COMPRESSION, true);
                c.compress(&body)
            }
            None => body.freeze(),
        };
        let length = i32::try_from(body.len()).map_err(|_| EncodeError::TooLong {
            what: "frame body",
            length: body.len(),
            max: i32::MAX as usize,
        })?;
        out.reserve(HEADER_LEN + body.len());
        FrameHeader {
            version,
            is_response: true,
            flags,
            stream: self.stream,
            opcode: self.response.opcode(),
            length: length.unsigned_abs(),
        }
        .encode(out);
        out.put_slice(&body);
        Ok(())
    }

    /// Decodes one whole response frame from the front of `frame` (client side), returning it
    /// with its header. Compressed bodies are decompressed with `compression`, bounded by
    /// `max_len`.
    pub fn decode(
        frame: &[u8],
        compression: Option<Compression>,
        max_len: usize,
    ) -> Result<(FrameHeader, ResponseFrame), FrameError> {
        let header = decode_response_header(frame)?;
        let stream = header.stream;
        let body_err = |source| FrameError::Body {
            stream,
            opcode: header.opcode,
            source,
        };
        let len = usize::try_from(header.length).unwrap_or(usize::MAX);
        let raw = frame
            .get(HEADER_LEN..)
            .and_then(|rest| rest.get(..len))
            .ok_or_else(|| {
                body_err(WireError::Truncated {
                    what: "frame body",
                    needed: len,
                    available: frame.len().saturating_sub(HEADER_LEN),
                })
            })?;
        let compressed =
            header.flags.contains(FrameFlags::COMPRESSION) && header.version < ProtocolVersion::V5;
        let body = if compressed {
            let c = compression.ok_or(FrameError::CompressionNotNegotiated { stream })?;
            c.decompress(raw, max_len).map_err(|e| match e {
                DecompressError::TooLarge { declared, max } => FrameError::TooLarge {
                    stream,
                    length: declared,
                    max,
                },
                DecompressError::Corrupt(detail) => FrameError::Decompression { stream, detail },
            })?
        } else {
            Bytes::copy_from_slice(raw)
        };
        let mut r = WireReader::new(body);
        let tracing_id = if header.flags.contains(FrameFlags::TRACING) {
            Some(r.uuid("tracing id").map_err(body_err)?)
        } else {
            None
        };
        let warnings = if header.flags.contains(FrameFlags::WARNING) {
            r.string_list("warnings").map_err(body_err)?
        } else {
            Vec::new()
        };
        let custom_payload = if header.flags.contains(FrameFlags::CUSTOM_PAYLOAD) {
            Some(r.bytes_map("custom payload").map_err(body_err)?)
        } else {
            None
        };
        let response = Response::read(header.opcode, &mut r, header.version).map_err(body_err)?;
        Ok((
            header,
            ResponseFrame {
                stream,
                tracing_id,
                warnings,
                custom_payload,
                response,
            },
        ))
    }
}

fn decode_response_header(frame: &[u8]) -> Result<FrameHeader, FrameError> {
    let Some(head) = frame.first_chunk::<HEADER_LEN>() else {
        return Err(FrameError::Body {
            stream: 0,
            opcode: Opcode::Error,
            source: WireError::Truncated {
                what: "frame header",
                needed: HEADER_LEN,
                available: frame.len(),
            },
        });
    };
    let stream = i16::from_be_bytes([head[2], head[3]]);
    let number = head[0] & !RESPONSE_BIT;
    let Some(version) = ProtocolVersion::from_number(number) else {
        return Err(FrameError::UnsupportedVersion {
            version: number,
            stream: Some(stream),
            supported: "3/v3, 4/v4, 5/v5",
        });
    };
    let Some(opcode) = Opcode::from_code(head[4]) else {
        return Err(FrameError::UnknownOpcode {
            stream,
            opcode: head[4],
        });
    };
    Ok(FrameHeader {
        version,
        is_response: head[0] & RESPONSE_BIT != 0,
        flags: FrameFlags(head[1]),
        stream,
        opcode,
        length: u32::from_be_bytes([head[5], head[6], head[7], head[8]]),
    })
}

/// Encodes the ERROR frame answering `err` on its stream (stream 0 when unknown), as a protocol
/// error (0x000A) whose message is the error's text.
///
/// The version is one the client can read: v4 for a version newer than the server's (the
/// frame drivers step down on), the v1/v2 8-byte layout for those versions, and otherwise the
/// connection's version (`connection_version`, v4 when not yet known). In v5 the result is an
/// envelope the caller wraps in a segment once framing is on.
pub fn encode_frame_error(
    err: &FrameError,
    connection_version: Option<ProtocolVersion>,
    out: &mut BytesMut,
) {
    let stream = err.stream().unwrap_or(0);
    let body = ErrorBody::from_frame_error(err);
    let mut encoded = BytesMut::new();
    // A protocol error message is well under 64 KiB; if a future message were not, the
    // truncation below keeps the frame valid rather than failing to answer at all.
    let message: String = body.message.chars().take(8192).collect();
    let body = ErrorBody::new(body.kind, message);
    let version = match err {
        FrameError::UnsupportedVersion { version, .. } if *version <= 2 => {
            // v1/v2: version, flags, one-byte stream, opcode, length.
            let mut payload = BytesMut::new();
            let _ = body.write(&mut payload, ProtocolVersion::V3);
            encoded.put_u8(*version | RESPONSE_BIT);
            encoded.put_u8(0);
            encoded.put_i8(i8::try_from(stream).unwrap_or(0));
            encoded.put_u8(Opcode::Error.code());
            encoded.put_u32(u32::try_from(payload.len()).unwrap_or(0));
            encoded.put_slice(&payload);
            out.put_slice(&encoded);
            return;
        }
        FrameError::UnsupportedVersion { .. } => ProtocolVersion::V4,
        _ => connection_version.unwrap_or(ProtocolVersion::V4),
    };
    let frame = ResponseFrame::new(stream, Response::Error(body));
    if frame.encode(version, None, &mut encoded).is_ok() {
        out.put_slice(&encoded);
    }
}
