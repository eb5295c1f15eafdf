//! Protocol v5 framing (spec v5 §2): after STARTUP is answered, envelopes (the v4-style frames)
//! travel inside checksummed segments.
//!
//! ```text
//! uncompressed: header (3 bytes LE: payload length:17 | self-contained:1 | padding:6)
//!               CRC24 of those 3 bytes (3 bytes LE)
//!               payload (up to 128 KiB - 1)
//!               CRC32 of the payload (4 bytes LE)
//! lz4:          header (5 bytes LE: compressed length:17 | uncompressed length:17 |
//!                                   self-contained:1 | padding:5)
//!               CRC24 of those 5 bytes (3 bytes LE)
//!               compressed payload (an uncompressed length of 0 means "stored as is")
//!               CRC32 of the compressed payload (4 bytes LE)
//! ```
//!
//! The CRC24 is Koopman's polynomial 0x1974F0B with initial value 0x875060, fed the header
//! bytes in wire order; the CRC32 is the IEEE CRC32 (crc32fast) primed with the four bytes
//! `FA 2D 55 CA` before the payload, as Cassandra's `Crc.crc32()` is. A self-contained segment
//! holds one or more whole envelopes; an envelope larger than a segment is split over
//! consecutive non-self-contained segments.
//!
//! [`SegmentDecoder`] and [`encode_segment`] handle one segment; [`FramedDecoder`] turns a v5
//! byte stream into request [`Frame`]s (with the same limits as [`FrameDecoder`]);
//! [`SegmentWriter`] packs response envelopes into segments. A checksum failure is fatal: the
//! stream cannot be resynchronised, so the connection closes.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use super::decoder::{Frame, FrameDecoder};
use super::error::{FrameError, SegmentError};

/// The largest payload one segment carries: 128 KiB - 1.
pub const MAX_SEGMENT_PAYLOAD: usize = 128 * 1024 - 1;

const UNCOMPRESSED_HEADER_LEN: usize = 6;
const COMPRESSED_HEADER_LEN: usize = 8;
const TRAILER_LEN: usize = 4;
const CRC24_INIT: u32 = 0x0087_5060;
const CRC24_POLY: u32 = 0x0197_4F0B;
const CRC32_PRIMER: [u8; 4] = [0xFA, 0x2D, 0x55, 0xCA];
const LENGTH_MASK: u64 = 0x1_FFFF;

/// The CRC24 of a segment header.
pub fn crc24(bytes: &[u8]) -> u32 {
    let mut crc = CRC24_INIT;
    for &b in bytes {
        crc ^= u32::from(b) << 16;
        for _ in 0..8 {
            crc <<= 1;
            if crc & 0x0100_0000 != 0 {
                crc ^= CRC24_POLY;
            }
        }
    }
    crc & 0x00FF_FFFF
}

/// The CRC32 of a segment payload (primed as Cassandra primes it).
pub fn payload_crc32(payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&CRC32_PRIMER);
    hasher.update(payload);
    hasher.finalize()
}

/// One decoded segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Whether the payload is whole envelopes (else part of one large envelope).
    pub self_contained: bool,
    /// The (decompressed) payload.
    pub payload: Bytes,
}

/// Writes one segment. `lz4` selects the compressed layout (what STARTUP negotiated); a payload
/// that does not shrink is stored as is, flagged by an uncompressed length of 0.
pub fn encode_segment(
    payload: &[u8],
    self_contained: bool,
    lz4: bool,
    out: &mut BytesMut,
) -> Result<(), SegmentError> {
    if payload.len() > MAX_SEGMENT_PAYLOAD {
        return Err(SegmentError::PayloadTooLarge(payload.len()));
    }
    let flag = u64::from(self_contained);
    if !lz4 {
        let header = payload.len() as u64 | flag << 17;
        let bytes = header.to_le_bytes();
        out.reserve(UNCOMPRESSED_HEADER_LEN + payload.len() + TRAILER_LEN);
        out.put_slice(&bytes[..3]);
        out.put_slice(&crc24(&bytes[..3]).to_le_bytes()[..3]);
        out.put_slice(payload);
        out.put_u32_le(payload_crc32(payload));
        return Ok(());
    }
    let compressed = lz4_flex::block::compress(payload);
    let (body, uncompressed_len) = if compressed.len() < payload.len() {
        (compressed.as_slice(), payload.len() as u64)
    } else {
        (payload, 0)
    };
    let header = body.len() as u64 | uncompressed_len << 17 | flag << 34;
    let bytes = header.to_le_bytes();
    out.reserve(COMPRESSED_HEADER_LEN + body.len() + TRAILER_LEN);
    out.put_slice(&bytes[..5]);
    out.put_slice(&crc24(&bytes[..5]).to_le_bytes()[..3]);
    out.put_slice(body);
    out.put_u32_le(payload_crc32(body));
    Ok(())
}

/// Decodes segments from a byte stream.
#[derive(Debug, Clone)]
pub struct SegmentDecoder {
    lz4: bool,
}

impl SegmentDecoder {
    /// A decoder for the uncompressed (`lz4` false) or LZ4 layout.
    pub fn new(lz4: bool) -> Self {
        SegmentDecoder { lz4 }
    }

