//! Segment files: preparing the next one, finding the existing ones, removing discarded ones.
//!
//! A segment appears under its final name only with its header written and synced (temporary
//! name, sync, rename, sync the directory, as [`khata_env::write_file_durably`] does), so a
//! segment with a missing or damaged header is corruption, never a crash artefact; a leftover
//! temporary file is a creation that never finished and is removed on open.
//!
//! Creation is split in two so that its slow half stays off the write path, as Cassandra keeps
//! a segment ready: a [`SpareSegment`] is the file under its temporary name with its header
//! synced, prepared in the background ahead of need; [`SpareSegment::install`] renames it into
//! place and syncs the directory when the log moves to it. Until then the spare is invisible
//! to replay (a crash leaves it as an unfinished creation).
//!
//! A segment is created at its full size, allocated on disk, and written in place through a
//! memory map ([`khata_env::PreallocatedFile`]): an append is a copy into the page cache. The
//! first [`PREPARE_AHEAD_BYTES`] of a new segment are mapped in when it is made, and the
//! background thread keeps mapping in the stretch ahead of the writer.
//!
//! Discarded segments are deleted, not recycled. Cassandra dropped segment recycling in 2.2
//! (CASSANDRA-8771); deleting also means no stale record can outlive its segment (record
//! checksums are seeded with the segment id in any case, see `format.rs`). Recycling was tried
//! (2026-12-03, docs/benchmarks.md "Stop 27"): it saved the background thread about 9 ms of
//! CPU per 32 MiB segment (under 1 % of a core at 100,000 INSERTs/s), and with a recycled last
//! segment's stale tail after its records a restart after a kill had not opened the log in
//! 60 s (replay's search for a valid record after a torn one, `replay.rs`, runs over that
//! tail). The active segment is never deleted, so the highest segment id ever used is always
//! on disk and ids keep increasing across restarts.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use khata_env::fs::tmp_path;
use khata_env::{FileSystem, PreallocatedFile, durable_rename};

use super::format::{self, FileKind, HEADER_LEN};
use super::{CommitLogPosition, PREPARE_AHEAD_BYTES};
use crate::error::{Result, StorageError};

/// The segment records are appended to.
#[derive(Debug)]
pub(super) struct ActiveSegment {
    pub(super) id: u64,
    pub(super) path: PathBuf,
    pub(super) file: Arc<dyn PreallocatedFile>,
    /// The checksum seed of this segment's records.
    pub(super) seed: u32,
    /// Bytes written so far (header included): where the next record goes.
    pub(super) offset: u64,
    /// The offset just after the last record appended (not counting sync markers).
    pub(super) records_end: u64,
}

impl ActiveSegment {
    /// Create segment `id` of `size` bytes in `dir` durably, with its header, open for writing.
    pub(super) fn create(fs: &dyn FileSystem, dir: &Path, id: u64, size: u64) -> io::Result<Self> {
        SpareSegment::create(fs, dir, id, size)?.install(fs)
    }

    /// The position just after everything written: records and sync markers.
    pub(super) fn end(&self) -> CommitLogPosition {
        CommitLogPosition {
            segment_id: self.id,
            offset: self.offset,
        }
    }
}

/// The next segment, prepared ahead: its header written and synced under the temporary name.
#[derive(Debug)]
pub(super) struct SpareSegment {
    pub(super) id: u64,
    tmp: PathBuf,
    path: PathBuf,
    file: Arc<dyn PreallocatedFile>,
}

impl SpareSegment {
    /// Create segment `id`'s file of `size` bytes under its temporary name in `dir`, write
    /// its header and sync it (the header and the file's length).
    pub(super) fn create(fs: &dyn FileSystem, dir: &Path, id: u64, size: u64) -> io::Result<Self> {
        let path = format::segment_path(dir, id);
        let tmp = tmp_path(&path);
        let file = fs.create_preallocated(&tmp, size)?;
        let spare = SpareSegment {
            id,
            tmp,
            path,
            file,
        };
        spare.file.prepare(0, PREPARE_AHEAD_BYTES);
        let written = spare
            .file
            .write_at(0, &format::encode_header(id))
            .and_then(|()| spare.file.sync(HEADER_LEN));
        match written {
            Ok(()) => Ok(spare),
            Err(e) => {
                spare.remove(fs);
                Err(e)
            }
        }
    }

