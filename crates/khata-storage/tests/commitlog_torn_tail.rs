//! A torn tail (an incomplete or checksum-failing record at the end of the last segment,
//! followed by nothing valid) is cut off and replay succeeds with everything before it.

mod commitlog_common;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use commitlog_common::{config, open, payload, payload_id, real_fs, segment_files};
use khata_storage::commitlog::SyncMode;

/// Write `records` records into a fresh log in `dir`; return the last segment's path and length.
fn write_log(dir: &Path, records: u64) -> (std::path::PathBuf, u64) {
    let (log, _) = open(&real_fs(), dir, config(SyncMode::Batch, 4096));
    for id in 0..records {
        log.append(&payload(id, 100)).unwrap();
    }
    log.close().unwrap();
    let last = segment_files(dir).pop().unwrap();
    let len = std::fs::metadata(&last).unwrap().len();
    (last, len)
}

fn reopen_and_check(dir: &Path, expect_records: u64, expect_len: u64, torn: &Path) {
    let (log, replayed) = open(&real_fs(), dir, config(SyncMode::Batch, 4096));
    let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
    assert_eq!(ids, (0..expect_records).collect::<Vec<_>>());
    assert_eq!(
        std::fs::metadata(torn).unwrap().len(),
        expect_len,
        "the torn tail is truncated"
    );
    // The log is usable and the next open is clean.
    log.append(&payload(999, 1)).unwrap();
    drop(log);
    let (_log, replayed) = open(&real_fs(), dir, config(SyncMode::Batch, 4096));
    assert_eq!(replayed.len() as u64, expect_records + 1);
}

fn append_bytes(path: &Path, bytes: &[u8]) {
    OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

#[test]
fn partial_record_header_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (last, len) = write_log(dir.path(), 100);
    append_bytes(&last, &[0x10, 0, 0]);
    reopen_and_check(dir.path(), 100, len, &last);
}

#[test]
fn partial_payload_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (last, len) = write_log(dir.path(), 100);
    // Cut the last (complete) record short: it was being written when the crash came.
    let f = OpenOptions::new().write(true).open(&last).unwrap();
    f.set_len(len - 30).unwrap();
    let record_len = 8 + 108;
    reopen_and_check(dir.path(), 99, len - record_len, &last);
}

#[test]
fn checksum_failing_last_record_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (last, len) = write_log(dir.path(), 100);
    let mut bytes = std::fs::read(&last).unwrap();
    let n = bytes.len();
    bytes[n - 5] ^= 0xff;
    std::fs::write(&last, &bytes).unwrap();
    reopen_and_check(dir.path(), 99, len - (8 + 108), &last);
}

#[test]
fn zeros_and_garbage_at_the_end_are_cut() {
    for tail in [
        vec![0u8; 5000],
        (0..3000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
            .collect(),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (last, len) = write_log(dir.path(), 100);
        append_bytes(&last, &tail);
        reopen_and_check(dir.path(), 100, len, &last);
    }
}