    /// Decodes the next segment from the front of `buf`; `Ok(None)` until it is whole.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Segment>, SegmentError> {
        let header_len = if self.lz4 {
            COMPRESSED_HEADER_LEN
        } else {
            UNCOMPRESSED_HEADER_LEN
        };
        if buf.len() < header_len {
            return Ok(None);
        }
        let covered = header_len - 3;
        let mut raw = [0u8; 8];
        raw[..covered].copy_from_slice(&buf[..covered]);
        let header = u64::from_le_bytes(raw);
        let received = u32::from(buf[covered])
            | u32::from(buf[covered + 1]) << 8
            | u32::from(buf[covered + 2]) << 16;
        let computed = crc24(&buf[..covered]);
        if computed != received {
            return Err(SegmentError::HeaderCrc { computed, received });
        }
        let wire_len = (header & LENGTH_MASK) as usize;
        let (uncompressed_len, self_contained) = if self.lz4 {
            ((header >> 17 & LENGTH_MASK) as usize, header >> 34 & 1 == 1)
        } else {
            (0, header >> 17 & 1 == 1)
        };
        let total = header_len + wire_len + TRAILER_LEN;
        if buf.len() < total {
            buf.reserve(total - buf.len());
            return Ok(None);
        }
        buf.advance(header_len);
        let body = buf.split_to(wire_len).freeze();
        let received = buf.get_u32_le();
        let computed = payload_crc32(&body);
        if computed != received {
            return Err(SegmentError::PayloadCrc { computed, received });
        }
        let payload = if self.lz4 && uncompressed_len > 0 {
            let mut out = vec![0u8; uncompressed_len];
            let n = lz4_flex::block::decompress_into(&body, &mut out)
                .map_err(|e| SegmentError::Decompression(e.to_string()))?;
            if n != uncompressed_len {
                return Err(SegmentError::Decompression(format!(
                    "{n} bytes decompressed, {uncompressed_len} declared"
                )));
            }
            Bytes::from(out)
        } else {
            body
        };
        Ok(Some(Segment {
            self_contained,
            payload,
        }))
    }
}

/// Decodes request frames from a v5 connection after the handshake: segments in, envelopes
/// out, with the envelope limits of the inner [`FrameDecoder`].
#[derive(Debug, Clone)]
pub struct FramedDecoder {
    segments: SegmentDecoder,
    envelopes: FrameDecoder,
    pending: BytesMut,
    last_self_contained: bool,
}

impl FramedDecoder {
    /// A decoder reading segments (LZ4 when `lz4`) and envelopes with `envelopes`.
    pub fn new(lz4: bool, envelopes: FrameDecoder) -> Self {
        FramedDecoder {
            segments: SegmentDecoder::new(lz4),
            envelopes,
            pending: BytesMut::new(),
            last_self_contained: false,
        }
    }

    /// Decodes the next request frame; `Ok(None)` until one is whole.
    ///
    /// An envelope the inner decoder rejects (too large, unknown opcode) is an error for that
    /// envelope only: its remaining bytes are skipped as its segments arrive, and decoding goes
    /// on. Segments that break the framing (a checksum, a self-contained segment ending inside
    /// an envelope, or arriving in the middle of one) are fatal.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        loop {
            if self.inside_envelope() {
                if let Some(frame) = self.envelopes.decode(&mut self.pending)? {
                    return Ok(Some(frame));
                }
                if self.last_self_contained && self.inside_envelope() {
                    return Err(SegmentError::Sequence(
                        "a self-contained segment ends inside an envelope",
                    )
                    .into());
                }
            }
            let Some(segment) = self.segments.decode(buf)? else {
                return Ok(None);
            };
            if segment.self_contained && self.inside_envelope() {
                return Err(SegmentError::Sequence(
                    "a self-contained segment arrived while an envelope was incomplete",
                )
                .into());
            }
            self.last_self_contained = segment.self_contained;
            self.pending.extend_from_slice(&segment.payload);
        }
    }

    /// Whether the bytes received so far stop inside an envelope (whole or being skipped).
    fn inside_envelope(&self) -> bool {
        !self.pending.is_empty() || self.envelopes.is_skipping()
    }
}

/// Packs envelopes into segments: small envelopes share self-contained segments, a large one
/// is split over non-self-contained segments.
#[derive(Debug, Clone)]
pub struct SegmentWriter {
    lz4: bool,
    batch: BytesMut,
}

impl SegmentWriter {
    /// A writer producing the uncompressed or LZ4 layout.
    pub fn new(lz4: bool) -> Self {
        SegmentWriter {
            lz4,
            batch: BytesMut::new(),
        }
    }

    /// Adds one whole envelope, writing segments to `out` as they fill.
    pub fn push_envelope(
        &mut self,
        envelope: &[u8],
        out: &mut BytesMut,
    ) -> Result<(), SegmentError> {
        if self.batch.len() + envelope.len() <= MAX_SEGMENT_PAYLOAD {
            self.batch.extend_from_slice(envelope);
            return Ok(());
        }
        self.flush(out)?;
        if envelope.len() <= MAX_SEGMENT_PAYLOAD {
            self.batch.extend_from_slice(envelope);
            return Ok(());
        }
        for part in envelope.chunks(MAX_SEGMENT_PAYLOAD) {
            encode_segment(part, false, self.lz4, out)?;
        }
        Ok(())
    }

    /// Writes the envelopes gathered so far as one self-contained segment.
    pub fn flush(&mut self, out: &mut BytesMut) -> Result<(), SegmentError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = self.batch.split();
        encode_segment(&batch, true, self.lz4, out)
    }
}
