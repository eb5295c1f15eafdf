//! The byte layout of commit-log segments (documented in `docs/format/commitlog.md`).
//!
//! A segment is a header followed by records, all integers little-endian:
//!
//! ```text
//! header (24 bytes): magic "KHATA-CL" (8) | version u32 | segment id u64 | crc32c(bytes 0..20) u32
//! record:            length u32 | crc32c(segment id u64 ‖ length u32 ‖ payload) u32 | payload
//! ```
//!
//! The record checksum covers the segment id although the id is not stored in the record: a
//! record copied, left over or misplaced from another segment never verifies, so replay cannot
//! mistake stale bytes for a record of this segment. It also covers the length, so a damaged
//! length is a checksum failure rather than a silent misparse.
//!
//! Version 2 preallocates each segment at its full size and writes it in place,
//! so a segment's records are followed by zeros up to its end. Its payloads are never empty,
//! so a zero length field never starts a record: where one is followed by nothing but zeros
//! the segment's records end. Version 1 segments (appended with `write(2)`, ending at their
//! last record, empty payloads allowed) are still read.
//!
//! Version 3 (written now) gives the length field's top bit a meaning: set, the record is a
//! *sync marker* whose 8-byte payload is a `u64` offset of this segment before which every
//! byte had been synced when the marker was written. Replay uses markers to tell a hole left
//! in the unsynced tail by a power cut (pages written back out of order: cut) from damage to
//! bytes that had been synced (corruption: refuse), see `replay.rs`.

use std::path::{Path, PathBuf};

/// The first eight bytes of every segment.
pub(super) const MAGIC: [u8; 8] = *b"KHATA-CL";
/// The format version this build writes.
pub(super) const FORMAT_VERSION: u32 = 3;
/// The format versions this build reads.
pub(super) const READABLE_VERSIONS: [u32; 3] = [1, 2, 3];
/// The first version with sync markers.
pub(super) const MARKERS_SINCE: u32 = 3;
/// The length field's bit that makes a record a sync marker (version 3); a payload's length
/// stays below it (`CommitLogConfig::validate`).
pub(super) const MARKER_FLAG: u32 = 1 << 31;
/// The length field of every sync marker: the flag and its 8-byte payload.
pub(super) const MARKER_LENGTH_FIELD: u32 = MARKER_FLAG | 8;
/// Bytes a sync marker occupies in a segment.
pub(super) const MARKER_LEN: u64 = RECORD_HEADER_LEN + 8;
/// Bytes of the segment header.
pub(super) const HEADER_LEN: u64 = 24;
/// Bytes of a record's header (length and checksum) before its payload.
pub(super) const RECORD_HEADER_LEN: u64 = 8;

const FILE_PREFIX: &str = "CommitLog-";
const FILE_SUFFIX: &str = ".log";

/// The file name of segment `id`: zero-padded so names sort like ids.
pub(super) fn segment_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{FILE_PREFIX}{id:020}{FILE_SUFFIX}"))
}

/// What a directory entry is to the commit log.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum FileKind {
    /// A segment with this id.
    Segment(u64),
    /// A segment still under its temporary name (`CommitLog-<id>.log.tmp`): a spare being made
    /// or never used, or the successor of a switch whose rename had not happened yet.
    Unfinished(u64),
    /// Not ours.
    Other,
}

/// Classify a directory entry by its name.
pub(super) fn classify(path: &Path) -> FileKind {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return FileKind::Other;
    };
    let (name, unfinished) = match name.strip_suffix(".tmp") {
        Some(stem) => (stem, true),
        None => (name, false),
    };
    let id = name
        .strip_prefix(FILE_PREFIX)
        .and_then(|rest| rest.strip_suffix(FILE_SUFFIX))
        .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|digits| digits.parse::<u64>().ok());
    match (id, unfinished) {
        (Some(id), true) => FileKind::Unfinished(id),
        (Some(id), false) => FileKind::Segment(id),
        (None, _) => FileKind::Other,
    }
}

/// The header of segment `id`.
pub(super) fn encode_header(id: u64) -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h[12..20].copy_from_slice(&id.to_le_bytes());
    let crc = crc32c::crc32c(&h[0..20]);
    h[20..24].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Why a header was rejected.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum HeaderError {
    /// Not a commit-log segment or damaged (detail for the error message).
    Corrupt(String),
    /// A well-formed header of a version this build cannot read.
    Version(u32),
}

/// Check a segment header and return the segment id it declares and its format version.
pub(super) fn decode_header(bytes: &[u8]) -> Result<(u64, u32), HeaderError> {
    if bytes.len() < HEADER_LEN as usize {
        return Err(HeaderError::Corrupt(format!(
            "segment is {} bytes, shorter than its {HEADER_LEN}-byte header",
            bytes.len()
        )));
    }
    if bytes[0..8] != MAGIC {
        return Err(HeaderError::Corrupt(
            "bad magic: not a commit-log segment".into(),
        ));
    }
    let stored = u32_at(bytes, 20);
    let actual = crc32c::crc32c(&bytes[0..20]);
    if stored != actual {
        return Err(HeaderError::Corrupt(format!(
            "header checksum mismatch (stored {stored:#010x}, computed {actual:#010x})"
        )));
    }
    let version = u32_at(bytes, 8);
    if !READABLE_VERSIONS.contains(&version) {
        return Err(HeaderError::Version(version));
    }
    Ok((u64_at(bytes, 12), version))
}