    /// Give the spare its final name durably (rename, then sync the directory: only then may
    /// a record in it be acknowledged) and return it as the segment to append to. The file
    /// handle stays the one the header was written through.
    pub(super) fn install(self, fs: &dyn FileSystem) -> io::Result<ActiveSegment> {
        durable_rename(fs, &self.tmp, &self.path)?;
        Ok(ActiveSegment {
            id: self.id,
            path: self.path,
            file: self.file,
            seed: format::segment_seed(self.id),
            offset: HEADER_LEN,
            records_end: HEADER_LEN,
        })
    }

    /// Delete a spare that will not be used (best effort: open removes leftovers anyway).
    /// Make this the active segment while it still has its temporary name: appends go to it
    /// at once, while its predecessor is synced and it is renamed into place off the append
    /// path ([`super::PendingSwitch`]). The segment names its final path (which it has from
    /// the rename on, for the rest of its life); the temporary path is returned.
    pub(super) fn activate_unnamed(self) -> (ActiveSegment, PathBuf) {
        let segment = ActiveSegment {
            id: self.id,
            path: self.path,
            file: self.file,
            seed: format::segment_seed(self.id),
            offset: HEADER_LEN,
            records_end: HEADER_LEN,
        };
        (segment, self.tmp)
    }

    pub(super) fn remove(self, fs: &dyn FileSystem) {
        if let Err(e) = fs.remove_file(&self.tmp) {
            tracing::debug!(path = %self.tmp.display(), error = %e, "commit log: removing a spare segment failed");
        }
    }
}

/// A segment that is no longer written to, kept until its records are discarded.
#[derive(Debug, Clone)]
pub(super) struct FinishedSegment {
    pub(super) path: PathBuf,
    /// The offset just after its last record (sync markers after it do not count): the
    /// position of that record is `(id, records_end)`.
    pub(super) records_end: u64,
}

/// The segments in `dir`, sorted by id; unfinished creations are removed.
/// Segment files by id: the named ones in order, and the successor still under its temporary
/// name, if any.
pub(super) type Listing = (Vec<(u64, PathBuf)>, Option<(u64, PathBuf)>);

/// The segments in `dir` by id, and the one segment that may still have its temporary name:
/// the successor of the last segment (id one above it), which an append may already have
/// written to while its predecessor was being synced ([`super::PendingSwitch`]). Every other
/// temporary segment file is a spare that never became active, and is removed.
pub(super) fn list(fs: &dyn FileSystem, dir: &Path) -> Result<Listing> {
    let entries = fs.list_dir(dir).map_err(|e| StorageError::io(dir, e))?;
    let mut segments = Vec::new();
    let mut unfinished = Vec::new();
    for path in entries {
        match format::classify(&path) {
            FileKind::Segment(id) => segments.push((id, path)),
            FileKind::Unfinished(id) => unfinished.push((id, path)),
            FileKind::Other => {
                tracing::debug!(path = %path.display(), "commit log: ignoring foreign file");
            }
        }
    }
    segments.sort_unstable_by_key(|(id, _)| *id);
    let successor_id = segments.last().and_then(|(id, _)| id.checked_add(1));
    let mut successor = None;
    for (id, path) in unfinished {
        if Some(id) == successor_id {
            successor = Some((id, path));
            continue;
        }
        tracing::info!(path = %path.display(), "commit log: removing unfinished segment");
        fs.remove_file(&path)
            .map_err(|e| StorageError::io(&path, e))?;
    }
    Ok((segments, successor))
}

pub(super) fn remove(
    fs: &dyn FileSystem,
    dir: &Path,
    doomed: Vec<(u64, FinishedSegment)>,
) -> std::result::Result<(), (StorageError, Vec<(u64, FinishedSegment)>)> {
    let mut rest = doomed.into_iter();
    while let Some((id, seg)) = rest.next() {
        match fs.remove_file(&seg.path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                let err = StorageError::io(&seg.path, e);
                let mut left = vec![(id, seg)];
                left.extend(rest);
                return Err((err, left));
            }
        }
    }
    // Only for tidiness after a crash: a deleted segment that reappears holds data already
    // flushed, and replaying it again is harmless (mutations are idempotent).
    fs.sync_dir(dir)
        .map_err(|e| (StorageError::io(dir, e), Vec::new()))
}
