//! Damage anywhere but a torn tail refuses to open with StorageError::Corrupt naming the file
//! and the offset of the damage.

mod commitlog_common;

use std::path::Path;

use commitlog_common::{config, payload, real_fs, segment_files};
use khata_storage::StorageError;
use khata_storage::commitlog::{CommitLog, SyncMode};

const HEADER: usize = 24;
const RECORD: usize = 8 + 108;
/// A sync marker (format version 3): in batch mode, with one appender, one follows each
/// record (the sync that acknowledges it writes it).
const MARKER: usize = 8 + 8;
const STRIDE: usize = RECORD + MARKER;

fn write_log(dir: &Path) -> Vec<std::path::PathBuf> {
    let (log, _) = CommitLog::open(real_fs(), dir, config(SyncMode::Batch, 4096)).unwrap();
    for id in 0..100 {
        log.append(&payload(id, 100)).unwrap();
    }
    log.close().unwrap();
    let files = segment_files(dir);
    assert!(files.len() >= 3);
    files
}

fn flip(path: &Path, at: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at] ^= 0x40;
    std::fs::write(path, bytes).unwrap();
}

fn expect_corrupt(dir: &Path, file: &Path, offset: u64) {
    let len_before = std::fs::metadata(file).unwrap().len();
    let err = CommitLog::open(real_fs(), dir, config(SyncMode::Batch, 4096)).unwrap_err();
    match &err {
        StorageError::Corrupt {
            path, offset: at, ..
        } => {
            assert_eq!(path, file);
            assert_eq!(*at, offset);
        }
        other => panic!("expected Corrupt, got {other}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains(&file.display().to_string()) && msg.contains(&offset.to_string()),
        "{msg}"
    );
    assert_eq!(
        std::fs::metadata(file).unwrap().len(),
        len_before,
        "nothing is truncated"
    );
}

#[test]
fn bad_record_in_the_middle_of_the_last_segment() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_log(dir.path());
    let last = files.last().unwrap();
    // The second record's payload: it was synced, as the markers after it say.
    flip(last, HEADER + STRIDE + 20);
    expect_corrupt(dir.path(), last, (HEADER + STRIDE) as u64);
}

#[test]
fn bad_length_followed_by_valid_records() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_log(dir.path());
    let last = files.last().unwrap();
    // A damaged length field makes the record look like it runs past the end; the sync markers
    // after it show it is not a torn tail.
    flip(last, HEADER + 3);
    expect_corrupt(dir.path(), last, HEADER as u64);
}

#[test]
fn bad_record_at_the_end_of_a_segment_that_is_not_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_log(dir.path());
    let first = &files[0];
    // Segments are preallocated: the records end before the file does, zeros follow.
    let len = std::fs::metadata(first).unwrap().len() as usize;
    assert_eq!(len, 4096);
    let end = HEADER + (len - HEADER) / STRIDE * STRIDE;
    // The last record's last byte (its sync marker follows it).
    flip(first, end - MARKER - 1);
    expect_corrupt(dir.path(), first, (end - STRIDE) as u64);
}

#[test]
fn bytes_in_the_zero_tail_of_a_segment_that_is_not_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_log(dir.path());
    let first = &files[0];
    let end = HEADER + (4096 - HEADER) / STRIDE * STRIDE;
    assert!(
        end + 4 < 4096,
        "the test needs a tail of at least a length field"
    );
    flip(first, 4095);
    expect_corrupt(dir.path(), first, end as u64);
}

#[test]
fn bad_header() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_log(dir.path());
    flip(&files[1], 13); // the segment id
    expect_corrupt(dir.path(), &files[1], 0);
}

#[test]
fn header_of_another_segment() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_log(dir.path());
    // A segment renamed to another id: its header (and every record checksum) disagree.
    std::fs::remove_file(&files[1]).unwrap();
    std::fs::rename(&files[0], &files[1]).unwrap();
    let err = CommitLog::open(real_fs(), dir.path(), config(SyncMode::Batch, 4096)).unwrap_err();
    assert!(
        matches!(err, StorageError::Corrupt { ref path, .. } if path == &files[1]),
        "{err}"
    );
}

#[test]
fn unknown_version_is_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_log(dir.path());
    let mut bytes = std::fs::read(&files[0]).unwrap();
    bytes[8] = 9;
    let crc = crc32c::crc32c(&bytes[0..20]);
    bytes[20..24].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&files[0], bytes).unwrap();
    let err = CommitLog::open(real_fs(), dir.path(), config(SyncMode::Batch, 4096)).unwrap_err();
    assert!(
        matches!(err, StorageError::UnsupportedVersion { version: 9, .. }),
        "{err}"
    );
}
