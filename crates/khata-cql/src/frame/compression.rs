//! Frame body compression (spec v4 §5), negotiated by STARTUP's `COMPRESSION` option.
//!
//! - `lz4`: the body is a 4-byte big-endian uncompressed length followed by one LZ4 block
//!   (`lz4_flex`'s block format, which is LZ4's raw block format).
//! - `snappy`: the body is one raw Snappy block (its uncompressed length is a varint at its
//!   start), as Cassandra's `SnappyCompressor` writes it.
//!
//! Decompression is bounded: the declared uncompressed length is read first and checked against
//! the caller's limit (the frame limit) before anything is allocated, so a small frame cannot
//! ask for gigabytes. v5 framing compresses segments instead, with LZ4 only and the lengths in
//! the segment header; see [`segment`](super::segment).

use bytes::{BufMut, Bytes, BytesMut};

/// A frame compression algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// `lz4`
    Lz4,
    /// `snappy`
    Snappy,
}

/// Why a body could not be decompressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecompressError {
    /// The declared uncompressed length exceeds the limit.
    TooLarge {
        /// The declared length.
        declared: u64,
        /// The limit.
        max: usize,
    },
    /// The compressed bytes are malformed.
    Corrupt(String),
}

impl Compression {
    /// The STARTUP option value naming this algorithm.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Lz4 => "lz4",
            Compression::Snappy => "snappy",
        }
    }

    /// The algorithm for a STARTUP option value (case-insensitive, as Cassandra compares).
    pub fn from_name(name: &str) -> Option<Self> {
        if name.eq_ignore_ascii_case("lz4") {
            Some(Compression::Lz4)
        } else if name.eq_ignore_ascii_case("snappy") {
            Some(Compression::Snappy)
        } else {
            None
        }
    }

    /// Compresses a frame body.
    pub fn compress(self, body: &[u8]) -> Bytes {
        match self {
            Compression::Lz4 => {
                let bound = lz4_flex::block::get_maximum_output_size(body.len());
                let mut out = BytesMut::with_capacity(4 + bound);
                // The frame limit keeps bodies far below 4 GiB; the conversion cannot fail for
                // anything the encoder accepts, and saturating would only make the peer reject it.
                out.put_u32(u32::try_from(body.len()).unwrap_or(u32::MAX));
                out.resize(4 + bound, 0);
                let written = lz4_flex::block::compress_into(body, &mut out[4..])
                    .expect("the output buffer is sized by get_maximum_output_size");
                out.truncate(4 + written);
                out.freeze()
            }
            Compression::Snappy => {
                let mut encoder = snap::raw::Encoder::new();
                let compressed = encoder
                    .compress_vec(body)
                    .expect("snappy compresses any input below its 4 GiB limit");
                Bytes::from(compressed)
            }
        }
    }

    /// Decompresses a frame body whose uncompressed length may be at most `max_len` bytes.
    pub fn decompress(self, body: &[u8], max_len: usize) -> Result<Bytes, DecompressError> {
        match self {
            Compression::Lz4 => {
                let Some((len, block)) = body.split_first_chunk::<4>() else {
                    return Err(DecompressError::Corrupt(
                        "lz4 body shorter than its 4-byte length".into(),
                    ));
                };
                let declared = u32::from_be_bytes(*len);
                let len = usize::try_from(declared).unwrap_or(usize::MAX);
                if len > max_len {
                    return Err(DecompressError::TooLarge {
                        declared: u64::from(declared),
                        max: max_len,
                    });
                }
                let mut out = vec![0u8; len];
                let written = lz4_flex::block::decompress_into(block, &mut out)
                    .map_err(|e| DecompressError::Corrupt(e.to_string()))?;
                if written != len {
                    return Err(DecompressError::Corrupt(format!(
                        "lz4 block decompressed to {written} bytes, {len} declared"
                    )));
                }
                Ok(Bytes::from(out))
            }
            Compression::Snappy => {
                let declared = snap::raw::decompress_len(body)
                    .map_err(|e| DecompressError::Corrupt(e.to_string()))?;
                if declared > max_len {
                    return Err(DecompressError::TooLarge {
                        declared: declared as u64,
                        max: max_len,
                    });
                }
                let mut out = vec![0u8; declared];
                let written = snap::raw::Decoder::new()
                    .decompress(body, &mut out)
                    .map_err(|e| DecompressError::Corrupt(e.to_string()))?;
                out.truncate(written);
                Ok(Bytes::from(out))
            }
        }
    }
}
