//! Reading segments back on open, and telling a torn tail from corruption.
//!
//! Every segment but the last was synced whole before its successor got its final name, and a
//! segment appears under its final name only with a complete, synced header (see `segment.rs`).
//! (A switch writes to the successor under its temporary name until the background thread has
//! synced the predecessor; `CommitLog::open` replays such a successor only if its predecessor,
//! then the last named segment, lost nothing.) So the
//! only damage a crash can leave is at the end of the last segment: a record that was being
//! written (or a stretch of unsynced records) that reached the disk partly, as a prefix, as
//! zeros or as garbage. That is a *torn tail*; it was never acknowledged as durable, so it is
//! cut off (with a warning) and replay succeeds.
//!
//! Where a segment's records end: a version 1 segment ends at its last record; a version 2
//! segment is preallocated, so its records are followed by zeros to its end, and a zero length
//! field followed only by zeros is that end (payloads are never empty in version 2), in any
//! segment. That is not damage, and nothing is cut or logged.
//!
//! Anything else is corruption and refuses to open: a bad header, a bad record in any segment
//! but the last, or a bad record in the last segment *followed by a valid record*. The last test
//! scans every later byte offset for a record that verifies; since record checksums are seeded
//! with the segment id, stale or random bytes verify with probability about 2^-32 per candidate,
//! and a false positive errs on the safe side (refusing to open rather than dropping data).
//! The scan is cheap for the zeros a crash usually leaves (in version 2 an offset whose length
//! field is zero is no candidate at all; in version 1 it is a 12-byte CRC) and quadratic only
//! for long stretches of random garbage, which no crash produces.

use std::path::Path;

use bytes::Bytes;
use khata_env::FileSystem;

use super::format::{self, HEADER_LEN, HeaderError, Parsed};
use super::{CommitLogPosition, ReplayedRecord};
use crate::error::{Result, StorageError};

/// What replaying one segment found.
#[derive(Debug, Clone, Copy)]
pub(super) struct Replayed {
    /// The segment's length after any torn tail was cut.
    pub(super) len: u64,
    /// Whether a torn tail was cut.
    pub(super) torn: bool,
}

/// Replay segment `id` at `path`, appending its records to `out`.
pub(super) fn replay_segment(
    fs: &dyn FileSystem,
    path: &Path,
    id: u64,
    is_last: bool,
    out: &mut Vec<ReplayedRecord>,
) -> Result<Replayed> {
    let file = fs.open_read(path).map_err(|e| StorageError::io(path, e))?;
    let len = usize::try_from(file.len())
        .map_err(|_| StorageError::corrupt(path, 0, "segment larger than the address space"))?;
    let data = Bytes::from(
        file.read_vec(0, len)
            .map_err(|e| StorageError::io(path, e))?,
    );
    drop(file);

    let version = match format::decode_header(&data) {
        Ok((declared, version)) if declared == id => version,
        Ok((declared, _)) => {
            return Err(StorageError::corrupt(
                path,
                12,
                format!("header declares segment id {declared} but the file name says {id}"),
            ));
        }
        Err(HeaderError::Corrupt(detail)) => return Err(StorageError::corrupt(path, 0, detail)),
        Err(HeaderError::Version(version)) => {
            return Err(StorageError::UnsupportedVersion {
                path: path.to_path_buf(),
                version,
                supported: format::READABLE_VERSIONS.map(|v| v.to_string()).join(", "),
            });
        }
    };
    let preallocated = version >= 2;

    let seed = format::segment_seed(id);
    let mut offset = HEADER_LEN as usize;
    while offset < data.len() {
        if preallocated
            && length_field_is_zero(&data, offset)
            && format::is_zero_tail(&data, offset)
        {
            return Ok(Replayed {
                len: offset as u64,
                torn: false,
            });
        }
        match format::parse_record(&data, offset, seed) {
            Parsed::Valid { payload_start, end } if !(preallocated && payload_start == end) => {
                out.push(ReplayedRecord {
                    position: CommitLogPosition {
                        segment_id: id,
                        offset: end as u64,
                    },
                    payload: data.slice(payload_start..end),
                });
                offset = end;
            }
            parsed => {
                let detail = match parsed {
                    Parsed::Invalid(detail) => detail,
                    Parsed::Valid { .. } => "an empty record in a preallocated segment".into(),
                };
                if !is_last {
                    return Err(StorageError::corrupt(
                        path,
                        offset as u64,
                        format!("{detail} in a segment that is not the last"),
                    ));
                }
                if let Some(next) = next_valid_record(&data, offset + 1, seed, preallocated) {
                    return Err(StorageError::corrupt(
                        path,
                        offset as u64,
                        format!("{detail}, followed by a valid record at offset {next}"),
                    ));
                }
                tracing::warn!(
                    path = %path.display(),
                    offset,
                    dropped_bytes = data.len() - offset,
                    %detail,
                    "commit log: truncating torn tail of the last segment"
                );
                fs.truncate(path, offset as u64)
                    .map_err(|e| StorageError::io(path, e))?;
                return Ok(Replayed {
                    len: offset as u64,
                    torn: true,
                });
            }
        }
    }
    Ok(Replayed {
        len: data.len() as u64,
        torn: false,
    })
}

/// Whether the length field of a record header at `offset` is zero or does not fit.
fn length_field_is_zero(data: &[u8], offset: usize) -> bool {
    data.get(offset..offset + 4)
        .is_none_or(|field| field.iter().all(|&b| b == 0))
}

/// The first offset at or after `from` where a record of this segment verifies. In a
/// preallocated segment only non-empty records count, so offsets whose length field is zero
/// are skipped without computing a checksum.
fn next_valid_record(data: &[u8], from: usize, seed: u32, preallocated: bool) -> Option<usize> {
    let last_start = data.len().checked_sub(format::RECORD_HEADER_LEN as usize)?;
    (from..=last_start).find(|&at| {
        if preallocated && length_field_is_zero(data, at) {
            return false;
        }
        matches!(format::parse_record(data, at, seed), Parsed::Valid { .. })
    })
}