/// The checksum seed of segment `id`: the CRC of its id, which every record checksum starts from.
pub(super) fn segment_seed(id: u64) -> u32 {
    crc32c::crc32c(&id.to_le_bytes())
}

/// Encode one record for segment `seed` (see [`segment_seed`]) into a buffer ready to append.
///
/// The record is laid out by [`RecordBuf::new`] before the append lock is taken; the checksum,
/// which depends on the segment the record lands in, is computed by [`RecordBuf::seal`] under
/// it. That is a hardware CRC32C over the record (tens of nanoseconds for a typical mutation);
/// combining a precomputed payload CRC with the seed instead (`crc32c_combine`) costs far more,
/// since the crate combines by GF(2) matrix powers.
#[derive(Debug)]
pub(super) struct RecordBuf {
    bytes: Vec<u8>,
}

impl RecordBuf {
    /// Lay out `payload` as a record; its checksum is filled in by [`RecordBuf::seal`].
    pub(super) fn new(payload: &[u8]) -> Self {
        let len = u32::try_from(payload.len()).expect("caller checks max_record_size_bytes");
        let mut bytes = Vec::with_capacity(RECORD_HEADER_LEN as usize + payload.len());
        bytes.extend_from_slice(&len.to_le_bytes());
        bytes.extend_from_slice(&[0u8; 4]);
        bytes.extend_from_slice(payload);
        RecordBuf { bytes }
    }

    /// A sync marker: every byte of the segment before `synced` had been synced when it was
    /// written.
    pub(super) fn marker(synced: u64) -> Self {
        let mut bytes = Vec::with_capacity(MARKER_LEN as usize);
        bytes.extend_from_slice(&MARKER_LENGTH_FIELD.to_le_bytes());
        bytes.extend_from_slice(&[0u8; 4]);
        bytes.extend_from_slice(&synced.to_le_bytes());
        RecordBuf { bytes }
    }

    /// Bytes the record occupies in the segment.
    pub(super) fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Fill in the checksum for the segment whose seed is `seed` and return the bytes to append.
    pub(super) fn seal(&mut self, seed: u32) -> &[u8] {
        let crc = crc32c::crc32c_append(
            crc32c::crc32c_append(seed, &self.bytes[0..4]),
            &self.bytes[8..],
        );
        self.bytes[4..8].copy_from_slice(&crc.to_le_bytes());
        &self.bytes
    }
}

/// The outcome of reading a record at some offset of a segment's bytes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Parsed {
    /// A record whose payload is `data[payload_start..end]`; the next record starts at `end`.
    /// `marker`: it is a sync marker (version 3), whose payload [`marker_claim`] reads.
    Valid {
        payload_start: usize,
        end: usize,
        marker: bool,
    },
    /// No valid record here; the detail says why.
    Invalid(String),
}

/// Whether the records of a version 2 segment end at `offset`: no record header fits, or its
/// length field is zero, and every byte from there to the end of the segment is zero.
pub(super) fn is_zero_tail(data: &[u8], offset: usize) -> bool {
    let rest = data.get(offset..).unwrap_or_default();
    rest.iter().all(|&b| b == 0)
}

/// Read the record at `offset` of `data` (a whole segment) belonging to segment `seed`;
/// `markers`: the segment's version has sync markers (in older versions a length field with
/// the top bit set runs past the end of any segment).
pub(super) fn parse_record(data: &[u8], offset: usize, seed: u32, markers: bool) -> Parsed {
    let header = RECORD_HEADER_LEN as usize;
    let remaining = data.len().saturating_sub(offset);
    if remaining < header {
        return Parsed::Invalid(format!(
            "incomplete record header ({remaining} of {header} bytes)"
        ));
    }
    let field = u32_at(data, offset);
    let marker = markers && field & MARKER_FLAG != 0;
    if marker && field != MARKER_LENGTH_FIELD {
        return Parsed::Invalid(format!(
            "sync marker with length {} (a marker holds 8 bytes)",
            field & !MARKER_FLAG
        ));
    }
    let len = (if marker { field & !MARKER_FLAG } else { field }) as usize;
    let stored = u32_at(data, offset + 4);
    let payload_start = offset + header;
    if len > remaining - header {
        return Parsed::Invalid(format!(
            "record length {len} runs past the end of the segment ({} bytes left)",
            remaining - header
        ));
    }
    let end = payload_start + len;
    let actual = crc32c::crc32c_append(seed, &data[offset..offset + 4]);
    let actual = crc32c::crc32c_append(actual, &data[payload_start..end]);
    if stored != actual {
        return Parsed::Invalid(format!(
            "record checksum mismatch (length {len}, stored {stored:#010x}, computed {actual:#010x})"
        ));
    }
    Parsed::Valid {
        payload_start,
        end,
        marker,
    }
}

