//! A borrowing cursor over verified bytes, for lookups that must not allocate.
//!
//! [`khata_types::codec::Reader`] hands out `Bytes` (one reference-count increment each), which
//! is right for values that outlive the read but wasteful for keys a binary search only
//! compares. `SliceReader` reads the same encodings (LEB128 varints, length-prefixed bytes,
//! little-endian integers) as borrowed slices. Like `Reader`, it never panics: running past the
//! end is [`CodecError::Truncated`].

use khata_types::codec::CodecError;

/// A cursor over `buf`.
#[derive(Clone, Copy, Debug)]
pub struct SliceReader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> SliceReader<'a> {
    /// A cursor at `pos` (which may be past the end: every read then fails as truncated).
    pub fn at(buf: &'a [u8], pos: usize) -> Self {
        SliceReader { buf, pos }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn varint(&mut self) -> Result<u64, CodecError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = *self.buf.get(self.pos).ok_or(CodecError::Truncated)?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                if shift == 63 && b > 1 {
                    return Err(CodecError::Invalid("varint overflow"));
                }
                return Ok(v);
            }
        }
        Err(CodecError::Invalid("varint too long"))
    }

    /// `len` bytes.
    pub fn take(&mut self, len: usize) -> Result<&'a [u8], CodecError> {
        let end = self.pos.checked_add(len).ok_or(CodecError::Truncated)?;
        let b = self.buf.get(self.pos..end).ok_or(CodecError::Truncated)?;
        self.pos = end;
        Ok(b)
    }

    /// A varint length, then that many bytes.
    pub fn bytes(&mut self) -> Result<&'a [u8], CodecError> {
        let len = usize::try_from(self.varint()?).map_err(|_| CodecError::Invalid("length"))?;
        self.take(len)
    }

    pub fn i64_le(&mut self) -> Result<i64, CodecError> {
        let mut word = [0u8; 8];
        word.copy_from_slice(self.take(8)?);
        Ok(i64::from_le_bytes(word))
    }
}

/// The little-endian `u32` at `pos`, if the buffer holds it.
pub fn u32_at(buf: &[u8], pos: usize) -> Option<u32> {
    let b = buf.get(pos..pos.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Bytes of a cache line, the unit in which memory reaches the CPU.
pub const CACHE_LINE_BYTES: usize = 64;

/// Most loads [`warm`] issues for one search.
pub const WARM_MAX_LOADS: usize = 32;

/// Load the byte at each of `offsets` in `buf` (offsets past the end are skipped), as loads
/// that do not depend on each other, so that the CPU fetches their cache lines from memory in
/// parallel. A binary search over a block, an index page's token table or a row index that is
/// not in the CPU's caches (a block-cache hit on a block last used long ago) otherwise waits
/// on memory once per probe, each probe's address depending on the last comparison; after
/// this it waits about once. Nothing is returned: the loads only bring lines into the cache.
pub fn warm(buf: &[u8], offsets: impl Iterator<Item = usize>) {
    let mut sum = 0u8;
    for offset in offsets.take(WARM_MAX_LOADS) {
        if let Some(b) = buf.get(offset) {
            sum ^= *b;
        }
    }
    // Keeps the loads from being optimised away.
    std::hint::black_box(sum);
}

/// [`warm`] every cache line of `buf[range]` (at most [`WARM_MAX_LOADS`] of them).
pub fn warm_lines(buf: &[u8], range: std::ops::Range<usize>) {
    warm(buf, range.step_by(CACHE_LINE_BYTES));
}

#[cfg(test)]
mod tests {
    use super::*;
    use khata_types::codec::{put_bytes, put_varint};

    #[test]
    fn reads_what_the_codec_writes() {
        let mut buf = Vec::new();
        put_varint(&mut buf, 300);
        put_bytes(&mut buf, b"abc");
        buf.extend_from_slice(&7u32.to_le_bytes());
        let mut r = SliceReader::at(&buf, 0);
        assert_eq!(r.varint(), Ok(300));
        assert_eq!(r.bytes(), Ok(&b"abc"[..]));
        assert_eq!(u32_at(&buf, r.position()), Some(7));
        let mut r = SliceReader::at(&buf, buf.len());
        assert_eq!(r.varint(), Err(CodecError::Truncated));
        assert_eq!(
            SliceReader::at(&[0x05, b'a'], 0).bytes(),
            Err(CodecError::Truncated)
        );
        assert_eq!(u32_at(&buf, buf.len() - 4), Some(7));
        assert_eq!(u32_at(&buf, buf.len() - 3), None);
    }
}
