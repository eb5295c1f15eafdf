//! The frame layer's typed errors.
//!
//! Two levels: [`WireError`] says what is wrong inside a body (a truncated [string], a bad
//! [consistency], a negative length), and [`FrameError`] says what is wrong with a frame as a
//! whole and carries the stream id when the header got far enough to have one, so that the
//! server can answer with a protocol ERROR (code 0x000A) on that stream. [`FrameError::is_fatal`]
//! says whether the byte stream can still be trusted afterwards: when it cannot (an unknown
//! version, a checksum mismatch), the server answers and closes the connection.
//!
//! Encoding has its own [`EncodeError`]: a value that does not fit its wire field (a [string]
//! longer than 65535 bytes, a body over the frame limit). It is a server-side bug or an
//! oversized result, answered with a server error by the caller.

use thiserror::Error;

use super::header::Opcode;

/// What is wrong inside a message body: the primitives of spec §3 and the message layouts.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The body ended before a field was complete.
    #[error("not enough bytes to read {what}: {needed} needed, {available} available")]
    Truncated {
        /// The field being read.
        what: &'static str,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left in the body.
        available: usize,
    },
    /// A length prefix is negative where that is not allowed, or below -2 for a [value].
    #[error("invalid length {length} for {what}")]
    InvalidLength {
        /// The field being read.
        what: &'static str,
        /// The length read.
        length: i64,
    },
    /// A [string] or [long string] is not UTF-8: Cassandra's words (`CBUtil.decodeString`),
    /// with the bytes in hex (the first KiB of them).
    #[error(
        "Cannot decode string as UTF8: '{hex}'; java.nio.charset.MalformedInputException: Input length = 1"
    )]
    InvalidUtf8 {
        /// The field being read.
        what: &'static str,
        /// The bytes, in hex.
        hex: String,
    },
    /// A [consistency] outside 0x0000..=0x000A.
    #[error("unknown consistency level 0x{0:04X}")]
    UnknownConsistency(u16),
    /// A field holds a value the protocol does not define (an unknown batch type, option id,
    /// result kind, event type, ...).
    #[error("invalid {what}: {detail}")]
    Invalid {
        /// The field being read.
        what: &'static str,
        /// What was found.
        detail: String,
    },
    /// An [option] type nests deeper than [`MAX_TYPE_DEPTH`](super::types::MAX_TYPE_DEPTH).
    #[error("type nesting deeper than {0} levels")]
    TypeTooDeep(usize),
}

/// What is wrong with a frame (or a v5 segment). Each variant maps to a protocol ERROR.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// A version this server does not speak (v1, v2, the DSE 0x41/0x42 betas, v5 before v5
    /// framing is enabled, anything above). The answer must be the step-down error drivers
    /// look for, in a version they understand (see [`FrameError::response_version`]).
    #[error(
        "Invalid or unsupported protocol version ({version}); supported versions are ({supported})"
    )]
    UnsupportedVersion {
        /// The version byte without the direction bit.
        version: u8,
        /// The stream id, when the header was long enough to read it.
        stream: Option<i16>,
        /// The versions this decoder accepts, as `3/v3, 4/v4`.
        supported: &'static str,
    },
    /// A frame whose version differs from the one the connection started with.
    #[error(
        "Invalid message version. Got {got} but previous messages on this connection had version {expected}"
    )]
    VersionMismatch {
        /// The frame's stream id.
        stream: i16,
        /// The version of this frame.
        got: u8,
        /// The version the connection is pinned to.
        expected: u8,
    },
    /// A frame with the response direction bit set was sent to the server.
    #[error(
        "Invalid request: the frame has the response direction bit set (version byte 0x{version_byte:02X})"
    )]
    NotARequest {
        /// The frame's stream id.
        stream: i16,
        /// The raw version byte.
        version_byte: u8,
    },
    /// An opcode byte the protocol does not define.
    #[error("Unknown opcode 0x{opcode:02X}")]
    UnknownOpcode {
        /// The frame's stream id.
        stream: i16,
        /// The opcode byte.
        opcode: u8,
    },
    /// A response opcode (READY, RESULT, ...) sent as a request.
    #[error("Unexpected message {opcode:?}: not a request")]
    UnexpectedOpcode {
        /// The frame's stream id.
        stream: i16,
        /// The opcode.
        opcode: Opcode,
    },
    /// The body is longer than `native_transport_max_frame_size`. Detected from the header,
    /// before any of the body is buffered; the decoder then skips the body.
    #[error("Request is too big: length {length} exceeds maximum allowed length {max}")]
    TooLarge {
        /// The frame's stream id.
        stream: i16,
        /// The body length the header declares (or the decompressed length).
        length: u64,
        /// The configured limit in bytes.
        max: usize,
    },
    /// The compression flag is set but STARTUP did not negotiate compression.
    #[error("Received a compressed frame but no compression was negotiated")]
    CompressionNotNegotiated {
        /// The frame's stream id.
        stream: i16,
    },
    /// A compressed body could not be decompressed.
    #[error("Could not decompress the frame body: {detail}")]
    Decompression {
        /// The frame's stream id.
        stream: i16,
        /// What the decompressor said.
        detail: String,
    },
    /// The body of a message is malformed.
    #[error("Invalid {opcode:?} message: {source}")]
    Body {
        /// The frame's stream id.
        stream: i16,
        /// The message's opcode.
        opcode: Opcode,
        /// What is wrong.
        source: WireError,
    },
    /// A v5 segment is malformed (bad CRC, bad length, out-of-order parts).
    #[error("Invalid v5 frame: {0}")]
    Segment(#[from] SegmentError),
}