/// The offset a valid sync marker's payload (`data[payload_start..]`) claims was synced.
pub(super) fn marker_claim(data: &[u8], payload_start: usize) -> u64 {
    u64_at(data, payload_start)
}

/// Whether the length field at `offset` is a sync marker's: the cheap test before a marker's
/// checksum is verified.
pub(super) fn is_marker_field(data: &[u8], offset: usize) -> bool {
    data.get(offset..offset + 4)
        .is_some_and(|field| field == MARKER_LENGTH_FIELD.to_le_bytes())
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_rejections() {
        let h = encode_header(42);
        assert_eq!(decode_header(&h), Ok((42, FORMAT_VERSION)));
        let mut bad = h;
        bad[13] ^= 1;
        assert!(matches!(decode_header(&bad), Err(HeaderError::Corrupt(_))));
        assert!(matches!(
            decode_header(&h[..10]),
            Err(HeaderError::Corrupt(_))
        ));
        let with_version = |v: u32| {
            let mut h = h;
            h[8..12].copy_from_slice(&v.to_le_bytes());
            let crc = crc32c::crc32c(&h[0..20]);
            h[20..24].copy_from_slice(&crc.to_le_bytes());
            h
        };
        assert_eq!(decode_header(&with_version(1)), Ok((42, 1)));
        assert_eq!(decode_header(&with_version(2)), Ok((42, 2)));
        assert_eq!(
            decode_header(&with_version(4)),
            Err(HeaderError::Version(4))
        );
        assert_eq!(
            decode_header(&with_version(0)),
            Err(HeaderError::Version(0))
        );
    }

    #[test]
    fn sealed_checksum_equals_direct_checksum() {
        for payload in [&b""[..], b"x", b"hello commit log"] {
            let mut rec = RecordBuf::new(payload);
            let bytes = rec.seal(segment_seed(7)).to_vec();
            let mut direct = 7u64.to_le_bytes().to_vec();
            direct.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            direct.extend_from_slice(payload);
            assert_eq!(u32_at(&bytes, 4), crc32c::crc32c(&direct));
            assert_eq!(
                parse_record(&bytes, 0, segment_seed(7), true),
                Parsed::Valid {
                    payload_start: 8,
                    end: 8 + payload.len(),
                    marker: false,
                }
            );
            // The same bytes are not a record of another segment.
            assert!(matches!(
                parse_record(&bytes, 0, segment_seed(8), true),
                Parsed::Invalid(_)
            ));
        }
    }

    #[test]
    fn sync_markers() {
        let mut rec = RecordBuf::marker(4096);
        assert_eq!(rec.len(), MARKER_LEN);
        let bytes = rec.seal(segment_seed(7)).to_vec();
        assert!(is_marker_field(&bytes, 0));
        assert_eq!(
            parse_record(&bytes, 0, segment_seed(7), true),
            Parsed::Valid {
                payload_start: 8,
                end: 16,
                marker: true,
            }
        );
        assert_eq!(marker_claim(&bytes, 8), 4096);
        // Another segment's marker does not verify; a version without markers reads the
        // flagged length as one running past the end.
        assert!(matches!(
            parse_record(&bytes, 0, segment_seed(8), true),
            Parsed::Invalid(_)
        ));
        assert!(matches!(
            parse_record(&bytes, 0, segment_seed(7), false),
            Parsed::Invalid(_)
        ));
        // A flagged length other than a marker's is damage.
        let mut odd = bytes.clone();
        odd[0] = 9;
        assert!(matches!(
            parse_record(&odd, 0, segment_seed(7), true),
            Parsed::Invalid(d) if d.contains("sync marker")
        ));
    }

    #[test]
    fn zero_tail() {
        let mut seg = vec![0u8; 64];
        assert!(is_zero_tail(&seg, 0));
        assert!(is_zero_tail(&seg, 64));
        assert!(is_zero_tail(&seg, 100));
        seg[40] = 1;
        assert!(!is_zero_tail(&seg, 0));
        assert!(is_zero_tail(&seg, 41));
    }

    #[test]
    fn file_names() {
        let p = segment_path(Path::new("/d"), 12);
        assert_eq!(p, Path::new("/d/CommitLog-00000000000000000012.log"));
        assert_eq!(classify(&p), FileKind::Segment(12));
        assert_eq!(
            classify(Path::new("/d/CommitLog-00000000000000000012.log.tmp")),
            FileKind::Unfinished(12)
        );
        assert_eq!(classify(Path::new("/d/notes.txt.tmp")), FileKind::Other);
        assert_eq!(classify(Path::new("/d/CommitLog-.log")), FileKind::Other);
        assert_eq!(classify(Path::new("/d/CommitLog-+1.log")), FileKind::Other);
        assert_eq!(classify(Path::new("/d/notes.txt")), FileKind::Other);
    }
}
