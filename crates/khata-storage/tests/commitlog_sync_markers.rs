//! Sync markers (commit-log format version 3): after a sync, the log notes in the segment how
//! far that sync reached, so replay can tell a hole a power cut left in the unsynced tail
//! (pages written back out of order: cut, with every record after it) from damage to bytes
//! that had been synced (corruption: the log refuses to open).
//!
//! The state a power cut leaves is made here by copying the last segment while the log is
//! open (the page cache holds every record), then writing the copy back over the closed log
//! with a stretch zeroed, as a page that never reached the disk.

mod commitlog_common;

use std::path::Path;
use std::time::Duration;

use commitlog_common::{
    config, hand_built_segment, open, payload, payload_id, real_fs, segment_files,
};
use khata_storage::StorageError;
use khata_storage::commitlog::{CommitLog, SyncMode};

const SEGMENT: u64 = 64 << 10;
const HEADER: usize = 24;
const RECORD: usize = 8 + 108;
const MARKER: usize = 8 + 8;
const NEVER: SyncMode = SyncMode::Periodic {
    period: Duration::from_secs(3600),
};

/// Where record `i` starts in the log [`write_log`] writes: records 0..50, the marker of the
/// sync after them, records 50..150.
fn record_at(i: usize) -> usize {
    HEADER + i * RECORD + if i >= 50 { MARKER } else { 0 }
}

/// 50 records, a sync, 100 more records; returns the segment and its bytes as the page cache
/// held them before close.
fn write_log(dir: &Path) -> (std::path::PathBuf, Vec<u8>) {
    let (log, _) = open(&real_fs(), dir, config(NEVER, SEGMENT));
    for id in 0..150u64 {
        if id == 50 {
            log.sync().unwrap();
        }
        log.append(&payload(id, 100)).unwrap();
    }
    let files = segment_files(dir);
    assert_eq!(files.len(), 1);
    let before_close = std::fs::read(&files[0]).unwrap();
    log.close().unwrap();
    (files[0].clone(), before_close)
}

/// The segment as a power cut could leave it: `bytes` with `hole` zeroed.
fn with_hole(path: &Path, mut bytes: Vec<u8>, hole: std::ops::Range<usize>) {
    bytes[hole].fill(0);
    std::fs::write(path, bytes).unwrap();
}

fn replayed_ids(dir: &Path) -> Vec<u64> {
    let (_log, replayed) = open(&real_fs(), dir, config(NEVER, SEGMENT));
    replayed.iter().map(|r| payload_id(&r.payload)).collect()
}

#[test]
fn the_log_holds_a_marker_after_the_sync() {
    let dir = tempfile::tempdir().unwrap();
    let (_, bytes) = write_log(dir.path());
    let at = record_at(50) - MARKER;
    assert_eq!(
        bytes[at..at + 4],
        (0x8000_0008u32).to_le_bytes(),
        "the marker's length field"
    );
    assert_eq!(
        bytes[at + 8..at + 16],
        (at as u64).to_le_bytes(),
        "it claims everything before it"
    );
    assert_eq!(replayed_ids(dir.path()), (0..150).collect::<Vec<_>>());
}

#[test]
fn a_hole_after_the_synced_bytes_is_cut_with_every_record_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes) = write_log(dir.path());
    // Part of record 100 never reached the disk; records 101..150 did.
    let at = record_at(100);
    with_hole(&path, bytes, at + 10..at + 40);
    assert_eq!(replayed_ids(dir.path()), (0..100).collect::<Vec<_>>());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), at as u64);
    // The log is usable and the next open is clean.
    let (log, _) = open(&real_fs(), dir.path(), config(NEVER, SEGMENT));
    log.append(&payload(999, 1)).unwrap();
    drop(log);
    assert_eq!(replayed_ids(dir.path()).len(), 101);
}

#[test]
fn a_hole_just_after_the_claim_is_still_unsynced() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes) = write_log(dir.path());
    // Record 50 starts right after the marker, whose claim ends before the marker itself.
    let at = record_at(50);
    with_hole(&path, bytes, at..at + 4);
    assert_eq!(replayed_ids(dir.path()), (0..50).collect::<Vec<_>>());
}