/// What is wrong with a v5 segment (spec v5 §2). All of them are fatal: once a checksum fails
/// the byte stream cannot be resynchronised.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SegmentError {
    /// The CRC24 of the segment header does not match.
    #[error("header CRC24 mismatch: computed 0x{computed:06X}, received 0x{received:06X}")]
    HeaderCrc {
        /// CRC computed over the received header.
        computed: u32,
        /// CRC carried by the segment.
        received: u32,
    },
    /// The CRC32 of the payload does not match.
    #[error("payload CRC32 mismatch: computed 0x{computed:08X}, received 0x{received:08X}")]
    PayloadCrc {
        /// CRC computed over the received payload.
        computed: u32,
        /// CRC carried by the segment.
        received: u32,
    },
    /// A compressed payload did not decompress to its declared length.
    #[error("payload decompression failed: {0}")]
    Decompression(String),
    /// A payload longer than the 128 KiB - 1 a segment can carry.
    #[error("payload of {0} bytes exceeds the segment maximum of 131071")]
    PayloadTooLarge(usize),
    /// Segments arrived in an order the framing does not allow (a self-contained segment in the
    /// middle of a split envelope, or a self-contained segment holding a partial envelope).
    #[error("segment sequence error: {0}")]
    Sequence(&'static str),
}

/// A value that cannot be written in its wire field.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// A length does not fit its prefix ([short] for [string] and counts, [int] for [bytes]).
    #[error("{what} of length {length} does not fit its length prefix (max {max})")]
    TooLong {
        /// The field being written.
        what: &'static str,
        /// Its length.
        length: usize,
        /// The most the prefix can say.
        max: usize,
    },
    /// A value the message cannot carry in this protocol version or shape.
    #[error("cannot encode {what}: {detail}")]
    Invalid {
        /// The field being written.
        what: &'static str,
        /// Why.
        detail: String,
    },
    /// A whole frame body longer than the frame limit.
    #[error("frame body of {length} bytes exceeds the maximum of {max}")]
    FrameTooLarge {
        /// Body length.
        length: usize,
        /// The limit.
        max: usize,
    },
}

impl FrameError {
    /// The stream to answer on, when known. Without one the server can only close the
    /// connection (or answer on stream 0, which is what Cassandra does for v1/v2 handshakes).
    pub fn stream(&self) -> Option<i16> {
        match self {
            FrameError::UnsupportedVersion { stream, .. } => *stream,
            FrameError::VersionMismatch { stream, .. }
            | FrameError::NotARequest { stream, .. }
            | FrameError::UnknownOpcode { stream, .. }
            | FrameError::UnexpectedOpcode { stream, .. }
            | FrameError::TooLarge { stream, .. }
            | FrameError::CompressionNotNegotiated { stream }
            | FrameError::Decompression { stream, .. }
            | FrameError::Body { stream, .. } => Some(*stream),
            FrameError::Segment(_) => None,
        }
    }

    /// Whether the connection must close after the error is answered: the decoder cannot find
    /// the next frame boundary (unknown header format, broken v5 checksum, version mismatch).
    /// Every other error has consumed exactly the offending frame and decoding can continue.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            FrameError::UnsupportedVersion { .. }
                | FrameError::VersionMismatch { .. }
                | FrameError::NotARequest { .. }
                | FrameError::Segment(_)
        )
    }
}
