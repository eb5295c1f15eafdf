//! The streaming frame decoder: bytes from a connection in, whole [`Frame`]s out.
//!
//! [`FrameDecoder::decode`] looks at the front of a [`BytesMut`] the connection appends to and
//! returns `Ok(None)` until a whole frame is there. It validates the header as soon as its
//! nine bytes are in:
//!
//! - the version: 3 and 4 (and 5, unframed, when [`DecoderConfig::accept_v5`] is set, for the
//!   STARTUP/OPTIONS exchange that precedes v5 framing); anything else is
//!   [`FrameError::UnsupportedVersion`], the error that makes drivers step down;
//! - the length against `native_transport_max_frame_size` *before* buffering the body: an
//!   oversized frame is an error right away and its body is then skipped as it arrives, never
//!   held in memory;
//! - the opcode: unknown or response opcodes are errors, their bodies skipped.
//!
//! Errors carry the stream id so the server can answer on it; [`FrameError::is_fatal`] says
//! whether decoding can go on. Compressed bodies are decompressed here (bounded by the same
//! limit) once STARTUP has negotiated an algorithm.
//!
//! The decoder never panics and never allocates more than the frame limit, whatever the input.

use bytes::{Buf, Bytes, BytesMut};

use super::compression::{Compression, DecompressError};
use super::error::FrameError;
use super::header::{
    FrameFlags, FrameHeader, HEADER_LEN, Opcode, ProtocolVersion, RESPONSE_BIT, legacy_stream,
    modern_stream,
};

/// Cassandra's default `native_transport_max_frame_size`: 16 MiB.
pub const DEFAULT_MAX_FRAME_SIZE_BYTES: usize = 16 * 1024 * 1024;

/// What the decoder accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecoderConfig {
    /// The largest frame body accepted, compressed or decompressed
    /// (`native_transport_max_frame_size`).
    pub max_frame_size_bytes: usize,
    /// Whether v5 is accepted. Set only when the server also switches to v5 framing after
    /// READY; until then a v5 request gets the step-down error.
    pub accept_v5: bool,
}

impl Default for DecoderConfig {
    fn default() -> Self {
        DecoderConfig {
            max_frame_size_bytes: DEFAULT_MAX_FRAME_SIZE_BYTES,
            accept_v5: false,
        }
    }
}

impl DecoderConfig {
    /// The versions accepted, as the step-down error lists them.
    pub fn supported_versions(&self) -> &'static str {
        if self.accept_v5 {
            "3/v3, 4/v4, 5/v5"
        } else {
            "3/v3, 4/v4"
        }
    }
}

/// A whole frame: its header and its (decompressed) body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The header as received (its `length` is the length on the wire).
    pub header: FrameHeader,
    /// The body, decompressed if it was compressed.
    pub body: Bytes,
}

/// Decodes request frames from a connection's byte stream.
#[derive(Debug, Clone)]
pub struct FrameDecoder {
    config: DecoderConfig,
    compression: Option<Compression>,
    pinned: Option<ProtocolVersion>,
    /// Body bytes of a rejected frame still to be dropped as they arrive.
    skip: u64,
}

