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
//! but the last, or a bad record in the last segment that had been synced. Which bad records
//! of the last segment had been synced, the version decides:
//!
//! - Version 3 writes a *sync marker* after each completed sync that covered the log's end
//!   ("every byte before offset X had been synced"). A bad record at `h` is corruption when a
//!   valid marker after it claims `X > h`: the record lay wholly before `X` (a claim is always a
//!   record boundary), was synced before the marker was written, and no crash undoes a sync.
//!   Otherwise it lies in the unsynced tail, where a power cut can leave *holes*: the kernel
//!   writes dirty pages back in any order, so a later page can reach the disk while an earlier
//!   one does not. Everything from `h` on is cut, valid records after the hole included: none
//!   was acknowledged as durable (a sync that covered one would have covered `h`), and
//!   replaying them would skip the records lost in the hole. The last sync's own marker is not
//!   durable until the next sync, so damage to what that sync alone wrote is cut rather than
//!   refused: the cost of telling holes from corruption without a sync per marker, as in
//!   Cassandra, whose replay also tolerates a bad last section of the last segment. Looking
//!   for markers is a four-byte compare per offset (a checksum only where the field matches).
//! - Versions 1 and 2 have no markers: a bad record in the last segment *followed by a valid
//!   record* refuses to open (a hole is indistinguishable from corruption). That test scans
//!   every later byte offset for a record that verifies; since record checksums are seeded
//!   with the segment id, stale or random bytes verify with probability about 2^-32 per
//!   candidate, and a false positive errs on the safe side (refusing to open rather than
//!   dropping data). The scan is cheap for the zeros a crash usually leaves (in version 2 an
//!   offset whose length field is zero is no candidate at all; in version 1 it is a 12-byte
//!   CRC) and quadratic only for long stretches of random garbage, which no crash produces.

use std::path::Path;

use bytes::Bytes;
use khata_env::FileSystem;

use super::format::{self, HEADER_LEN, HeaderError, Parsed};
use super::{CommitLogPosition, ReplayedRecord};
use crate::error::{Result, StorageError};

/// What replaying one segment found.
#[derive(Debug, Clone, Copy)]
pub(super) struct Replayed {
    /// The offset just after its last record (not a sync marker), after any torn tail was cut.
    pub(super) records_end: u64,
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
    let markers = version >= format::MARKERS_SINCE;

    let seed = format::segment_seed(id);
    let mut offset = HEADER_LEN as usize;
    let mut records_end = HEADER_LEN;
    while offset < data.len() {
        if preallocated
            && length_field_is_zero(&data, offset)
            && format::is_zero_tail(&data, offset)
        {
            return Ok(Replayed {
                records_end,
                torn: false,
            });
        }
        match format::parse_record(&data, offset, seed, markers) {
            Parsed::Valid {
                end, marker: true, ..
            } => offset = end,
            Parsed::Valid {
                payload_start, end, ..
            } if !(preallocated && payload_start == end) => {
                out.push(ReplayedRecord {
                    position: CommitLogPosition {
                        segment_id: id,
                        offset: end as u64,
                    },
                    payload: data.slice(payload_start..end),
                });
                offset = end;
                records_end = end as u64;
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
                if markers {
                    if let Some((at, claim)) = marker_claiming_past(&data, offset, seed) {
                        return Err(StorageError::corrupt(
                            path,
                            offset as u64,
                            format!(
                                "{detail}, in bytes the sync marker at offset {at} says were \
                                 synced (every byte before offset {claim})"
                            ),
                        ));
                    }
                } else if let Some(next) = next_valid_record(&data, offset + 1, seed, preallocated)
                {
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
                    records_end,
                    torn: true,
                });
            }
        }
    }
    Ok(Replayed {
        records_end,
        torn: false,
    })
}

/// Whether the length field of a record header at `offset` is zero or does not fit.
fn length_field_is_zero(data: &[u8], offset: usize) -> bool {
    data.get(offset..offset + 4)
        .is_none_or(|field| field.iter().all(|&b| b == 0))
}

/// A valid sync marker after offset `bad` claiming that bytes past `bad` had been synced: its
/// offset and claim. Only offsets holding a marker's length field are checked further.
fn marker_claiming_past(data: &[u8], bad: usize, seed: u32) -> Option<(usize, u64)> {
    let last_start = data.len().checked_sub(format::MARKER_LEN as usize)?;
    (bad + 1..=last_start).find_map(|at| {
        if !format::is_marker_field(data, at) {
            return None;
        }
        match format::parse_record(data, at, seed, true) {
            Parsed::Valid {
                payload_start,
                marker: true,
                ..
            } => {
                let claim = format::marker_claim(data, payload_start);
                (claim > bad as u64).then_some((at, claim))
            }
            _ => None,
        }
    })
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
        matches!(
            format::parse_record(data, at, seed, false),
            Parsed::Valid { .. }
        )
    })
}
