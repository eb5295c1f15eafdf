//! A torn tail (an incomplete or checksum-failing record at the end of the last segment,
//! followed by nothing valid) is cut off and replay succeeds with everything before it. The
//! zeros that follow the records of a preallocated segment are its end, not a tear: nothing is
//! cut.

mod commitlog_common;

use std::os::unix::fs::FileExt;
use std::path::Path;

use commitlog_common::{
    config, hand_built_segment, open, payload, payload_id, real_fs, segment_files,
};
use khata_storage::commitlog::SyncMode;

const SEGMENT: u64 = 4096;
const RECORD: u64 = 8 + 108;

/// Write `records` records into a fresh log in `dir`; return the last segment's path and where
/// its records end (every record here ends in a non-zero byte; zeros follow).
///
/// In periodic mode with a period that never comes: no sync covers the last segment's records
/// until close, so they are an unsynced tail, which is where a crash tears (the sync markers
/// that follow the syncs of group and batch mode say a record was synced, and damage before
/// one is corruption: `commitlog_sync_markers.rs`).
fn write_log(dir: &Path, records: u64) -> (std::path::PathBuf, u64) {
    let never = SyncMode::Periodic {
        period: std::time::Duration::from_secs(3600),
    };
    let (log, _) = open(&real_fs(), dir, config(never, SEGMENT));
    for id in 0..records {
        log.append(&payload(id, 100)).unwrap();
    }
    log.close().unwrap();
    let last = segment_files(dir).pop().unwrap();
    let bytes = std::fs::read(&last).unwrap();
    assert_eq!(bytes.len() as u64, SEGMENT, "segments are preallocated");
    let end = bytes.iter().rposition(|&b| b != 0).unwrap() as u64 + 1;
    (last, end)
}

fn reopen_and_check(dir: &Path, expect_records: u64, expect_len: u64, torn: &Path) {
    let (log, replayed) = open(&real_fs(), dir, config(SyncMode::Batch, SEGMENT));
    let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
    assert_eq!(ids, (0..expect_records).collect::<Vec<_>>());
    assert_eq!(
        std::fs::metadata(torn).unwrap().len(),
        expect_len,
        "a torn tail is truncated, a zero tail is left alone"
    );
    // The log is usable and the next open is clean.
    log.append(&payload(999, 1)).unwrap();
    drop(log);
    let (_log, replayed) = open(&real_fs(), dir, config(SyncMode::Batch, SEGMENT));
    assert_eq!(replayed.len() as u64, expect_records + 1);
}

fn write_bytes_at(path: &Path, offset: u64, bytes: &[u8]) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .write_all_at(bytes, offset)
        .unwrap();
}

#[test]
fn the_zeros_after_the_records_are_not_a_tear() {
    let dir = tempfile::tempdir().unwrap();
    let (last, _) = write_log(dir.path(), 100);
    reopen_and_check(dir.path(), 100, SEGMENT, &last);
}

#[test]
fn partial_record_header_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (last, end) = write_log(dir.path(), 100);
    write_bytes_at(&last, end, &[0x10, 0, 0]);
    reopen_and_check(dir.path(), 100, end, &last);
}

#[test]
fn partial_payload_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (last, end) = write_log(dir.path(), 100);
    // Only the start of the last record reached the disk: it was being written at the crash.
    write_bytes_at(&last, end - 30, &[0u8; 30]);
    reopen_and_check(dir.path(), 99, end - RECORD, &last);
}

#[test]
fn checksum_failing_last_record_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (last, end) = write_log(dir.path(), 100);
    let mut byte = [0u8];
    std::fs::File::open(&last)
        .unwrap()
        .read_exact_at(&mut byte, end - 5)
        .unwrap();
    write_bytes_at(&last, end - 5, &[byte[0] ^ 0xff]);
    reopen_and_check(dir.path(), 99, end - RECORD, &last);
}

#[test]
fn garbage_after_the_records_is_cut() {
    for garbage in [1usize, 5, 300, usize::MAX] {
        let dir = tempfile::tempdir().unwrap();
        let (last, end) = write_log(dir.path(), 100);
        let room = (SEGMENT - end) as usize;
        let tail: Vec<u8> = (0..garbage.min(room) as u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8 | 1)
            .collect();
        write_bytes_at(&last, end, &tail);
        reopen_and_check(dir.path(), 100, end, &last);
    }
}

#[test]
fn a_last_segment_of_version_1_ends_at_its_file_end() {
    // Version 1 segments were appended, not preallocated: zeros after the records are a torn
    // tail there and are cut, as they always were.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("CommitLog-{:020}.log", 7));
    let mut bytes = hand_built_segment(7, 1, &[b"one".as_slice(), b"", b"three"]);
    let end = bytes.len() as u64;
    bytes.extend_from_slice(&[0u8; 50]);
    std::fs::write(&path, &bytes).unwrap();
    let (log, replayed) = open(&real_fs(), dir.path(), config(SyncMode::Batch, SEGMENT));
    let payloads: Vec<&[u8]> = replayed.iter().map(|r| &r.payload[..]).collect();
    assert_eq!(payloads, [b"one".as_slice(), b"", b"three"]);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), end);
    assert!(log.current_position().segment_id > 7);
}