impl FrameDecoder {
    /// A decoder with the given limits, no compression, no version pinned.
    pub fn new(config: DecoderConfig) -> Self {
        FrameDecoder {
            config,
            compression: None,
            pinned: None,
            skip: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &DecoderConfig {
        &self.config
    }

    /// Sets the compression STARTUP negotiated; frames with the compression flag are
    /// decompressed with it from now on.
    pub fn set_compression(&mut self, compression: Option<Compression>) {
        self.compression = compression;
    }

    /// Pins the connection to a version (done after STARTUP): frames of another version are
    /// then [`FrameError::VersionMismatch`].
    pub fn pin_version(&mut self, version: ProtocolVersion) {
        self.pinned = Some(version);
    }

    /// Whether the body of a rejected frame is still being dropped: the next bytes belong to
    /// it, not to a new frame. (v5 framing checks this: a self-contained segment must not end
    /// inside an envelope, rejected or not.)
    pub fn is_skipping(&self) -> bool {
        self.skip > 0
    }

    /// Decodes the next frame from the front of `buf`, consuming it. `Ok(None)`: not enough
    /// bytes yet (everything read so far stays in `buf`, except the body of a rejected frame,
    /// which is dropped as it arrives).
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        if self.skip > 0 {
            let n = usize::try_from(self.skip)
                .unwrap_or(usize::MAX)
                .min(buf.len());
            buf.advance(n);
            self.skip -= n as u64;
            if self.skip > 0 {
                return Ok(None);
            }
        }
        let Some(&version_byte) = buf.first() else {
            return Ok(None);
        };
        let number = version_byte & !RESPONSE_BIT;
        let version = match ProtocolVersion::from_number(number) {
            Some(ProtocolVersion::V5) if !self.config.accept_v5 => None,
            other => other,
        };
        let Some(version) = version else {
            return self.unsupported(buf, number);
        };
        if buf.len() < HEADER_LEN {
            return Ok(None);
        }
        let stream = i16::from_be_bytes([buf[2], buf[3]]);
        if version_byte & RESPONSE_BIT != 0 {
            return Err(FrameError::NotARequest {
                stream,
                version_byte,
            });
        }
        if let Some(pinned) = self.pinned
            && pinned != version
        {
            return Err(FrameError::VersionMismatch {
                stream,
                got: number,
                expected: pinned.number(),
            });
        }
        let flags = FrameFlags(buf[1]);
        let opcode_byte = buf[4];
        let length = u32::from_be_bytes([buf[5], buf[6], buf[7], buf[8]]);
        let body_len = usize::try_from(length).unwrap_or(usize::MAX);
        if body_len > self.config.max_frame_size_bytes {
            self.reject(buf, length);
            return Err(FrameError::TooLarge {
                stream,
                length: u64::from(length),
                max: self.config.max_frame_size_bytes,
            });
        }
        let Some(opcode) = Opcode::from_code(opcode_byte) else {
            self.reject(buf, length);
            return Err(FrameError::UnknownOpcode {
                stream,
                opcode: opcode_byte,
            });
        };
        if !opcode.is_request() {
            self.reject(buf, length);
            return Err(FrameError::UnexpectedOpcode { stream, opcode });
        }
        if buf.len() < HEADER_LEN + body_len {
            buf.reserve(HEADER_LEN + body_len - buf.len());
            return Ok(None);
        }
        buf.advance(HEADER_LEN);
        let raw = buf.split_to(body_len).freeze();
        let header = FrameHeader {
            version,
            is_response: false,
            flags,
            stream,
            opcode,
            length,
        };
        // In v5 the compression flag is deprecated and ignored: segments carry compression.
        let compressed = flags.contains(FrameFlags::COMPRESSION) && version < ProtocolVersion::V5;
        let body = if compressed {
            self.decompress(stream, &raw)?
        } else {
            raw
        };
        Ok(Some(Frame { header, body }))
    }

    fn unsupported(&self, buf: &BytesMut, number: u8) -> Result<Option<Frame>, FrameError> {
        // v1 and v2 headers are 8 bytes with a one-byte stream; everything else (v3+, the DSE
        // betas 0x41/0x42, garbage) is read as the 9-byte layout. Wait for the stream bytes so
        // the answer goes to the stream the driver is listening on.
        let stream = if number <= 2 {
            legacy_stream(buf)
        } else {
            modern_stream(buf)
        };
        if stream.is_none() {
            return Ok(None);
        }
        Err(FrameError::UnsupportedVersion {
            version: number,
            stream,
            supported: self.config.supported_versions(),
        })
    }

    /// Drops the header of a rejected frame and arranges for its body to be skipped.
    fn reject(&mut self, buf: &mut BytesMut, length: u32) {
        buf.advance(HEADER_LEN);
        let now = buf.len().min(usize::try_from(length).unwrap_or(usize::MAX));
        buf.advance(now);
        self.skip = u64::from(length) - now as u64;
    }

    fn decompress(&self, stream: i16, raw: &[u8]) -> Result<Bytes, FrameError> {
        let Some(compression) = self.compression else {
            return Err(FrameError::CompressionNotNegotiated { stream });
        };
        compression
            .decompress(raw, self.config.max_frame_size_bytes)
            .map_err(|e| match e {
                DecompressError::TooLarge { declared, max } => FrameError::TooLarge {
                    stream,
                    length: declared,
                    max,
                },
                DecompressError::Corrupt(detail) => FrameError::Decompression { stream, detail },
            })
    }
}