#[test]
fn damage_before_a_markers_claim_refuses_to_open() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes) = write_log(dir.path());
    let before = record_at(30);
    with_hole(&path, bytes.clone(), before + 20..before + 24);
    let err = CommitLog::open(real_fs(), dir.path(), config(NEVER, SEGMENT)).unwrap_err();
    match &err {
        StorageError::Corrupt {
            path: p,
            offset,
            detail,
        } => {
            assert_eq!(p, &path);
            assert_eq!(*offset, before as u64);
            let marker = record_at(50) - MARKER;
            assert!(
                detail.contains(&format!("sync marker at offset {marker}")),
                "{detail}"
            );
        }
        other => panic!("expected Corrupt, got {other}"),
    }
    assert_eq!(
        std::fs::read(&path).unwrap().len(),
        bytes.len(),
        "nothing is truncated"
    );
}

#[test]
fn an_idle_log_writes_one_marker_not_one_per_period() {
    let dir = tempfile::tempdir().unwrap();
    let period = SyncMode::Periodic {
        period: Duration::from_millis(10),
    };
    let (log, _) = open(&real_fs(), dir.path(), config(period, SEGMENT));
    log.append(&payload(1, 100)).unwrap();
    std::thread::sleep(Duration::from_millis(150));
    let path = segment_files(dir.path()).pop().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let end = HEADER + RECORD;
    assert_eq!(bytes[end..end + 4], (0x8000_0008u32).to_le_bytes());
    assert!(
        bytes[end + MARKER..].iter().all(|&b| b == 0),
        "nothing after the first marker"
    );
    assert_eq!(
        log.current_position().offset,
        end as u64,
        "a marker is no record"
    );
    drop(log);
}

/// A version 2 segment has no markers: a bad record followed by a valid one is refused as it
/// always was, a torn tail is cut.
#[test]
fn version_2_segments_keep_their_rule() {
    let records: Vec<Vec<u8>> = (0..5).map(|id| payload(id, 100)).collect();
    let records: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    // Version 2 segments are preallocated: zeros follow the records.
    let mut segment = hand_built_segment(3, 2, &records);
    segment.resize(4096, 0);
    let second = HEADER + RECORD;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("CommitLog-{:020}.log", 3));
    let mut holed = segment.clone();
    holed[second + 10..second + 20].fill(0);
    std::fs::write(&path, &holed).unwrap();
    let err = CommitLog::open(real_fs(), dir.path(), config(NEVER, 4096)).unwrap_err();
    assert!(
        matches!(err, StorageError::Corrupt { offset, .. } if offset == second as u64),
        "{err}"
    );

    let mut torn = segment;
    let last = HEADER + 4 * RECORD;
    torn[last + 10..last + 20].fill(0);
    std::fs::write(&path, &torn).unwrap();
    let (log, replayed) = open(&real_fs(), dir.path(), config(NEVER, 4096));
    let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
    assert_eq!(ids, [0, 1, 2, 3]);
    assert!(log.current_position().segment_id > 3);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any damage to a segment with markers (stretches overwritten with zeros or arbitrary
    /// bytes, markers included) opens to a prefix of what was written, or is refused as
    /// corrupt: never a panic, never records out of order or invented.
    #[test]
    fn damage_opens_to_a_prefix_or_is_refused(
        damage in proptest::collection::vec(
            (0usize..18_000, 1usize..300, proptest::option::of(proptest::prelude::any::<u8>())),
            1..4,
        ),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut bytes) = write_log(dir.path());
        for (at, len, byte) in damage {
            let end = (at + len).min(bytes.len());
            match byte {
                None => bytes[at..end].fill(0),
                Some(b) => bytes[at..end].iter_mut().enumerate().for_each(|(i, x)| {
                    *x = b.wrapping_add(i as u8);
                }),
            }
        }
        std::fs::write(&path, &bytes).unwrap();
        match CommitLog::open(real_fs(), dir.path(), config(NEVER, SEGMENT)) {
            Ok((_log, replayed)) => {
                let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
                proptest::prop_assert_eq!(ids.clone(), (0..ids.len() as u64).collect::<Vec<_>>());
            }
            Err(StorageError::Corrupt { .. }) => {}
            Err(other) => proptest::prop_assert!(false, "unexpected error {}", other),
        }
    }
}
