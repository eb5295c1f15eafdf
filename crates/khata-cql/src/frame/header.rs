//! The 9-byte frame header of protocol v3 and v4 (the "envelope" header of v5):
//!
//! ```text
//! version (1) | flags (1) | stream (2, signed) | opcode (1) | length (4)
//! ```
//!
//! All big-endian. The version byte's top bit is the direction (0 request, 1 response); the
//! low seven bits are the protocol version. v1 and v2 used an 8-byte header with a one-byte
//! stream; this server does not speak them, but [`legacy_stream`] reads their stream id so
//! the step-down error can be sent on the right stream.

use bytes::{BufMut, BytesMut};

/// Length of the v3/v4/v5 frame header.
pub const HEADER_LEN: usize = 9;

/// The direction bit of the version byte: set on responses.
pub const RESPONSE_BIT: u8 = 0x80;

/// A protocol version this crate can speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// Protocol v3 (Cassandra 2.1).
    V3,
    /// Protocol v4 (Cassandra 2.2 to 4.x): what drivers settle on today.
    V4,
    /// Protocol v5 (Cassandra 4.0+): only with its checksummed framing after STARTUP.
    V5,
}

impl ProtocolVersion {
    /// The version number (3, 4 or 5).
    pub fn number(self) -> u8 {
        match self {
            ProtocolVersion::V3 => 3,
            ProtocolVersion::V4 => 4,
            ProtocolVersion::V5 => 5,
        }
    }

    /// The version for a number, if this crate speaks it.
    pub fn from_number(n: u8) -> Option<Self> {
        match n {
            3 => Some(ProtocolVersion::V3),
            4 => Some(ProtocolVersion::V4),
            5 => Some(ProtocolVersion::V5),
            _ => None,
        }
    }

    /// Whether [value]s may be "not set" (-2): v4 and later.
    pub fn allows_unset(self) -> bool {
        self >= ProtocolVersion::V4
    }

    /// Whether query flags are an [int] (v5) rather than a [byte].
    pub fn int_flags(self) -> bool {
        self >= ProtocolVersion::V5
    }
}

/// A message opcode (spec §2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Opcode {
    /// 0x00
    Error,
    /// 0x01
    Startup,
    /// 0x02
    Ready,
    /// 0x03
    Authenticate,
    /// 0x05
    Options,
    /// 0x06
    Supported,
    /// 0x07
    Query,
    /// 0x08
    Result,
    /// 0x09
    Prepare,
    /// 0x0A
    Execute,
    /// 0x0B
    Register,
    /// 0x0C
    Event,
    /// 0x0D
    Batch,
    /// 0x0E
    AuthChallenge,
    /// 0x0F
    AuthResponse,
    /// 0x10
    AuthSuccess,
}

impl Opcode {
    /// The opcode byte.
    pub fn code(self) -> u8 {
        match self {
            Opcode::Error => 0x00,
            Opcode::Startup => 0x01,
            Opcode::Ready => 0x02,
            Opcode::Authenticate => 0x03,
            Opcode::Options => 0x05,
            Opcode::Supported => 0x06,
            Opcode::Query => 0x07,
            Opcode::Result => 0x08,
            Opcode::Prepare => 0x09,
            Opcode::Execute => 0x0A,
            Opcode::Register => 0x0B,
            Opcode::Event => 0x0C,
            Opcode::Batch => 0x0D,
            Opcode::AuthChallenge => 0x0E,
            Opcode::AuthResponse => 0x0F,
            Opcode::AuthSuccess => 0x10,
        }
    }

    /// The opcode for a byte, if defined.
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0x00 => Opcode::Error,
            0x01 => Opcode::Startup,
            0x02 => Opcode::Ready,
            0x03 => Opcode::Authenticate,
            0x05 => Opcode::Options,
            0x06 => Opcode::Supported,
            0x07 => Opcode::Query,
            0x08 => Opcode::Result,
            0x09 => Opcode::Prepare,
            0x0A => Opcode::Execute,
            0x0B => Opcode::Register,
            0x0C => Opcode::Event,
            0x0D => Opcode::Batch,
            0x0E => Opcode::AuthChallenge,
            0x0F => Opcode::AuthResponse,
            0x10 => Opcode::AuthSuccess,
            _ => return None,
        })
    }

    /// Whether a client may send this opcode.
    pub fn is_request(self) -> bool {
        matches!(
            self,
            Opcode::Startup
                | Opcode::Options
                | Opcode::Query
                | Opcode::Prepare
                | Opcode::Execute
                | Opcode::Register
                | Opcode::Batch
                | Opcode::AuthResponse
        )
    }
}

/// The header flags byte (spec §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct FrameFlags(pub u8);

impl FrameFlags {
    /// 0x01: the body is compressed (ignored in v5, where framing compresses).
    pub const COMPRESSION: u8 = 0x01;
    /// 0x02: tracing requested (request) or tracing id present (response).
    pub const TRACING: u8 = 0x02;
    /// 0x04: a custom payload [bytes map] precedes the message (v4+).
    pub const CUSTOM_PAYLOAD: u8 = 0x04;
    /// 0x08: a warnings [string list] precedes the message (responses, v4+).
    pub const WARNING: u8 = 0x08;
    /// 0x10: the client opts in to a beta protocol version (v5).
    pub const USE_BETA: u8 = 0x10;

    /// Whether every bit of `mask` is set.
    pub fn contains(self, mask: u8) -> bool {
        self.0 & mask == mask
    }

    /// These flags with `mask` set or cleared.
    pub fn with(self, mask: u8, on: bool) -> Self {
        if on {
            FrameFlags(self.0 | mask)
        } else {
            FrameFlags(self.0 & !mask)
        }
    }
}

/// A decoded frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// The protocol version.
    pub version: ProtocolVersion,
    /// Whether the direction bit says "response".
    pub is_response: bool,
    /// The flags.
    pub flags: FrameFlags,
    /// The stream id; negative ids are server-initiated (events use -1).
    pub stream: i16,
    /// The message type.
    pub opcode: Opcode,
    /// The body length in bytes as sent (compressed length if compressed).
    pub length: u32,
}

impl FrameHeader {
    /// Writes the 9 header bytes.
    pub fn encode(&self, out: &mut BytesMut) {
        let direction = if self.is_response { RESPONSE_BIT } else { 0 };
        out.put_u8(self.version.number() | direction);
        out.put_u8(self.flags.0);
        out.put_i16(self.stream);
        out.put_u8(self.opcode.code());
        out.put_u32(self.length);
    }
}

/// The stream id of a v3+ style header: bytes 2..4, when present.
pub fn modern_stream(buf: &[u8]) -> Option<i16> {
    (buf.len() >= 4).then(|| i16::from_be_bytes([buf[2], buf[3]]))
}

/// The stream id of a v1/v2 header (one signed byte at offset 2), when present.
pub fn legacy_stream(buf: &[u8]) -> Option<i16> {
    buf.get(2).map(|b| i16::from(i8::from_be_bytes([*b])))
}
